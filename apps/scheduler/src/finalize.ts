import type { FinishedRun, TrackedRun } from '@erg/db';
import { redactSecrets } from '@erg/secrets';
import type { SlurmJob } from '@erg/slurm';
import { isTerminalRunState } from '@erg/spec';
import type { ClusterLink } from './connections';
import type { SchedulerContext } from './context';
import { extractMetrics, jobWindow, parseIdleWindow, parseTiming } from './outputs';

/** Stored with the run, so logs stay readable after the cluster's work dir is cleaned. */
const STORED_TAIL_BYTES = 64 * 1024;
/** Metric regexes see at most this much of the output (its end, where final figures are). */
const METRIC_SCAN_BYTES = 16 * 1024 * 1024;

/**
 * Gathers everything a finished run leaves in its directory — the workload window and exit code
 * the job script recorded, stdout/stderr, metrics parsed from them — into the terminal update.
 * Missing files are normal (a job cancelled while queued never ran) and give nulls.
 */
export async function finalizeRun(ctx: SchedulerContext, link: ClusterLink, run: TrackedRun, job: SlurmJob): Promise<FinishedRun> {
  const spec = await ctx.specs.get(run.campaignId);
  const read = (name: string, maxBytes: number) =>
    run.runDir ? link.connection.readFile(`${run.runDir}/${name}`, { maxBytes, fromEnd: true }) : Promise.resolve(null);
  const wantsFullOutput = spec.metrics.length > 0;
  const [timingFile, idleFile, stdout, stderr] = await Promise.all([
    read('erg.timing', 4096),
    read('erg.idle', 4096),
    read('stdout.log', wantsFullOutput ? METRIC_SCAN_BYTES : STORED_TAIL_BYTES),
    read('stderr.log', wantsFullOutput ? METRIC_SCAN_BYTES : STORED_TAIL_BYTES),
  ]);
  const timing = parseTiming(timingFile?.text ?? null);
  const stdoutText = stdout?.text ?? '';
  const stderrText = stderr?.text ?? '';
  const state = job.runState && isTerminalRunState(job.runState) ? job.runState : 'failed';
  // The run's exit code is its workload's, as job.sh recorded it around run.sh. Slurm's is only the
  // fallback (a job killed before it wrote erg.timing): sacct has been seen reporting 0:0 for a
  // just-ended FAILED job before its accounting record was complete.
  const exitCode = timing.exitCode ?? job.exitCode;
  const { startedAt, endedAt } = jobWindow(job, timing, new Date());
  return {
    runId: run.id,
    state: state as FinishedRun['state'],
    slurmState: job.state,
    reason: describeEnd(state, exitCode, job),
    exitCode,
    signal: job.signal,
    startedAt,
    endedAt,
    nodeList: job.nodeList,
    workloadStartNs: timing.startNs,
    workloadEndNs: timing.endNs,
    ...parseIdleWindow(idleFile?.text ?? null),
    metrics: extractMetrics(spec.metrics, { stdout: stdoutText, stderr: stderrText }),
    stdoutTail: tail(stdoutText),
    stderrTail: tail(stderrText),
  };
}

/** The stored tail of a log, with secrets the job printed (tokens, keys, `password=…`) redacted. */
function tail(text: string): string {
  return redactSecrets(text.length > STORED_TAIL_BYTES ? text.slice(text.length - STORED_TAIL_BYTES) : text);
}

/** A sentence a researcher understands, with Slurm's own words where it gave any. */
function describeEnd(state: string, exitCode: number | null, job: SlurmJob): string | null {
  const slurmReason = job.reason && job.reason !== 'None' ? ` (Slurm: ${job.reason})` : '';
  switch (state) {
    case 'completed': return null;
    case 'failed': return `the job exited with code ${exitCode ?? 'unknown'}${job.signal ? ` after signal ${job.signal}` : ''}${slurmReason}`;
    case 'timeout': return `the job reached its time limit and was killed${slurmReason}`;
    case 'cancelled': return `the job was cancelled${slurmReason}`;
    case 'node_fail': return `a node of the job failed${slurmReason}`;
    case 'oom': return `the job ran out of memory${slurmReason}`;
    default: return slurmReason || null;
  }
}
