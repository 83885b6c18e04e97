// @erg/spec — the zod schemas every other package validates against, and the types they infer:
// the single source of erg's contracts (campaign spec, API bodies and responses, telemetry
// batches, run states, run-directory names).
//
// Glossary — the words every package, document and response uses in one sense:
//   campaign           one study: a workload, a parameter space, resources, repetitions, one cluster
//                      (or `execution: import` for measurements taken elsewhere).
//   configuration      one point of the parameter space: a value for every parameter.
//   configuration key  the configuration's stable name, built from its sorted parameter values
//                      (`offload=cpu,sp=2`); equal values give equal keys in every campaign.
//   run                one execution of one configuration: exactly one Slurm job (or array task).
//   repetition         a run's number among its configuration's runs, 1…repetitions.
//   attempt            one try to submit a run (`submitAttempts`): a run sent back to pending
//                      (controller unreachable, staging failed) is tried again as a new attempt;
//                      it is still one run.
//   suite              a named campaign template run on demand or on a cron schedule and judged
//                      against a baseline.
//   suite run          one triggering of a suite: its campaign and, once the runs ended, its verdict.
//   telemetry batch    what an agent sends at once: samples of one node of one run, numbered by
//                      `seq` (ingest is idempotent on run, node, seq).
//   sensor             one measured quantity on one node: `gpu0.power`, `module0.energy`, `cpu.util`.
//   window             the workload's time span `[start, end]`, measured by the job script around
//                      the user's command; energy and time are computed over it.
//   coverage           the share of the window that a figure's sensors have samples for (0–1;
//                      the minimum over the sensors used).
//   method             how a figure was obtained: `counter` (hardware energy counter), `integrated`
//                      (power integrated over time) or `model` (an estimate, not a measurement).
export * from './api';
export * from './bounds';
export * from './carbon-cost';
export * from './node-doctor';
export * from './results';
export * from './verdict';
export * from './suite';
export * from './host-policy';
export * from './dashboard';
export * from './audit';
export * from './marks';
export * from './phases';
export * from './data-movement';
export * from './design';
export { CampaignRunOrder, runOrderNote } from './run-order';
export * from './claims';
export * from './cooldown-plan';
export {
  CampaignSpec,
  CampaignSpecFields,
  type CampaignSpecInput,
  Execution,
  ParamAxis,
  ZipGroup,
  ExcludeEntry,
  FileName,
  FileTemplate,
  Telemetry,
  CLUSTER_NAME,
  FILE_NAME,
  RESERVED_FILE_NAMES,
  RESERVED_FILE_PREFIXES,
  MAX_FILE_BYTES,
  MAX_NAMES,
} from './campaign';
export {
  RUN_DIR_FILES, TELEMETRY_DIR_FILES, NODE_FILE_SUFFIXES, type NodeFile, runDirPath, nodeTelemetryFiles, spoolNode, runTokenFile, DEFAULT_RUN_UMASK, isRunUmask, maskedMode, umaskCommand,
  type WorkloadTiming, TIMED_WORKLOAD_LINES, parseTiming, idleBaselineLines, parseIdleWindow,
  COOLDOWN_WAIT_SLACK_S, cooldownPlanFile, cooldownWaitLines, type CooledFile, parseCooled,
  AGENT_READY_TIMEOUT_S, AGENT_STOP_TIMEOUT_S, type AgentLaunch, agentStartLines, agentStopLines,
  POWER_APPLY_TIMEOUT_S, POWER_NOT_APPLIED_EXIT_CODE, powerHelperArgs, powerRequestText, powerStartLines, powerStopLines, describePowerFailure,
  spoolLineHead, SPOOL_LINE_HEAD_BYTES, spoolLineSeq, ackedText, parseAcked, MAX_SPOOL_LINE_BYTES, type SpoolLine, readSpool,
} from './run-dir';
export {
  SpecIssue,
  ISSUE_CODES,
  type IssueCode,
  ROOT_PATH,
  formatPath,
  formatIssue,
  humanErrorMap,
  issuesFromZodError,
  parseWithIssues,
  type ParseResult,
} from './issues';
export { Metric, Metrics, MetricReduce, MAX_METRICS, metricRegexProblem } from './metrics';
export {
  compileUserRegex, estimateRegexProgram, MAX_REGEX_CHARS, MAX_REGEX_PROGRAM, MAX_SPEC_REGEX_PROGRAM, type CompiledUserRegex, type UserRegex,
} from './user-regex';
export { regexIssues } from './regex-checks';
export {
  IDENTIFIER,
  SAFE_VALUE,
  Identifier,
  ParamValue,
  isSafeValue,
  unsafeValueMessage,
  canonicalValue,
} from './param-value';
export {
  ERROR_CATALOG, type ErrorDefinition, type ErrorCode, type ResponseErrorCode, type ErrorStatus, errorDefinition, ErgError, type ErgErrorOptions,
} from './errors';
export { DOCUMENT_LIMITS, type DocumentLimits, documentIssue, nestsDeeperThan, RESERVED_KEYS, reservedKeyIssue } from './document';
export {
  MAX_REPORTED_ISSUES,
  parseCampaignSpec,
  parseCampaignText,
  decodeCampaignText,
  type ParseCampaignResult,
  type ParseCampaignTextResult,
  type DecodeResult,
  type SpecFormat,
} from './parse';
export { MAX_NODES_PER_RUN, nodesIssue, Resources, runNodes } from './resources';
export { RunState, UnfinishedRunState } from './run-state-schema';
export {
  RUN_STATES, TERMINAL_RUN_STATES, type TerminalRunState, isTerminalRunState, UNFINISHED_RUN_STATES, isUnfinishedRunState,
  RUN_STATES_HOLDING_A_SLOT, type SlotHoldingRunState, RUN_STATES_IN_SLURM_QUEUE, SLURM_PROGRESS_RUN_STATES, type SlurmProgressRunState,
  RUN_STATE_TRANSITIONS, isRunStateTransition,
} from './run-state';
export {
  SLURM_OPTION_FLAGS, SlurmOptions, type SlurmOptionKey, isTemplatedOption, slurmOptionValueIssue, expandSlurmOptions, slurmOptionIssues,
} from './slurm-options';
export { SlurmTime, SlurmTimeError, parseSlurmTime, isSlurmTime } from './slurm-time';
export {
  TEMPLATE_BUILTINS,
  type TemplateBuiltin,
  TemplateError,
  scanTemplate,
  templatePlaceholders,
  renderTemplate,
  type ScannedTemplate,
  type TemplatePlaceholder,
  type TemplateProblem,
  type TemplatePosition,
} from './template';
export {
  COMPONENTS, QUANTITIES, SENSOR_NAME, quantityOf, SensorSource, SensorDescription, MAX_BATCH_SAMPLES, TelemetryBatch, TelemetryBatchWire,
  normalizeBatch, type Quantity, type TelemetryBatchInput, type SeriesChunk, type NormalizedBatch,
  MAX_BATCH_SERIES, MAX_BATCH_SENSORS, MAX_BATCH_DEPTH, decodeTelemetryBatch, decodeTelemetryValue, type DecodedBatch,
  sampleTimeBounds, SAMPLE_CLOCK_SKEW_MS, IMPORT_EARLIEST_MS, type SampleTimeBounds,
  TelemetryAccepted, TelemetrySeries, RunTelemetry, NodeFingerprintSchema, PowerRecordSchema, PowerStateSchema,
} from './telemetry';
export {
  type GpuIdentity, type NodeFingerprint, FINGERPRINT_IDENTITY_FIELDS, fingerprintClass, canonicalJson, type PowerState, POWER_KNOBS, type PowerKnob,
  POWER_HELPER_OPTIONS, type GpuPowerSettings, type NodePowerSettings, type PowerRecord, parsePowerRecord, slurmVersionOf,
} from './node-info';
export { PowerBlock, POWER_RANGES, powerTemplates, expandPower, powerKnobsOf, powerSupport } from './power';
export {
  SENSOR_SOURCES, sensorName, componentOf, type Component, type Unit, type SampleColumn, type TelemetryBatchShape,
  DATA_MOVEMENT_QUANTITIES, type DataMovementQuantity, LINK_KINDS, TRANSFER_DIRECTIONS,
  CLOCK_EVENT_REASONS, type ClockEventReason, THROTTLING_REASONS, clockEventReasons, SENT_AT_HEADER, MAX_CLOCK_READING_MS, clockReading, MAX_WRAP_AT,
} from './sensors';
export * from './access';
export { LogPhase, LogPhases, PhaseTimeFormat, PHASE_TIME_FORMATS, MAX_LOG_PHASES, MAX_PHASE_REGEX_CHARS, PHASE_TIME_GROUP, PHASE_REGEX_FIELDS, type PhaseRegexField, phaseRegexProblem } from './log-phases';
export * from './strategy';
