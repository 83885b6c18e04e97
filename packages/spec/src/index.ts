// @erg/spec — the zod schemas every other package validates against, and the types they infer.
export * from './api';
export * from './suite';
export * from './dashboard';
export * from './audit';
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
  RUN_DIR_FILES, TELEMETRY_DIR_FILES, NODE_FILE_SUFFIXES, type NodeFile, runDirPath, nodeTelemetryFiles, spoolNode, runTokenFile,
  type WorkloadTiming, TIMED_WORKLOAD_LINES, parseTiming, idleBaselineLines, parseIdleWindow,
  AGENT_READY_TIMEOUT_S, AGENT_STOP_TIMEOUT_S, type AgentLaunch, agentStartLines, agentStopLines,
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
export { Metric, Metrics, MetricReduce, regexCaptureGroups } from './metrics';
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
export { DOCUMENT_LIMITS, type DocumentLimits, documentIssue, nestsDeeperThan } from './document';
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
export { Resources } from './resources';
export {
  RunState, TERMINAL_RUN_STATES, type TerminalRunState, isTerminalRunState, UNFINISHED_RUN_STATES, UnfinishedRunState,
  RUN_STATES_HOLDING_A_SLOT, type SlotHoldingRunState, SLURM_PROGRESS_RUN_STATES, type SlurmProgressRunState,
  RUN_STATE_TRANSITIONS, isRunStateTransition,
} from './run-state';
export { SLURM_OPTION_FLAGS, SlurmOptions, type SlurmOptionKey } from './slurm-options';
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
} from './telemetry';
export * from './access';
