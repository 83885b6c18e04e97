import {
  endCancelledUnstartedRuns, finishRun, listTrackedRuns, markRunsQueued, recordSlurmProgress, returnRunsToPending, type ClusterRecord, type SlurmProgress,
  type TrackedRun,
} from '@erg/db';
import { arraySubmissionFromJobName, slurmJobKey, type SlurmJob } from '@erg/slurm';
import { isTerminalRunState } from '@erg/spec';
import type { ClusterLink } from './connections';
import type { SchedulerContext } from './context';
import type { CycleLease } from './cycle-lease';
import { finalizeRun } from './finalize';
import { adaptCampaign } from '@erg/strategy';
import { offloadedSearchStep } from './search-offload';
import { isClusterError } from './ssh-errors';
import { mapLimit } from './submit';

/** sacct may lag slurmctld: a job squeue calls finished is finalized from squeue alone after this. */
const SACCT_GRACE_MS = 60_000;

/**
 * One poll of a cluster: ONE squeue and ONE sacct call whatever the number of runs, then every
 * tracked run is brought in line with what Slurm says:
 *  - in doubt (`submitting`, left by a crash or a sbatch without answer): job found by name →
 *    queued; not found by two reconciles in a row (absence-sightings.ts) → pending;
 *  - queued/running: progress recorded; ended → finalized (logs, timing, metrics fetched);
 *  - of a cancelled campaign and still alive in Slurm → scancel.
 */
export async function reconcileCluster(ctx: SchedulerContext, cluster: ClusterRecord, link: ClusterLink, lease: CycleLease): Promise<EndedRun[]> {
  const tracked = await listTrackedRuns(ctx.db, cluster.id);
  if (tracked.length === 0) return [];
  ctx.log.debug({ cluster: cluster.name, phase: 'tracking', runs: tracked.length }, 'cycle phase');
  const inDoubt = tracked.filter((r) => r.state === 'submitting');
  // Before asking Slurm about runs in doubt: after the raise, no sbatch loop of an earlier lease
  // (a killed scheduler's, still running on the login node) can create a job, so the answer is final.
  if (inDoubt.length > 0) await lease.ensureFenceRaised();
  const since = earliest(tracked);
  const askedAt = Date.now();
  const [live, accounted] = await Promise.all([link.slurm.squeue(), link.slurm.sacct(since)]);
  const jobs = indexJobs(live, accounted);

  const settled = await settleInDoubt(ctx, cluster, inDoubt, jobs, lease, { askedAt, answeredAt: Date.now() });
  const withJobs = tracked
    .filter((r) => r.state !== 'submitting')
    .concat(settled);

  const progress: SlurmProgress[] = [];
  const toFinalize: EndedRun[] = [];
  const toCancel: string[] = [];
  const vanished: string[] = [];
  for (const run of withJobs) {
    const job = run.slurmJobId ? jobs.byId.get(run.slurmJobId) : undefined;
    // A pending array task cancelled alone leaves Slurm without a trace: once scancelled (when
    // it was seen, in an earlier poll) and gone from both views, it has ended cancelled.
    if (!job && run.cancelRequested && run.state === 'queued' && run.slurmJobId?.includes('_')) vanished.push(run.id);
    if (!job || !job.runState) continue;
    if (isTerminalRunState(job.runState)) {
      const key = slurmJobKey(job);
      const fromAccounting = accounted.some((j) => slurmJobKey(j) === key && j.runState && isTerminalRunState(j.runState));
      const endedLongAgo = job.endTime !== null && Date.now() - job.endTime.getTime() > SACCT_GRACE_MS;
      if (fromAccounting || endedLongAgo) toFinalize.push({ run, job });
      continue;
    }
    // The run's own key (`123_4` for an array task): scancel of the job id would end the whole array.
    if (run.cancelRequested && run.slurmJobId) toCancel.push(run.slurmJobId);
    progress.push({
      runId: run.id,
      state: job.runState as SlurmProgress['state'],
      slurmState: job.state,
      reason: job.runState === 'queued' ? job.reason : null,
      startedAt: job.startTime,
      nodeList: job.nodeList,
    });
  }
  if (toCancel.length > 0) await link.slurm.scancel(toCancel);
  await recordSlurmProgress(ctx.db, progress);
  const ended = await endCancelledUnstartedRuns(ctx.db, vanished);
  if (ended.length > 0) ctx.metrics.runsFinished.inc({ cluster: cluster.name, state: 'cancelled' }, ended.length);
  return toFinalize;
}

/** A tracked run whose Slurm job has ended, with the job's record: what finalizeEndedRuns takes. */
export interface EndedRun {
  run: TrackedRun;
  job: SlurmJob;
}

/**
 * Finalizes ended runs (reads their files, folds metrics, pulls spools, stores the end). Each
 * run on its own: one that cannot be finalized now never holds up the others. The cycle calls it
 * after submitting, so reading a large log or a slow metric regex never delays other runs'
 * submission. Never throws: a run that fails here stays tracked for the next cycle.
 */
export async function finalizeEndedRuns(ctx: SchedulerContext, cluster: ClusterRecord, link: ClusterLink, ended: readonly EndedRun[]): Promise<void> {
  if (ended.length > 0) ctx.log.debug({ cluster: cluster.name, phase: 'finalizing', runs: ended.length }, 'cycle phase');
  await mapLimit(ended, 4, async ({ run, job }) => {
    const about = { runId: run.id, campaignId: run.campaignId, cluster: cluster.name, slurmJobId: job.jobId };
    try {
      const { finished, spooled } = await finalizeRun(ctx, link, run, job);
      if (spooled.batches > 0) ctx.log.info({ ...about, ...spooled }, 'ingested spooled telemetry');
      // false: another cycle finished it first (the precondition held no more); count it once.
      if (await finishRun(ctx.db, finished)) {
        // Its job left Slurm's queue: room under a site limit that held submissions back.
        ctx.submitLimits.ended(cluster.id);
        ctx.metrics.runsFinished.inc({ cluster: cluster.name, state: finished.state });
        ctx.log.info({ ...about, state: finished.state, exitCode: finished.exitCode, warnings: finished.warnings?.length ?? 0 }, 'run finished');
      }
      // In the energy worker: this thread goes on with the other runs and clusters meanwhile.
      await ctx.energy.refresh(run.id);
      // Its figures are in: an adaptive campaign decides what runs next (the next cycle submits them).
      const step = await adaptCampaign(ctx.db, run.campaignId, { searchStep: offloadedSearchStep(ctx.regexes) });
      if (step && (step.added > 0 || step.stop)) {
        ctx.log.info({ ...about, added: step.added, kind: step.kind, undecided: step.undecided, stop: step.stop?.reason ?? null }, 'campaign strategy step');
      }
    } catch (err) {
      // Infrastructure (SSH, the database): the run stays tracked and the next cycle tries again;
      // this says which run is stuck. What the job did to its files is not an error here: finalizeRun
      // turns it into the run's failure.
      const level = isClusterError(err) ? 'warn' : 'error';
      ctx.log[level]({ ...about, code: (err as { code?: string }).code, err: (err as Error).message }, 'finalizing run failed; will retry');
    }
  });
}

/**
 * Runs left in `submitting` are in doubt: sbatch may or may not have created their job. The fence
 * was raised before Slurm was asked, so no earlier lease's loop can still submit them; a job found
 * is final, an absence is final once a second reconcile confirms it (absence-sightings.ts). A run
 * staged into an array is looked up by the array's name (one sbatch made all of its tasks or
 * none) and takes task `arrayIndex` of it. The writes touch only runs of earlier leases (a newer
 * lease's claims are its own).
 */
async function settleInDoubt(
  ctx: SchedulerContext,
  cluster: ClusterRecord,
  inDoubt: TrackedRun[],
  jobs: JobIndex,
  lease: CycleLease,
  asked: { askedAt: number; answeredAt: number },
): Promise<TrackedRun[]> {
  if (inDoubt.length === 0) {
    ctx.absences.confirm(cluster.id, [], asked.askedAt, asked.answeredAt);
    return [];
  }
  const found: TrackedRun[] = [];
  const queued = [];
  const absent: string[] = [];
  for (const run of inDoubt) {
    const slurmJobId = run.arraySubmission !== null ? arrayTaskOf(ctx, cluster, run, jobs.byArray) : jobOf(ctx, cluster, run, jobs.byRun);
    if (slurmJobId === null) {
      absent.push(run.id);
      continue;
    }
    queued.push({ runId: run.id, slurmJobId });
    found.push({ ...run, state: 'queued', slurmJobId });
  }
  const confirmedAbsent = ctx.absences.confirm(cluster.id, absent, asked.askedAt, asked.answeredAt);
  const earlier = await lease.earlier();
  const marked = new Set(await markRunsQueued(ctx.db, queued, earlier));
  const returned = await returnRunsToPending(ctx.db, confirmedAbsent, 'an interrupted submission did not reach Slurm; submitting again', earlier);
  ctx.metrics.submissions.inc({ cluster: cluster.name, outcome: 'returned' }, returned.length);
  const waiting = absent.length - confirmedAbsent.length;
  if (marked.size + returned.length > 0) {
    ctx.log.warn({ cluster: cluster.name, found: marked.size, resubmit: returned.length, waiting }, 'settled runs in doubt');
  } else if (waiting > 0) {
    ctx.log.info({ cluster: cluster.name, waiting }, 'runs in doubt not in Slurm yet; asking again next poll before submitting them again');
  }
  return found.filter((r) => marked.has(r.id));
}

/** The job carrying the run's id in its name (the oldest, should there be more), or null. */
function jobOf(ctx: SchedulerContext, cluster: ClusterRecord, run: TrackedRun, byRun: Map<string, SlurmJob[]>): string | null {
  const candidates = (byRun.get(run.id) ?? []).sort((a, b) => Number(a.jobId) - Number(b.jobId));
  if (candidates.length > 1) {
    ctx.log.error({ runId: run.id, campaignId: run.campaignId, cluster: cluster.name, jobIds: candidates.map((j) => j.jobId) }, 'more than one Slurm job carries this run id');
  }
  return candidates[0]?.jobId ?? null;
}

/** `<array job id>_<arrayIndex>` of the array the run was staged into, or null when Slurm has no such array. */
function arrayTaskOf(ctx: SchedulerContext, cluster: ClusterRecord, run: TrackedRun, byArray: Map<string, string[]>): string | null {
  const arrays = (byArray.get(run.arraySubmission!) ?? []).sort((a, b) => Number(a) - Number(b));
  if (arrays.length > 1) {
    ctx.log.error({ runId: run.id, campaignId: run.campaignId, cluster: cluster.name, arrayJobIds: arrays }, 'more than one Slurm array carries this submission id');
  }
  return arrays[0] === undefined || run.arrayIndex === null ? null : `${arrays[0]}_${run.arrayIndex}`;
}

interface JobIndex {
  /** By slurmJobKey: the job id, or `<array job id>_<task>` for an array task (what runs store). */
  byId: Map<string, SlurmJob>;
  /** By the run id in the job name (`erg-<runId>`), for runs in doubt. */
  byRun: Map<string, SlurmJob[]>;
  /** Array job ids by the submission id in the array's name (`erg-a-<submission>`), for runs in doubt. */
  byArray: Map<string, string[]>;
}

/**
 * squeue's view is live, sacct's is durable: a job's record merges both. Tracked runs are
 * matched by job key (sacct can briefly report a just-ended job under another name); runs in
 * doubt, which have no job id yet, by the run id or array submission in the job name.
 */
function indexJobs(live: SlurmJob[], accounted: SlurmJob[]): JobIndex {
  const byId = new Map<string, SlurmJob>();
  for (const job of accounted) byId.set(slurmJobKey(job), job);
  for (const job of live) byId.set(slurmJobKey(job), mergeJob(job, byId.get(slurmJobKey(job))));
  const byRun = new Map<string, SlurmJob[]>();
  const byArray = new Map<string, string[]>();
  const add = (job: SlurmJob) => {
    const merged = byId.get(slurmJobKey(job))!;
    const submission = arraySubmissionFromJobName(job.name);
    if (submission !== null && job.arrayJobId !== null) {
      const ids = byArray.get(submission) ?? [];
      if (!ids.includes(job.arrayJobId)) ids.push(job.arrayJobId);
      byArray.set(submission, ids);
    }
    if (!job.runId) return;
    const list = byRun.get(job.runId) ?? [];
    if (!list.some((j) => j.jobId === merged.jobId)) list.push(merged);
    byRun.set(job.runId, list);
  };
  for (const job of live) add(job);
  for (const job of accounted) add(job);
  return { byId, byRun, byArray };
}

/** squeue knows the live state; sacct knows exit codes. Keep the best of each. */
function mergeJob(live: SlurmJob, accounted: SlurmJob | undefined): SlurmJob {
  if (!accounted) return live;
  // Once accounting says the job ended, its record (with exit code) is the complete one.
  if (accounted.runState && isTerminalRunState(accounted.runState)) return { ...accounted, name: live.name, runId: live.runId };
  return { ...accounted, ...live, exitCode: live.exitCode ?? accounted.exitCode, signal: live.signal ?? accounted.signal };
}

function earliest(runs: TrackedRun[]): Date {
  let min = Date.now();
  for (const r of runs) {
    for (const d of [r.claimedAt, r.submittedAt]) if (d && d.getTime() < min) min = d.getTime();
  }
  // Margin for clock skew between this host and the cluster.
  return new Date(min - 10 * 60_000);
}
