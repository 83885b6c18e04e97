import { storeJobMarks, type FinishedRun, type TrackedRun } from '@erg/db';
import { redactSecrets } from '@erg/secrets';
import { expandHostlist, readJobFile, type JobFileContent, type SlurmJob } from '@erg/slurm';
import { describePowerFailure, isTerminalRunState, parseCooled, parseIdleWindow, parseTiming, RUN_DIR_FILES, type CampaignSpec } from '@erg/spec';
import type { ClusterLink } from './connections';
import { runCooldownOf } from './cooldown';
import type { SchedulerContext } from './context';
import { describeOutside, type LogMarks } from './log-phases';
import { clusterLogSource, scanRunLogs, type LogSource } from './metric-scan';
import { jobWindow } from './outputs';
import { pullSpool, spoolSampleBounds } from './spool';

/** Stored with the run, so logs stay readable after the cluster's work dir is cleaned. */
const STORED_TAIL_BYTES = 64 * 1024;
/** erg.timing and erg.idle are a few short lines; anything longer is not theirs. */
const SMALL_FILE_BYTES = 4096;
/** erg.power-failed: one record per failing node; describePowerFailure reads the first few. */
const POWER_FAILED_BYTES = 16 * 1024;
/** erg.cooled: the wait and one record of a few hundred bytes per node; this holds well over a thousand nodes. */
const COOLED_BYTES = 1024 * 1024;

/** What finalizing found, for the log line: the terminal update, and what came from the telemetry spool. */
export interface Finalized {
  finished: FinishedRun;
  spooled: { batches: number; samples: number };
}

/**
 * Gathers everything a finished run leaves in its directory — the workload window and exit code
 * the job script recorded, its cooldown's wait and the nodes' records, stdout/stderr tails, metrics parsed from the logs, spooled telemetry —
 * into the terminal update; the marks its campaign's `phases` find in stdout.log are stored here,
 * as the run's marks, before the caller computes its energy. Missing files are normal (a job
 * cancelled while queued never ran) and give nulls. A file the job replaced with something erg
 * will not read (a FIFO, a directory, a symlink, a sparse file: see @erg/slurm job-files) fails
 * the run with that as its reason, and everything else is still gathered. Throws only for infrastructure failures (SSH, database): the
 * run then stays tracked and the next cycle tries again.
 */
export async function finalizeRun(ctx: SchedulerContext, link: ClusterLink, run: TrackedRun, job: SlurmJob): Promise<Finalized> {
  const spec = await ctx.specs.get(run.campaignId);
  const timeoutMs = ctx.config.ERG_RUN_FILE_TIMEOUT_MS;
  const readFrom = (from: 'start' | 'end') => (file: string, maxBytes: number): Promise<JobFileContent> =>
    run.runDir ? readJobFile(link.connection, { runDir: run.runDir, file, maxBytes, from, timeoutMs }) : Promise.resolve({ status: 'missing' });
  const read = readFrom('end');
  const readStart = readFrom('start');
  const none = Promise.resolve<JobFileContent>({ status: 'missing' });
  const [timingFile, idleFile, stdout, stderr, powerFailed, cooledFile] = await Promise.all([
    read(RUN_DIR_FILES.timing, SMALL_FILE_BYTES),
    read(RUN_DIR_FILES.idle, SMALL_FILE_BYTES),
    read(RUN_DIR_FILES.stdout, STORED_TAIL_BYTES),
    read(RUN_DIR_FILES.stderr, STORED_TAIL_BYTES),
    // Only a campaign with a power state can leave one; a few lines per node, read from its start.
    spec.power ? read(RUN_DIR_FILES.powerFailed, POWER_FAILED_BYTES) : none,
    // Only a campaign with a cooldown: the job's wait and every node's record, from its start.
    spec.cooldown ? readStart(RUN_DIR_FILES.cooled, COOLED_BYTES) : none,
  ]);
  // What the job did to its directory, in the order a reader expects: the run fails with these.
  const problems = [timingFile, idleFile, stdout, stderr, powerFailed, cooledFile].flatMap((f) => (f.status === 'refused' ? [f.error.message] : []));
  // The node helper could not set the power state: the workload never ran at the state asked for.
  const powerText = text(powerFailed);
  if (powerText !== null) problems.push(describePowerFailure(powerText));
  const warnings: string[] = [];

  let metrics: Record<string, number | null> = Object.fromEntries(spec.metrics.map((m) => [m.name, null]));
  const phases = spec.phases ?? [];
  let logMarks: LogMarks | null = null;
  if ((spec.metrics.length > 0 || phases.length > 0) && run.runDir) {
    const log = (file: string, tail: JobFileContent): LogSource =>
      // A log refused for its tail is not asked for again.
      tail.status === 'refused' ? { name: file, open: () => Promise.reject(tail.error) } : clusterLogSource(link.connection, run.runDir!, file, timeoutMs);
    const logs = { stdout: log(RUN_DIR_FILES.stdout, stdout), stderr: log(RUN_DIR_FILES.stderr, stderr) };
    const scan = await scanRunLogs({ metrics: spec.metrics, phases }, logs, ctx.regexes, {
      scanBytes: ctx.config.ERG_METRIC_SCAN_BYTES,
      regexBudgetMs: ctx.config.ERG_METRIC_REGEX_BUDGET_MS,
    });
    metrics = scan.metrics;
    logMarks = scan.marks;
    warnings.push(...scan.warnings);
    for (const refusal of scan.refused) if (!problems.includes(refusal.message)) problems.push(refusal.message);
  }

  const timing = parseTiming(text(timingFile));
  const { startedAt, endedAt } = jobWindow(job, timing, new Date());
  // Spooled samples are held to the window the API applies once this end is stored.
  const spool = await pullSpool(ctx, link, run, endedAt);
  problems.push(...spool.problems);
  warnings.push(...spool.warnings);
  // After the spool: the marks go to every node the telemetry came from, the spooled ones included.
  if (logMarks && logMarks.count > 0) warnings.push(...(await storeLogMarks(ctx, run, phases, logMarks, endedAt)));

  // The wait before the idle baseline and the workload: the job's own window and every node's record.
  const cooledText = text(cooledFile);
  const jobNodes = job.nodeList ? (expandHostlist(job.nodeList)?.length ?? null) : null;
  const cooled = runCooldownOf(cooledText === null ? null : parseCooled(cooledText), jobNodes || null);
  warnings.push(...cooled.warnings);

  const ended = job.runState && isTerminalRunState(job.runState) ? job.runState : 'failed';
  const state = problems.length > 0 ? 'failed' : ended;
  // The run's exit code is its workload's, as job.sh recorded it around run.sh. Slurm's is only the
  // fallback (a job killed before it wrote erg.timing): sacct has been seen reporting 0:0 for a
  // just-ended FAILED job before its accounting record was complete.
  const exitCode = timing.exitCode ?? job.exitCode;
  const howItEnded = describeEnd(ended, exitCode, job);
  return {
    finished: {
      runId: run.id,
      state: state as FinishedRun['state'],
      slurmState: job.state,
      reason: problems.length > 0 ? [...problems, ...(howItEnded ? [howItEnded] : [])].join('; ') : howItEnded,
      exitCode,
      signal: job.signal,
      startedAt,
      endedAt,
      nodeList: job.nodeList,
      slurmEnergyJ: job.consumedEnergyJ ?? null,
      workloadStartNs: timing.startNs,
      workloadEndNs: timing.endNs,
      ...parseIdleWindow(text(idleFile)),
      cooldown: cooled.cooldown,
      metrics,
      stdoutTail: redactSecrets(text(stdout) ?? ''),
      stderrTail: redactSecrets(text(stderr) ?? ''),
      warnings,
    },
    spooled: { batches: spool.batches, samples: spool.samples },
  };
}

/**
 * Stores the marks read from stdout.log as marks of every node of the run, those within the times
 * its samples may carry; returns the warnings to store with the run.
 */
async function storeLogMarks(
  ctx: SchedulerContext, run: TrackedRun, phases: NonNullable<CampaignSpec['phases']>, marks: LogMarks, endedAt: Date,
): Promise<string[]> {
  const bounds = spoolSampleBounds(run, endedAt);
  const warnings = describeOutside(phases, marks.outside(bounds), RUN_DIR_FILES.stdout);
  // Under the run's cap on distinct names, as the agents' marks are (the run warns when names are left out).
  const { nodes, stored } = await storeJobMarks(ctx.db, run.id, marks.marksWithin(phases, bounds), ctx.config.ERG_MAX_PHASE_NAMES);
  if (nodes.length === 0) {
    warnings.push(`the phase marks found in ${RUN_DIR_FILES.stdout} were not stored: the run has no telemetry, so no node to attach them to`);
  }
  ctx.log.info({ runId: run.id, found: marks.count, nodes: nodes.length, stored }, 'stored phase marks from the log');
  return warnings;
}

function text(file: JobFileContent): string | null {
  return file.status === 'read' ? file.text : null;
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
