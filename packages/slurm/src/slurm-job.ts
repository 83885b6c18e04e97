import type { SlurmRunState } from './run-state';

/**
 * One Slurm job as squeue or sacct reports it. Fields a source does not report are null (squeue
 * has no exit code; sacct has no pending reason for finished jobs).
 */
export interface SlurmJob {
  /** Unique job id: for array tasks the task's own id (sacct JobIDRaw / squeue %A). */
  jobId: string;
  /** Display id: `<array job>_<task>` for array tasks, else the job id. */
  displayId: string;
  /** Array job id and task index, null for jobs that are not array tasks. */
  arrayJobId: string | null;
  arrayTaskId: string | null;
  name: string;
  /** The erg run id parsed from a job name `erg-<runId>`, else null (not an erg job). */
  runId: string | null;
  /** Slurm's state word, normalised (`CANCELLED by 0` → `CANCELLED`). */
  state: string;
  /** erg run state for `state`, null when erg does not know the state. */
  runState: SlurmRunState | null;
  /** Pending reason (squeue %r, sacct Reason); null when Slurm says `None`. */
  reason: string | null;
  /** Exit code of the batch script; null while running or when unknown. */
  exitCode: number | null;
  /** Signal that ended the batch script (ExitCode `code:signal`), 0 when none, null when unknown. */
  signal: number | null;
  submitTime: Date | null;
  startTime: Date | null;
  endTime: Date | null;
  /** Elapsed wall time in seconds (sacct only). */
  elapsedS: number | null;
  /** Compressed Slurm node list (`node[01-04]`), null when no node is allocated yet. */
  nodeList: string | null;
  /** Slurm's own energy accounting of the job, J (sacct ConsumedEnergyRaw); null when Slurm measured none (sacct only). */
  consumedEnergyJ?: number | null;
}

/** Every job erg submits is named `erg-<runId>`: a restarted scheduler finds its jobs by name. */
export const JOB_NAME_PREFIX = 'erg-';

/** The Slurm job name of a run. */
export function jobNameForRun(runId: string): string {
  return `${JOB_NAME_PREFIX}${runId}`;
}

/** Array jobs (array.ts) are named `erg-a-<submission id>`; a run id (a UUID) never starts with `a-`. */
export const ARRAY_JOB_NAME_PREFIX = `${JOB_NAME_PREFIX}a-`;

/** The Slurm job name of an array submission. */
export function arrayJobName(submissionId: string): string {
  return `${ARRAY_JOB_NAME_PREFIX}${submissionId}`;
}

/** The array submission id a job name carries, or null when the job is not one of erg's arrays. */
export function arraySubmissionFromJobName(name: string): string | null {
  if (!name.startsWith(ARRAY_JOB_NAME_PREFIX) || name.length === ARRAY_JOB_NAME_PREFIX.length) return null;
  return name.slice(ARRAY_JOB_NAME_PREFIX.length);
}

/** The run id a job name carries, or null when the job is not erg's (or is an array: its tasks' runs are known by index). */
export function runIdFromJobName(name: string): string | null {
  if (!name.startsWith(JOB_NAME_PREFIX) || name.length === JOB_NAME_PREFIX.length) return null;
  if (arraySubmissionFromJobName(name) !== null) return null;
  return name.slice(JOB_NAME_PREFIX.length);
}

/**
 * How erg names the job of one run: the job id, or `<array job id>_<task>` for an array task —
 * what runs store as their slurm job id, and what scancel takes to cancel that task alone. A
 * task's own job id (squeue %A) is no key: the pending rest of an array shares the array's id.
 */
export function slurmJobKey(job: Pick<SlurmJob, 'jobId' | 'arrayJobId' | 'arrayTaskId'>): string {
  return job.arrayJobId !== null && job.arrayTaskId !== null ? `${job.arrayJobId}_${job.arrayTaskId}` : job.jobId;
}
