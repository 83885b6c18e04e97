/**
 * Parsers for the output of the commands built in commands.ts (the sbatch loop's is in
 * submit-loop.ts, beside the loop). Pure: text in, typed values out; anything that does not have
 * the requested shape raises SlurmParseError rather than being guessed at, because a silently
 * misread state could submit a run twice or lose one.
 */
import { FIELD_SEPARATOR, SACCT_FIELDS, SQUEUE_FIELDS } from './commands';
import { SlurmParseError } from './errors';
import { mapSlurmState, normalizeSlurmState, type SlurmRunState } from './run-state';
import { expandArrayTasks } from './array';
import { arraySubmissionFromJobName, runIdFromJobName, type SlurmJob } from './slurm-job';

/** A job id as `sbatch --parsable` prints it. */
export interface SbatchResult {
  jobId: string;
  /** Set when the cluster is part of a multi-cluster setup (`123;cluster`). */
  cluster: string | null;
}

const SBATCH_PARSABLE = /^([0-9]+)(?:;([A-Za-z0-9._-]+))?$/;

/** `sbatch --parsable` output (`123` or `123;cluster`) → job id. */
export function parseSbatchParsable(stdout: string): SbatchResult {
  const trimmed = stdout.trim();
  const match = SBATCH_PARSABLE.exec(trimmed);
  if (!match?.[1]) throw new SlurmParseError('sbatch --parsable', stdout, 'expected "<jobid>" or "<jobid>;<cluster>"');
  return { jobId: match[1], cluster: match[2] ?? null };
}

/** Slurm's words for "no value" in time, reason and node fields. */
const NO_VALUE = new Set(['', 'N/A', 'NONE', 'UNKNOWN', 'NONE ASSIGNED', '(NULL)']);

function isNoValue(s: string): boolean {
  return NO_VALUE.has(s.trim().toUpperCase());
}

const SLURM_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})$/;

/** `2026-11-30T03:00:00` (UTC, see commands.ts) → Date; `Unknown`/`None`/`N/A` → null. */
export function parseSlurmTimestamp(value: string, what = 'time'): Date | null {
  if (isNoValue(value)) return null;
  const m = SLURM_TIME.exec(value.trim());
  if (!m) throw new SlurmParseError(what, value, 'expected YYYY-MM-DDTHH:MM:SS');
  const [, y, mo, d, h, mi, s] = m.map(Number) as [number, number, number, number, number, number, number];
  return new Date(Date.UTC(y, mo - 1, d, h, mi, s));
}

/** sacct `ExitCode` (`code:signal`) → numbers. */
export function parseExitCode(value: string): { exitCode: number | null; signal: number | null } {
  if (isNoValue(value)) return { exitCode: null, signal: null };
  const m = /^(\d+):(\d+)$/.exec(value.trim());
  if (!m) throw new SlurmParseError('sacct ExitCode', value, 'expected <code>:<signal>');
  return { exitCode: Number(m[1]), signal: Number(m[2]) };
}

function splitFields(line: string, count: number, what: string): string[] {
  // The job name is the last field and the only free text: it may itself contain the separator,
  // so split off the first count-1 fields and keep the rest whole.
  const parts = line.split(FIELD_SEPARATOR);
  if (parts.length < count) {
    throw new SlurmParseError(what, line, `expected ${count} '${FIELD_SEPARATOR}'-separated fields, got ${parts.length}`);
  }
  return [...parts.slice(0, count - 1), parts.slice(count - 1).join(FIELD_SEPARATOR)];
}

function isEnded(runState: SlurmRunState | null): boolean {
  return runState !== null && runState !== 'queued' && runState !== 'running' && runState !== 'completing';
}

function lines(stdout: string): string[] {
  return stdout.split('\n').filter((l) => l.trim() !== '');
}

function orNull(value: string): string | null {
  return isNoValue(value) ? null : value.trim();
}

/** Array job id and task index from a display id such as `123_4`; null parts for plain jobs. */
function arrayParts(displayId: string): { arrayJobId: string | null; arrayTaskId: string | null } {
  const m = /^(\d+)_(\S+)$/.exec(displayId);
  return m?.[1] && m[2] ? { arrayJobId: m[1], arrayTaskId: m[2] } : { arrayJobId: null, arrayTaskId: null };
}

/**
 * The pending rest of an array is one line (`123_[4-9%2]`); erg's own arrays (named `erg-a-…`)
 * become one job per task, so that each run finds its task (`123_4`) whatever Slurm has split off
 * yet. Other arrays stay one line: their ranges may be large and nobody asks for their tasks.
 */
function perTask(job: SlurmJob): SlurmJob[] {
  if (job.arrayTaskId === null || /^\d+$/.test(job.arrayTaskId) || arraySubmissionFromJobName(job.name) === null) return [job];
  const tasks = expandArrayTasks(job.arrayTaskId);
  if (tasks === null) throw new SlurmParseError('array task list', job.displayId, 'expected ranges such as 0-9, 1,3,5-7 or 0-99%4');
  return tasks.map((t) => ({ ...job, displayId: `${job.arrayJobId}_${t}`, arrayTaskId: String(t) }));
}

/** Output of `squeueCommand()` → jobs (erg's pending array ranges one per task). */
export function parseSqueue(stdout: string): SlurmJob[] {
  return lines(stdout).flatMap((line) => perTask(parseSqueueLine(line)));
}

function parseSqueueLine(line: string): SlurmJob {
  const f = splitFields(line, SQUEUE_FIELDS.length, 'squeue');
  const [jobId, displayId, , taskList, stateRaw, reason, submit, start, end, nodeList, name] = f as [
    string, string, string, string, string, string, string, string, string, string, string,
  ];
  if (!/^\d+$/.test(jobId)) throw new SlurmParseError('squeue', line, `job id ${JSON.stringify(jobId)} is not a number`);
  const state = normalizeSlurmState(stateRaw);
  const runState = mapSlurmState(state);
  // For a pending job squeue's %S/%e are the backfill scheduler's estimates, not facts; erg's
  // SlurmJob times are observations, so estimates are dropped. A job cancelled while pending
  // gets start = end = cancel time but never had nodes: it did not start either.
  const nodes = orNull(nodeList);
  const started = runState !== 'queued' && nodes !== null;
  const array = arrayParts(displayId);
  return {
    jobId,
    displayId,
    ...array,
    // %K is the task list itself (`4-9%2`); %i's copy of it is cut at 31 characters on 22.05.
    ...(array.arrayTaskId !== null && !isNoValue(taskList) ? { arrayTaskId: taskList.trim() } : {}),
    name,
    runId: runIdFromJobName(name),
    state,
    runState,
    reason: orNull(reason),
    exitCode: null,
    signal: null,
    submitTime: parseSlurmTimestamp(submit, 'squeue submit time'),
    startTime: started ? parseSlurmTimestamp(start, 'squeue start time') : null,
    // For a live job %e is the time limit's expiry; only an ended job's end time is a fact.
    endTime: isEnded(runState) ? parseSlurmTimestamp(end, 'squeue end time') : null,
    elapsedS: null,
    nodeList: nodes,
  };
}

/**
 * sacct ConsumedEnergyRaw (J) → a figure, or null where Slurm measured nothing: empty without an
 * acct_gather_energy plugin, and 0 where a plugin reads nothing for these nodes (acct_gather_energy/gpu
 * on NVIDIA GPUs) — a 0 there is "no figure", never "0 J".
 */
function consumedEnergy(raw: string): number | null {
  const text = raw.trim();
  if (!/^\d+(\.\d+)?$/.test(text)) return null;
  const j = Number(text);
  return j > 0 && Number.isFinite(j) ? j : null;
}

/** Output of `sacctCommand()` → jobs (erg's pending array ranges one per task). */
export function parseSacct(stdout: string): SlurmJob[] {
  return lines(stdout).flatMap((line) => perTask(parseSacctLine(line)));
}

function parseSacctLine(line: string): SlurmJob {
  const f = splitFields(line, SACCT_FIELDS.length, 'sacct');
  const [jobId, displayId, stateRaw, exitCodeRaw, reason, submit, start, end, elapsedRaw, nodeList, energyRaw, name] = f as [
    string, string, string, string, string, string, string, string, string, string, string, string,
  ];
  if (!/^\d+$/.test(jobId)) throw new SlurmParseError('sacct', line, `JobIDRaw ${JSON.stringify(jobId)} is not a number`);
  const state = normalizeSlurmState(stateRaw);
  const runState = mapSlurmState(state);
  // sacct prints 0:0 for jobs that have not ended; only a finished job has an exit code.
  const { exitCode, signal } = isEnded(runState) ? parseExitCode(exitCodeRaw) : { exitCode: null, signal: null };
  // sacct reports start = end for a job cancelled while pending ("None assigned" nodes): it never started.
  const nodes = orNull(nodeList);
  return {
    jobId,
    displayId,
    ...arrayParts(displayId),
    name,
    runId: runIdFromJobName(name),
    state,
    runState,
    reason: orNull(reason),
    exitCode,
    signal,
    submitTime: parseSlurmTimestamp(submit, 'sacct Submit'),
    startTime: nodes === null ? null : parseSlurmTimestamp(start, 'sacct Start'),
    endTime: parseSlurmTimestamp(end, 'sacct End'),
    elapsedS: /^\d+$/.test(elapsedRaw.trim()) ? Number(elapsedRaw.trim()) : null,
    nodeList: nodes,
    consumedEnergyJ: consumedEnergy(energyRaw),
  };
}
