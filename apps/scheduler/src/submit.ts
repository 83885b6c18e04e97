import {
  cancelPendingRunsOnCluster, claimRunsForSubmission, failRunsAtSubmission, markRunsQueued, recordStagedRuns, returnRunsToPending, type ClaimedRun, type ClusterRecord,
} from '@erg/db';
import { issueRunTokens } from '@erg/db';
import { redactSecrets } from '@erg/secrets';
import { renderRunFiles, type RenderedFile, type SubmitResult } from '@erg/slurm';
import { RUN_DIR_FILES, runDirPath, runTokenFile } from '@erg/spec';
import { agentHook } from './agent-hook';
import { powerHook } from './power-hook';
import type { ClusterLink } from './connections';
import type { SchedulerContext } from './context';
import { LeaseLostError, type CycleLease } from './cycle-lease';
import { isNothingRanError } from './ssh-errors';

interface Prepared {
  run: ClaimedRun;
  runDir: string;
  files: RenderedFile[];
  jobScript: string;
}

async function renderRun(ctx: SchedulerContext, cluster: ClusterRecord, run: ClaimedRun, agentPath: string | null, token: string): Promise<Prepared> {
  const spec = await ctx.specs.get(run.campaignId);
  const runDir = runDirPath(cluster.workDir, run.campaignId, run.id);
  const power = powerHook(cluster, spec, run.configurationKey, run.parameters);
  const files = renderRunFiles({
    ...(agentPath ? { agent: agentHook(cluster, spec, agentPath) } : {}),
    ...(power ? { power } : {}),
    runId: run.id,
    campaignId: run.campaignId,
    repetition: run.repetition,
    configKey: run.configurationKey,
    parameters: run.parameters,
    spec,
    runDir,
    defaultPartition: cluster.defaultPartition ?? undefined,
  });
  const jobScript = files.find((f) => f.name === RUN_DIR_FILES.jobScript)!.content;
  // The run's telemetry token, readable by the job's user only; never part of the stored script.
  files.push(runTokenFile(token));
  return { run, runDir, files, jobScript };
}

/**
 * Submits every pending run of the cluster, batch by batch:
 *   claim (pending → submitting) → render → stage over SFTP → sbatch loop → queued | failed.
 * The run's job is named after the run, so a crash anywhere after the claim leaves runs in
 * `submitting` that the next cycle settles by asking Slurm before anything is sent again. Claims
 * carry the lease's epoch and the sbatch loop runs behind the fence raised to it (cycle-lease.ts).
 */
export async function submitPendingRuns(ctx: SchedulerContext, cluster: ClusterRecord, link: ClusterLink, lease: CycleLease): Promise<number> {
  // A cancel the API answered but did not finish (it ends large campaigns' pending runs after
  // answering, and may stop first) is finished here; the claim never takes those runs anyway.
  const cancelled = await cancelPendingRunsOnCluster(ctx.db, cluster.id);
  if (cancelled > 0) ctx.log.info({ cluster: cluster.name, runs: cancelled }, 'cancelled pending runs of cancelled campaigns');
  let submitted = 0;
  for (;;) {
    if (lease.lost) throw new LeaseLostError(cluster.name, 'its database connection was lost');
    const claimed = await claimRunsForSubmission(ctx.db, cluster.id, ctx.config.ERG_SUBMIT_BATCH, await lease.epoch());
    if (claimed.length === 0) return submitted;
    ctx.log.debug({ cluster: cluster.name, phase: 'claim', runs: claimed.length }, 'cycle phase');
    submitted += await submitBatch(ctx, cluster, link, lease, claimed);
    if (claimed.length < ctx.config.ERG_SUBMIT_BATCH) return submitted;
  }
}

async function submitBatch(ctx: SchedulerContext, cluster: ClusterRecord, link: ClusterLink, lease: CycleLease, claimed: ClaimedRun[]): Promise<number> {
  const own = await lease.own();
  const prepared: Prepared[] = [];
  const unrenderable: { runId: string; reason: string }[] = [];
  let agentPath: string | null = null;
  try {
    ctx.log.debug({ cluster: cluster.name, phase: 'staging', runs: claimed.length }, 'cycle phase');
    agentPath = ctx.agent ? await ctx.agent.ensureStaged(cluster, link) : null;
  } catch (err) {
    await returnRunsToPending(ctx.db, claimed.map((r) => r.id), `staging the telemetry agent failed: ${(err as Error).message}`, own);
    ctx.metrics.submissions.inc({ cluster: cluster.name, outcome: 'returned' }, claimed.length);
    throw err;
  }
  const tokens = await issueRunTokens(ctx.db, claimed.map((r) => r.id));
  for (const run of claimed) {
    try {
      prepared.push(await renderRun(ctx, cluster, run, agentPath, tokens.get(run.id)!));
    } catch (err) {
      // Validation on the way in makes this unreachable for stored specs, but for a power state
      // the cluster cannot set (its helper went away since the campaign was accepted): the run
      // fails visibly, with the reason, instead of blocking the queue or running at another state.
      unrenderable.push({ runId: run.id, reason: `could not render the job: ${(err as Error).message}` });
      ctx.log.error({ runId: run.id, campaignId: run.campaignId, cluster: cluster.name, err: (err as Error).message }, 'run could not be rendered; failed');
    }
  }
  await failRunsAtSubmission(ctx.db, unrenderable, own);
  ctx.metrics.submissions.inc({ cluster: cluster.name, outcome: 'refused' }, unrenderable.length);

  try {
    await mapLimit(prepared, 16, (p) => link.connection.writeFiles(p.runDir, p.files));
    // Raised once per cycle, before its first sbatch: the loop below submits only while the fence holds this epoch.
    await lease.ensureFenceRaised();
  } catch (err) {
    // Nothing was submitted yet: returning the whole batch to pending cannot duplicate a job.
    await returnRunsToPending(ctx.db, prepared.map((p) => p.run.id), `staging files failed: ${(err as Error).message}`, own);
    ctx.metrics.submissions.inc({ cluster: cluster.name, outcome: 'returned' }, prepared.length);
    throw err;
  }
  // The cluster got the exact script; the stored copy (shown by GET /v1/runs/:id) has secrets a template put in it redacted.
  await recordStagedRuns(ctx.db, prepared.map((p) => ({ runId: p.run.id, runDir: p.runDir, jobScript: redactSecrets(p.jobScript) })), own);
  if (ctx.config.ERG_FAULT === 'exit-after-staging') process.exit(137);

  const byPath = new Map(prepared.map((p) => [`${p.runDir}/${RUN_DIR_FILES.jobScript}`, p]));
  const chunks = chunk([...byPath.keys()], Math.ceil(byPath.size / ctx.config.ERG_SUBMIT_LOOPS));
  const fence = lease.fence(own.epoch);
  ctx.log.debug({ cluster: cluster.name, phase: 'sbatch', runs: byPath.size }, 'cycle phase');
  const settled = await Promise.allSettled(chunks.map((paths) => link.slurm.submitMany(paths, fence)));
  if (ctx.config.ERG_FAULT === 'exit-after-sbatch') process.exit(137);
  ctx.log.debug({ cluster: cluster.name, phase: 'recording', runs: byPath.size }, 'cycle phase');

  const results: SubmitResult[] = [];
  let firstError: unknown = null;
  for (const [i, s] of settled.entries()) {
    if (s.status === 'fulfilled') results.push(...s.value);
    else {
      firstError ??= s.reason;
      if (isNothingRanError(s.reason)) {
        const ids = chunks[i]!.map((p) => byPath.get(p)!.run.id);
        await returnRunsToPending(ctx.db, ids, `could not reach the cluster: ${(s.reason as Error).message}`, own);
        ctx.metrics.submissions.inc({ cluster: cluster.name, outcome: 'returned' }, ids.length);
      }
      // Otherwise the loop may have run partly: those runs stay `submitting` (in doubt) until the
      // next cycle finds their jobs by name.
    }
  }

  const queued = [];
  const refused = [];
  const retry = [];
  let inDoubt = 0;
  let fencedAt: string | null = null;
  for (const r of results) {
    const p = byPath.get(r.path)!;
    const about = { runId: p.run.id, campaignId: p.run.campaignId, cluster: cluster.name };
    switch (r.status) {
      case 'ok':
        queued.push({ runId: p.run.id, slurmJobId: r.jobId });
        ctx.log.info({ ...about, slurmJobId: r.jobId }, 'run submitted');
        break;
      case 'unsent':
        retry.push(p.run.id);
        ctx.log.info({ ...about, err: r.error }, 'sbatch deferred the run; back to pending');
        break;
      case 'err':
        refused.push({ runId: p.run.id, reason: `sbatch refused the job: ${r.error}` });
        ctx.log.warn({ ...about, err: r.error }, 'sbatch refused the run; failed');
        break;
      // Left in doubt on purpose (still `submitting`): the next reconcile, a newer lease's when
      // fenced, asks Slurm for the job by name before anything is sent again.
      case 'unknown':
        inDoubt++;
        ctx.log.info({ ...about, err: r.error }, 'sbatch lost its answer; the run is in doubt until Slurm is asked');
        break;
      case 'fenced':
        inDoubt++;
        fencedAt ??= r.fenceEpoch;
        break;
    }
  }
  await markRunsQueued(ctx.db, queued, own);
  await failRunsAtSubmission(ctx.db, refused, own);
  await returnRunsToPending(ctx.db, retry, 'Slurm controller busy or unreachable; will retry', own);
  ctx.metrics.submissions.inc({ cluster: cluster.name, outcome: 'queued' }, queued.length);
  ctx.metrics.submissions.inc({ cluster: cluster.name, outcome: 'refused' }, refused.length);
  ctx.metrics.submissions.inc({ cluster: cluster.name, outcome: 'returned' }, retry.length);
  ctx.log[inDoubt > 0 ? 'warn' : 'info']({ cluster: cluster.name, queued: queued.length, refused: refused.length, retry: retry.length, inDoubt }, 'submitted batch');
  if (fencedAt !== null) throw new LeaseLostError(cluster.name, `the sbatch loop found the fence at epoch ${fencedAt || '(none)'}, not ${own.epoch}`);
  if (firstError) throw firstError;
  return queued.length;
}

function chunk<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += Math.max(1, size)) out.push(items.slice(i, i + Math.max(1, size)));
  return out;
}

/** Runs `fn` over `items` with at most `limit` in flight; rejects with the first failure. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  });
  await Promise.all(workers);
  return results;
}
