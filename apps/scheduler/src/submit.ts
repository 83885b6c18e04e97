import { randomUUID } from 'node:crypto';
import {
  cancelPendingRunsOnCluster, claimRunsForSubmission, recordClusterContact, failRunsAtSubmission, markRunsQueued, recordStagedRuns, returnRunsToPending, type ClaimedRun, type ClusterRecord,
} from '@erg/db';
import { issueRunTokens, listIdleReferences } from '@erg/db';
import { redactSecrets } from '@erg/secrets';
import {
  ARRAY_FILES, arrayDirPath, renderArrayJob, renderRunFiles, resourceDirectiveLines, type RenderedFile, type StageEntry, type SubmitResult,
} from '@erg/slurm';
import { RUN_DIR_FILES, runDirPath, runTokenFile, type CampaignSpec, type IdleReference } from '@erg/spec';
import { nodeForRun } from '@erg/sweep';
import { agentHook } from './agent-hook';
import { cooldownFile } from './cooldown';
import type { StagedAgent } from './agent-bundle';
import { powerHook } from './power-hook';
import type { ClusterLink } from './connections';
import type { SchedulerContext } from './context';
import { LeaseLostError, type CycleLease } from './cycle-lease';
import { isClusterError, isNothingRanError } from './ssh-errors';

export interface Prepared {
  run: ClaimedRun;
  runDir: string;
  files: RenderedFile[];
  jobScript: string;
  /** The run's resource `#SBATCH` lines: runs of a campaign with the same ones can share an array. */
  resourceLines: string[];
  /** The node the run is pinned to (the design's node balance); null: Slurm chooses. */
  node: string | null;
}

/** The node a run is pinned to by the spec's node balance (design.nodes, a Latin square); null: Slurm chooses. */
export function pinnedNode(spec: Pick<CampaignSpec, 'design'>, run: Pick<ClaimedRun, 'configurationPosition' | 'repetition'>): string | null {
  const { nodes } = spec.design;
  return nodes ? nodeForRun(nodes, run.configurationPosition, run.repetition) : null;
}

async function renderRun(
  ctx: SchedulerContext, cluster: ClusterRecord, run: ClaimedRun, agent: StagedAgent | null, token: string, idleReferences: readonly IdleReference[],
): Promise<Prepared> {
  const spec = await ctx.specs.get(run.campaignId);
  const runDir = runDirPath(cluster.workDir, run.campaignId, run.id);
  const power = powerHook(cluster, spec, run.configurationKey, run.parameters);
  const defaultPartition = cluster.defaultPartition ?? undefined;
  const node = pinnedNode(spec, run) ?? undefined;
  const files = renderRunFiles({
    ...(agent ? { agent: agentHook(cluster, spec, agent, { maxPhaseNames: ctx.config.ERG_MAX_PHASE_NAMES }) } : {}),
    ...(power ? { power } : {}),
    runId: run.id,
    campaignId: run.campaignId,
    repetition: run.repetition,
    configKey: run.configurationKey,
    parameters: run.parameters,
    spec,
    runDir,
    defaultPartition,
    ...(node !== undefined ? { node } : {}),
    umask: ctx.config.ERG_RUN_UMASK,
  });
  const jobScript = String(files.find((f) => f.name === RUN_DIR_FILES.jobScript)!.content);
  // The run's telemetry token, readable by the job's user only; never part of the stored script.
  files.push(runTokenFile(token));
  // The cooldown's plan, which the agents read (there is none to wait for without agents).
  const cooldown = agent ? cooldownFile(spec, idleReferences) : null;
  if (cooldown) files.push(cooldown);
  const resourceLines = resourceDirectiveLines({ spec, parameters: run.parameters, defaultPartition, ...(node !== undefined ? { node } : {}) });
  return { run, runDir, files, jobScript, resourceLines, node: node ?? null };
}

/** Whether a run of the batch waits for a cooldown; a stored spec that cannot be read fails its run when it is rendered, not here. */
async function anyCooldown(ctx: SchedulerContext, claimed: readonly ClaimedRun[]): Promise<boolean> {
  for (const campaignId of new Set(claimed.map((r) => r.campaignId))) {
    const spec = await ctx.specs.get(campaignId).catch(() => null);
    if (spec?.cooldown) return true;
  }
  return false;
}

/**
 * What one sbatch submits: a run as a job of its own, or several runs of one campaign that ask
 * for the same resources as one array job (array.ts), task i being `members[i]`.
 */
type Submission =
  | { kind: 'job'; scriptPath: string; members: [Prepared] }
  | { kind: 'array'; scriptPath: string; submissionId: string; arrayDir: string; members: Prepared[] };

/**
 * Groups a batch into submissions, keeping the campaigns' run order (the batch comes in claim
 * order: each campaign's runs by position). Runs of one campaign with the same resource lines go
 * into arrays of at most `maxArraySize` tasks (the cluster's MaxArraySize, from its probe), task
 * order being run order — but an array only takes runs that follow each other among the runs that
 * may compete for its nodes: once a run with other lines comes (a templated sbatch option such as
 * gpuFreq), the open array is closed, or its later tasks would run before that run. Runs pinned to
 * different nodes (node balance) never compete, so each node's array stays open. A run alone in its
 * group, or every run on a cluster whose arrays are unknown or off, is a job. Submissions come out
 * in the order of their first runs.
 */
export function planSubmissions(workDir: string, prepared: readonly Prepared[], maxArraySize: number | null | undefined): Submission[] {
  const single = (p: Prepared): Submission => ({ kind: 'job', scriptPath: `${p.runDir}/${RUN_DIR_FILES.jobScript}`, members: [p] });
  if (!maxArraySize || maxArraySize < 2) return prepared.map(single);
  const groups: Prepared[][] = [];
  // The group each (campaign, resource lines) may still add to.
  const open = new Map<string, Prepared[]>();
  for (const p of prepared) {
    const key = `${p.run.campaignId}\n${p.resourceLines.join('\n')}`;
    for (const [k, group] of open) {
      if (k !== key && group[0]!.run.campaignId === p.run.campaignId && mayCompete(group[0]!, p)) open.delete(k);
    }
    const group = open.get(key);
    if (group && group.length < maxArraySize) group.push(p);
    else {
      const started = [p];
      groups.push(started);
      open.set(key, started);
    }
  }
  return groups.map((members) => {
    if (members.length === 1) return single(members[0]!);
    const submissionId = randomUUID();
    const arrayDir = arrayDirPath(workDir, members[0]!.run.campaignId, submissionId);
    return { kind: 'array', scriptPath: `${arrayDir}/${ARRAY_FILES.script}`, submissionId, arrayDir, members };
  });
}

/** Two runs may wait for the same node unless each is pinned to a node of its own. */
function mayCompete(a: Prepared, b: Prepared): boolean {
  return a.node === null || b.node === null || a.node === b.node;
}

/**
 * The batch's sbatch loops (at most `loops`, each one SSH channel, run in parallel): every
 * submission of a campaign in the same loop, in plan order, so that Slurm numbers — and, at equal
 * priority, starts — a campaign's jobs in its run order; campaigns spread over the loops, each to
 * the one with the fewest submissions so far.
 */
export function sbatchLoops(submissions: readonly Pick<Submission, 'scriptPath' | 'members'>[], loops: number): string[][] {
  const byCampaign = new Map<string, string[]>();
  for (const s of submissions) {
    const campaignId = s.members[0]!.run.campaignId;
    const paths = byCampaign.get(campaignId);
    if (paths) paths.push(s.scriptPath);
    else byCampaign.set(campaignId, [s.scriptPath]);
  }
  const out: string[][] = Array.from({ length: Math.max(1, Math.min(loops, byCampaign.size)) }, () => []);
  for (const paths of byCampaign.values()) {
    const shortest = out.reduce((best, loop) => (loop.length < best.length ? loop : best));
    shortest.push(...paths);
  }
  return out.filter((loop) => loop.length > 0);
}

/**
 * Every file of the batch as one archive's entries, relative to the work dir: the run directories
 * of jobs of their own, and for each array its three files, its runs' files in its bundle (array.ts).
 */
async function stageEntries(workDir: string, submissions: readonly Submission[], umask: number): Promise<StageEntry[]> {
  const relative = (dir: string) => {
    if (!dir.startsWith(`${workDir}/`)) throw new Error(`${dir} is not under the cluster's work dir ${workDir}`);
    return dir.slice(workDir.length + 1);
  };
  const filesOf = (p: Prepared): StageEntry[] => p.files.map((f) => ({ ...f, name: `${relative(p.runDir)}/${f.name}` }));
  const entries: StageEntry[] = [];
  for (const s of submissions) {
    if (s.kind === 'job') {
      entries.push(...filesOf(s.members[0]));
      continue;
    }
    const array = await renderArrayJob({
      submissionId: s.submissionId,
      campaignId: s.members[0]!.run.campaignId,
      workDir,
      arrayDir: s.arrayDir,
      runDirs: s.members.map((p) => p.runDir),
      runFiles: s.members.flatMap(filesOf),
      resourceLines: s.members[0]!.resourceLines,
      umask,
    });
    for (const e of array) entries.push({ ...e, name: `${relative(s.arrayDir)}/${e.name}` });
  }
  return entries;
}

/** The job key of each member once sbatch answered `jobId`: the job id, or `<array job>_<task>`. */
function memberJobIds(s: Submission, jobId: string): { runId: string; slurmJobId: string }[] {
  return s.kind === 'job'
    ? [{ runId: s.members[0].run.id, slurmJobId: jobId }]
    : s.members.map((p, i) => ({ runId: p.run.id, slurmJobId: `${jobId}_${i}` }));
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
    // A site limit refused jobs lately: wait, then send fewer at a time (submit-limits.ts).
    if (ctx.submitLimits.heldBack(cluster.id) !== null) return submitted;
    const batch = Math.min(ctx.config.ERG_SUBMIT_BATCH, ctx.submitLimits.allowance(cluster.id));
    const claimed = await claimRunsForSubmission(ctx.db, cluster.id, batch, await lease.epoch());
    if (claimed.length === 0) return submitted;
    ctx.log.debug({ cluster: cluster.name, phase: 'claim', runs: claimed.length }, 'cycle phase');
    submitted += await submitBatch(ctx, cluster, link, lease, claimed);
    if (claimed.length < batch) return submitted;
  }
}

/**
 * Gives claimed runs back to pending after the cluster failed them before any sbatch. The
 * cluster's error is recorded first: whoever reads a run's reason ("could not reach cluster X")
 * then finds X's lastError set too, not null until the cycle records it (the cycle's own record
 * after this is the same message). The runs' reason (and their event) says only what failed, not
 * why: the why — connection refused, timed out, host key, address not allowed — is the cluster's
 * lastError, which the API shows to the project's maintainers alone (it tells open, closed and
 * filtered ports apart), and which a waiting run's reason shows in its place.
 */
async function giveBackAfterClusterError(
  ctx: SchedulerContext, cluster: ClusterRecord, runIds: string[], what: string, err: unknown, own: Awaited<ReturnType<CycleLease['own']>>,
): Promise<void> {
  if (isClusterError(err)) await recordClusterContact(ctx.db, cluster.id, err.message);
  const reason = isClusterError(err) ? `${what}; why is the cluster's lastError (erg clusters show ${cluster.name}), which its maintainers see` : `${what}: ${(err as Error).message}`;
  await returnRunsToPending(ctx.db, runIds, reason, own);
}

async function submitBatch(ctx: SchedulerContext, cluster: ClusterRecord, link: ClusterLink, lease: CycleLease, claimed: ClaimedRun[]): Promise<number> {
  const own = await lease.own();
  const prepared: Prepared[] = [];
  const unrenderable: { runId: string; reason: string }[] = [];
  let agent: StagedAgent | null = null;
  try {
    ctx.log.debug({ cluster: cluster.name, phase: 'staging', runs: claimed.length }, 'cycle phase');
    agent = ctx.agent ? await ctx.agent.ensureStaged(cluster, link) : null;
  } catch (err) {
    await giveBackAfterClusterError(ctx, cluster, claimed.map((r) => r.id), `staging the telemetry agent on cluster "${cluster.name}" failed`, err, own);
    ctx.metrics.submissions.inc({ cluster: cluster.name, outcome: 'returned' }, claimed.length);
    throw err;
  }
  const tokens = await issueRunTokens(ctx.db, claimed.map((r) => r.id));
  // Read once per batch, and only when a run of it waits for a cooldown; outside the renders'
  // try, like the tokens: a database that fails here fails no run (the next cycle settles them).
  const references = agent && (await anyCooldown(ctx, claimed)) ? await listIdleReferences(ctx.db, cluster.id) : [];
  for (const run of claimed) {
    try {
      prepared.push(await renderRun(ctx, cluster, run, agent, tokens.get(run.id)!, references));
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

  const submissions = planSubmissions(cluster.workDir, prepared, ctx.config.ERG_SUBMIT_ARRAYS === 'on' ? cluster.capabilities?.maxArraySize : null);
  try {
    // One archive, one command: the whole batch's run directories and array dispatchers (stage.ts).
    await link.slurm.stage(cluster.workDir, await stageEntries(cluster.workDir, submissions, ctx.config.ERG_RUN_UMASK));
    // Raised once per cycle, before its first sbatch: the loop below submits only while the fence holds this epoch.
    await lease.ensureFenceRaised();
  } catch (err) {
    // Nothing was submitted yet: returning the whole batch to pending cannot duplicate a job.
    await giveBackAfterClusterError(ctx, cluster, prepared.map((p) => p.run.id), `staging files on cluster "${cluster.name}" failed`, err, own);
    ctx.metrics.submissions.inc({ cluster: cluster.name, outcome: 'returned' }, prepared.length);
    throw err;
  }
  // The cluster got the exact script; the stored copy (shown by GET /v1/runs/:id) has secrets a
  // template put in it redacted. Array members are recorded with their array before any sbatch.
  await recordStagedRuns(
    ctx.db,
    submissions.flatMap((s) =>
      s.members.map((p, index) => ({
        runId: p.run.id,
        runDir: p.runDir,
        jobScript: redactSecrets(p.jobScript),
        ...(s.kind === 'array' ? { array: { submissionId: s.submissionId, index } } : {}),
      })),
    ),
    own,
  );
  if (ctx.config.ERG_FAULT === 'exit-after-staging') process.exit(137);

  const byPath = new Map(submissions.map((s) => [s.scriptPath, s]));
  const chunks = sbatchLoops(submissions, ctx.config.ERG_SUBMIT_LOOPS);
  const fence = lease.fence(own.epoch);
  ctx.log.debug({ cluster: cluster.name, phase: 'sbatch', runs: prepared.length, submissions: byPath.size }, 'cycle phase');
  const settled = await Promise.allSettled(chunks.map((paths) => link.slurm.submitMany(paths, fence)));
  if (ctx.config.ERG_FAULT === 'exit-after-sbatch') process.exit(137);
  ctx.log.debug({ cluster: cluster.name, phase: 'recording', runs: prepared.length }, 'cycle phase');

  const results: SubmitResult[] = [];
  let firstError: unknown = null;
  for (const [i, s] of settled.entries()) {
    if (s.status === 'fulfilled') results.push(...s.value);
    else {
      firstError ??= s.reason;
      if (isNothingRanError(s.reason)) {
        const ids = chunks[i]!.flatMap((p) => byPath.get(p)!.members.map((m) => m.run.id));
        await giveBackAfterClusterError(ctx, cluster, ids, `could not reach cluster "${cluster.name}"`, s.reason, own);
        ctx.metrics.submissions.inc({ cluster: cluster.name, outcome: 'returned' }, ids.length);
      }
      // Otherwise the loop may have run partly: those runs stay `submitting` (in doubt) until the
      // next cycle finds their jobs by name.
    }
  }

  const queued: { runId: string; slurmJobId: string }[] = [];
  const refused: { runId: string; reason: string }[] = [];
  const retry: string[] = [];
  const limited: string[] = [];
  let limitError: string | null = null;
  let inDoubt = 0;
  let fencedAt: string | null = null;
  for (const r of results) {
    const s = byPath.get(r.path)!;
    const ids = s.members.map((p) => p.run.id);
    const about = {
      runIds: ids.length > 1 ? ids.length : undefined,
      runId: ids.length === 1 ? ids[0] : undefined,
      campaignId: s.members[0]!.run.campaignId,
      cluster: cluster.name,
      ...(s.kind === 'array' ? { arraySubmission: s.submissionId } : {}),
    };
    switch (r.status) {
      case 'ok':
        queued.push(...memberJobIds(s, r.jobId));
        ctx.submitLimits.accepted(cluster.id);
        ctx.log.info({ ...about, slurmJobId: r.jobId }, s.kind === 'array' ? 'array submitted' : 'run submitted');
        break;
      case 'unsent':
        retry.push(...ids);
        ctx.log.info({ ...about, err: r.error }, 'sbatch deferred the submission; back to pending');
        break;
      case 'limited':
        limited.push(...ids);
        limitError ??= r.error;
        ctx.submitLimits.refused(cluster.id, ids.length, r.error);
        ctx.log.info({ ...about, err: r.error }, 'a site limit refused the submission; back to pending, fewer at a time');
        break;
      case 'err':
        refused.push(...ids.map((runId) => ({ runId, reason: `sbatch refused the job: ${r.error}` })));
        ctx.log.warn({ ...about, err: r.error }, 'sbatch refused the submission; failed');
        break;
      // Left in doubt on purpose (still `submitting`): the next reconcile, a newer lease's when
      // fenced, asks Slurm for the job (or array) by name before anything is sent again.
      case 'unknown':
        inDoubt += ids.length;
        ctx.log.info({ ...about, err: r.error }, 'sbatch lost its answer; the runs are in doubt until Slurm is asked');
        break;
      case 'fenced':
        inDoubt += ids.length;
        fencedAt ??= r.fenceEpoch;
        break;
    }
  }
  await markRunsQueued(ctx.db, queued, own);
  await failRunsAtSubmission(ctx.db, refused, own);
  await returnRunsToPending(ctx.db, retry, 'Slurm controller busy or unreachable; will retry', own);
  if (limitError !== null) await returnRunsToPending(ctx.db, limited, siteLimitReason(limitError), own);
  ctx.metrics.submissions.inc({ cluster: cluster.name, outcome: 'queued' }, queued.length);
  ctx.metrics.submissions.inc({ cluster: cluster.name, outcome: 'refused' }, refused.length);
  ctx.metrics.submissions.inc({ cluster: cluster.name, outcome: 'returned' }, retry.length + limited.length);
  ctx.log[inDoubt > 0 ? 'warn' : 'info'](
    { cluster: cluster.name, queued: queued.length, refused: refused.length, retry: retry.length, limited: limited.length, inDoubt },
    'submitted batch',
  );
  if (fencedAt !== null) throw new LeaseLostError(cluster.name, `the sbatch loop found the fence at epoch ${fencedAt || '(none)'}, not ${own.epoch}`);
  if (firstError) throw firstError;
  return queued.length;
}

/** A waiting run's reason after a site limit refused it: Slurm's own words, and what erg does next. */
export function siteLimitReason(error: string): string {
  const words = /(QOS|Assoc)\w*Limit/.exec(error)?.[0];
  const said = error.replace(/\s+/g, ' ').replace(/^sbatch: error: /, '').trim().slice(0, 300);
  return `waiting: the site's Slurm limit${words ? ` ${words}` : ''} refused more jobs (${said}); erg submits more, fewer at a time, as earlier jobs end`;
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
