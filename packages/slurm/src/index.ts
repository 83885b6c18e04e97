/**
 * @erg/slurm — everything erg says to a Slurm cluster: rendering run files (pure), building and
 * parsing sbatch/squeue/sacct/scancel commands (pure), and the SSH transport (one shared
 * connection per cluster, exec + SFTP, under sshd's MaxSessions), and reading the files a job
 * controls without trusting them (job-files.ts).
 */
export * from './errors';
export { shellQuote } from './shell';
export { expandHostlist, MAX_HOSTLIST_NAMES } from './hostlist';
export { classifySbatchFailure, CONTROLLER_NOT_ANSWERING, type SbatchFailure } from './sbatch-failure';
export { checkPrivateKey, type PrivateKeyCheck } from './private-key';
export {
  parseCertificate,
  certificateKeyProblem,
  certificateStatus,
  certificateExpired,
  warningLeadMs,
  CERTIFICATE_TYPES,
  DEFAULT_CERTIFICATE_WARNING,
  MAX_CERTIFICATE_CHARS,
  type SshCertificate,
  type CertificateParse,
  type CertificateStatus,
  type CertificateType,
  type CertificateWarningPolicy,
} from './certificate';
export {
  renderRunFiles,
  renderJobScript,
  renderRunScript,
  resourceDirectiveLines,
  DIRECTIVE_VALUE,
  type RenderedFile,
  type RenderInput,
  type RunSpec,
  type AgentHook,
  type PowerHook,
} from './render';
export { mapSlurmState, normalizeSlurmState, type SlurmRunState } from './run-state';
export {
  JOB_NAME_PREFIX,
  ARRAY_JOB_NAME_PREFIX,
  jobNameForRun,
  runIdFromJobName,
  arrayJobName,
  arraySubmissionFromJobName,
  slurmJobKey,
  type SlurmJob,
} from './slurm-job';
export { renderArrayJob, arrayDirPath, expandArrayTasks, ARRAY_FILES, type ArrayJobInput } from './array';
export { stageArchive, stageCommand, type StageEntry } from './stage';
export {
  squeueCommand,
  sacctCommand,
  scancelCommand,
  slurmUtcTimestamp,
  SQUEUE_FIELDS,
  SACCT_FIELDS,
  SACCT_STATES,
  FIELD_SEPARATOR,
} from './commands';
export { submitManyCommand, parseSubmitMany, type SubmitManyCommand, type SubmitResult } from './submit-loop';
export {
  parseSbatchParsable,
  parseSqueue,
  parseSacct,
  parseSlurmTimestamp,
  parseExitCode,
  type SbatchResult,
} from './parse';
export { hostKeyFingerprint, fingerprintsEqual } from './host-key';
export { Semaphore } from './semaphore';
export { ClusterConnection } from './cluster-connection';
export {
  SSH_RECONNECT_BACKOFF,
  type ClusterConnectionOptions,
  type ClusterEndpointOptions,
  type JumpHostOptions,
  type ConnectionState,
  type ChannelStats,
} from './connection-options';
export type { ExecOptions, ExecResult } from './collected-command';
export type { ExecStream, ExecStreamOptions, ExecExit } from './streamed-command';
export type { ReadFileOptions, ReadFileResult } from './sftp-channel';
export { SlurmClient, type CommandRunner, type SlurmClientOptions } from './slurm-client';
export { raiseFenceCommand, parseRaiseFence, FENCE_BUSY_EXIT, FENCE_BROKEN_EXIT, type Fence, type FenceRaise } from './fence';
export { ConnectionPool, type ClusterEndpoint, type JumpHostEndpoint } from './connection-pool';
export {
  openJobFile,
  readJobFile,
  jobFileCommand,
  formatSize,
  SPARSE_MIN_BYTES,
  SPARSE_RATIO,
  type JobFile,
  type JobFileContent,
  type JobFileRequest,
  type JobFileWindow,
  type StreamRunner,
} from './job-files';
export { probeCommand, parseProbe, type ClusterProbe, type RuntimeProbe } from './probe';
