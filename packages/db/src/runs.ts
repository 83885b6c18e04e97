import type pg from 'pg';
import {
  isRunStateTransition, RUN_STATES_HOLDING_A_SLOT, RUN_STATES_IN_SLURM_QUEUE, SLURM_PROGRESS_RUN_STATES, TERMINAL_RUN_STATES, UNFINISHED_RUN_STATES,
  type RunCooldown, type SlurmProgressRunState, type TerminalRunState,
} from '@erg/spec';
import { poolOf, withTransaction, type Database } from './client';
import { markEnergyDueAfterFinish } from './energy-records';
import { stateListSql } from './state-sql';

/**
 * Run state transitions. Each exported function is one transition, one SQL statement (the claim:
 * one transaction, for the reason its comment gives), with its precondition in the WHERE clause:
 * a transition that no longer applies (the run moved on meanwhile) changes nothing. Every change
 * appends a row to run_events in the same statement. Reads of runs are in run-reads.ts.
 */

type Queryable = Pick<pg.Pool, 'query'>;

const TERMINAL_SQL = stateListSql(TERMINAL_RUN_STATES);
const SLOT_HOLDING_SQL = stateListSql(RUN_STATES_HOLDING_A_SLOT);
const IN_SLURM_QUEUE_SQL = stateListSql(RUN_STATES_IN_SLURM_QUEUE);

/**
 * Runs `UPDATE runs SET <set> WHERE <where>` and records each changed run's old and new state.
 * `where` must restrict to the rows to change; `from` may join a VALUES/unnest list as `v`.
 */
async function transition(
  db: Queryable,
  opts: { set: string; where: string; from?: string; params: unknown[]; detail: string },
): Promise<string[]> {
  const from = opts.from ? `, ${opts.from}` : '';
  const result = await db.query<{ run_id: string }>(
    `WITH old AS (
       SELECT runs.id, runs.state FROM runs${from} WHERE ${opts.where} FOR UPDATE OF runs
     ), upd AS (
       UPDATE runs SET ${opts.set}, updated_at = now()
       FROM old${from} WHERE runs.id = old.id AND ${opts.where}
       RETURNING runs.id, old.state AS from_state, runs.state AS to_state, (${opts.detail})::text AS detail
     )
     INSERT INTO run_events (run_id, "from", "to", detail)
     SELECT id, from_state, to_state, detail FROM upd
     RETURNING run_id`,
    opts.params,
  );
  return result.rows.map((r) => r.run_id);
}

/**
 * Which claims a transition out of `submitting` may touch (see cluster-lease.ts): a cycle's own
 * claims (`this-lease`: the run carries the lease's epoch) or, when settling runs left in doubt,
 * those of earlier leases (`earlier-lease`: an older or no epoch). A cycle that lost its lease to
 * a newer one thus cannot undo what the newer one decided. No guard: any claim (tools, tests).
 */
export interface ClaimGuard {
  epoch: bigint;
  claimedBy: 'this-lease' | 'earlier-lease';
}

/** The guard's condition on `runs.submit_epoch`, its epoch bound as parameter `$n`; TRUE without a guard. */
function claimGuardSql(guard: ClaimGuard | undefined, n: number): string {
  if (!guard) return 'TRUE';
  return guard.claimedBy === 'this-lease' ? `runs.submit_epoch = $${n}::bigint` : `(runs.submit_epoch IS NULL OR runs.submit_epoch < $${n}::bigint)`;
}

function guardParams(guard: ClaimGuard | undefined): unknown[] {
  return guard ? [guard.epoch.toString()] : [];
}

export interface ClaimedRun {
  id: string;
  campaignId: string;
  configurationKey: string;
  parameters: Record<string, string | number | boolean>;
  repetition: number;
  /** Its place in the campaign's run order: claims and submissions go by it. */
  position: number;
  /** Its configuration's position in the campaign's listed configurations (node balance pins by it). */
  configurationPosition: number;
}

/** The pending reason of a run held back by a concurrency limit. */
export function concurrencyLimitReason(kind: 'cluster' | 'project', name: string, limit: number): string {
  return `waiting: ${kind} "${name}" is at its limit of ${limit} concurrent runs`;
}

/**
 * The pending reason of a run whose cluster or project is deactivated: held, not cancelled, so
 * that reactivating it resumes the work (cancelling the campaign ends it).
 */
export function deactivatedReason(kind: 'cluster' | 'project', name: string): string {
  return `held: ${kind} "${name}" is deactivated; its runs wait until it is reactivated (or cancel the campaign)`;
}

/** Projects that are deactivated, as a condition on campaign `c`. */
const IN_DEACTIVATED_PROJECT = (c: string) => `EXISTS (SELECT 1 FROM projects dp WHERE dp.id = ${c}.project_id AND dp.deactivated_at IS NOT NULL)`;

/** The pending reason of a run held back by its cluster's `maxQueuedJobs`. */
export function queuedJobsLimitReason(name: string, limit: number): string {
  return `waiting: cluster "${name}" has ${limit} Slurm jobs of erg queued or running, its maxQueuedJobs`;
}

/**
 * pending → submitting, for up to `limit` runs of one cluster, oldest campaign first, and never
 * more than the cluster's and each project's `max_concurrent_runs` minus the runs they already
 * have active, nor more than the cluster's `max_queued_jobs` minus its runs with a job in Slurm's
 * queue. SKIP LOCKED lets two schedulers claim disjoint runs; a cancelled campaign's runs
 * are never claimed. Pending runs a limit holds back get it as their reason. With an epoch, the
 * claimed runs carry it, and a lease whose epoch is no longer the cluster's newest claims nothing.
 *
 * The claim is one transaction, and it must be: the limits need counting the active runs and
 * claiming to be one atomic step. The cluster row and the limited projects' rows are locked first
 * (FOR NO KEY UPDATE: claims of the same cluster or project wait for each other; campaign
 * inserts, which only take KEY SHARE, do not), and the locks hold until COMMIT, so no other claim
 * of the cluster or those projects can slip between the count and the claim. It cannot be one
 * statement: under READ COMMITTED a statement sees the snapshot taken when it began, before the
 * locks it waits for were granted, so a count in the locking statement would miss the runs the
 * previous lock holder claimed and committed meanwhile. Each later statement takes a fresh
 * snapshot and counts them. Locks are always taken cluster first, then projects by id, so two
 * claims cannot deadlock. The claimed runs are read back in the same transaction.
 *
 * A deactivated cluster claims nothing, and no run of a deactivated project is claimed; those runs
 * stay pending with deactivatedReason.
 */
export async function claimRunsForSubmission(db: Database, clusterId: string, limit: number, epoch?: bigint): Promise<ClaimedRun[]> {
  return withTransaction(db, async (client) => {
    const ids = await claimLocked(client, clusterId, limit, epoch);
    return ids.length === 0 ? [] : readClaimedRuns(client, ids);
  });
}

async function readClaimedRuns(client: Queryable, ids: string[]): Promise<ClaimedRun[]> {
  const rows = await client.query<{
    id: string; campaign_id: string; key: string; parameters: Record<string, string | number | boolean>; repetition: number; position: number; configuration_position: number;
  }>(
    `SELECT r.id, r.campaign_id, c.key, c.parameters, r.repetition, r.position, c.position AS configuration_position
     FROM runs r JOIN configurations c ON c.id = r.configuration_id
     WHERE r.id = ANY($1::uuid[]) ORDER BY r.campaign_id, r.position`,
    [ids],
  );
  return rows.rows.map((r) => ({
    id: r.id, campaignId: r.campaign_id, configurationKey: r.key, parameters: r.parameters, repetition: r.repetition, position: r.position,
    configurationPosition: r.configuration_position,
  }));
}

/** The claim's statements, in claimRunsForSubmission's transaction; returns the claimed run ids. */
async function claimLocked(client: Queryable, clusterId: string, limit: number, epoch: bigint | undefined): Promise<string[]> {
  const cluster = (
    await client.query<{ name: string; max: number | null; max_queued: number | null; epoch: string; deactivated: boolean }>(
      `SELECT name, max_concurrent_runs AS max, max_queued_jobs AS max_queued, submit_epoch::text AS epoch, deactivated_at IS NOT NULL AS deactivated
       FROM clusters WHERE id = $1 FOR NO KEY UPDATE`,
      [clusterId],
    )
  ).rows[0];
  if (!cluster) return [];
  if (epoch !== undefined && BigInt(cluster.epoch) !== epoch) return [];
  await holdDeactivated(client, clusterId, cluster.name, cluster.deactivated);
  if (cluster.deactivated) return [];
  const projects = (
    await client.query<{ id: string; name: string; max: number }>(
      `SELECT p.id, p.name, p.max_concurrent_runs AS max FROM projects p
       WHERE p.max_concurrent_runs IS NOT NULL AND EXISTS (
         SELECT 1 FROM campaigns c JOIN runs r ON r.campaign_id = c.id
         WHERE c.project_id = p.id AND c.cluster_id = $1 AND r.state = 'pending' AND c.cancel_requested_at IS NULL)
       ORDER BY p.id FOR NO KEY UPDATE OF p`,
      [clusterId],
    )
  ).rows;
  // Active runs on this cluster and in each limited project (on any cluster), counted after the locks.
  // `queued`: of those, the runs with a job in Slurm's queue (what max_queued_jobs counts).
  const active = (
    await client.query<{ here: boolean; project_id: string; n: number; queued: number }>(
      `SELECT c.cluster_id IS NOT DISTINCT FROM $1::uuid AS here, c.project_id, count(*)::int AS n,
              count(*) FILTER (WHERE r.state IN ${IN_SLURM_QUEUE_SQL})::int AS queued
       FROM runs r JOIN campaigns c ON c.id = r.campaign_id
       WHERE r.state IN ${SLOT_HOLDING_SQL} AND (c.cluster_id = $1 OR c.project_id = ANY($2::uuid[]))
       GROUP BY 1, 2`,
      [clusterId, projects.map((p) => p.id)],
    )
  ).rows;
  const here = active.filter((a) => a.here);
  const concurrentFree = cluster.max === null ? null : cluster.max - here.reduce((sum, a) => sum + a.n, 0);
  const queuedFree = cluster.max_queued === null ? null : cluster.max_queued - here.reduce((sum, a) => sum + a.queued, 0);
  // The tighter of the cluster's two limits decides, and names itself as the reason.
  const queuedBinds = queuedFree !== null && (concurrentFree === null || queuedFree < concurrentFree);
  const clusterFree = queuedBinds ? queuedFree : concurrentFree;
  const projectFree = new Map(projects.map((p) => [p.id, p.max - active.filter((a) => a.project_id === p.id).reduce((sum, a) => sum + a.n, 0)]));
  const take = clusterFree === null ? limit : Math.max(0, Math.min(limit, clusterFree));

  let ids: string[] = [];
  if (take > 0) {
    const open = [...projectFree].filter(([, free]) => free > 0);
    const full = [...projectFree].filter(([, free]) => free <= 0).map(([id]) => id);
    // Lock candidates (skipping full projects, so they do not block the others), then keep per
    // project no more than it has room for.
    const candidates = await client.query<{ id: string }>(
      `WITH locked AS (
         SELECT r.id, c.project_id, c.created_at, r.position FROM runs r JOIN campaigns c ON c.id = r.campaign_id
         WHERE c.cluster_id = $1 AND r.state = 'pending' AND c.cancel_requested_at IS NULL AND r.cancel_requested_at IS NULL
           AND NOT (c.project_id = ANY($3::uuid[])) AND NOT ${IN_DEACTIVATED_PROJECT('c')}
         ORDER BY c.created_at, r.position, r.id LIMIT $2 FOR UPDATE OF r SKIP LOCKED
       ), ranked AS (
         SELECT id, project_id, row_number() OVER (PARTITION BY project_id ORDER BY created_at, position, id) AS n FROM locked
       )
       SELECT ranked.id FROM ranked LEFT JOIN unnest($4::uuid[], $5::int[]) AS cap(project_id, free) ON cap.project_id = ranked.project_id
       WHERE cap.free IS NULL OR ranked.n <= cap.free`,
      [clusterId, take, full, open.map(([id]) => id), open.map(([, free]) => free)],
    );
    ids = await transition(client, {
      where: `runs.id = ANY($1::uuid[]) AND runs.state = 'pending'`,
      set: `state = 'submitting', claimed_at = now(), submit_attempts = submit_attempts + 1, reason = NULL, submit_epoch = $2::bigint`,
      params: [candidates.rows.map((r) => r.id), epoch === undefined ? null : epoch.toString()],
      detail: `'claimed for submission'`,
    });
  }

  // Whoever is still pending behind a limit that is now reached says so (written only on change).
  const clusterFull = clusterFree !== null && clusterFree - ids.length <= 0;
  const claimedPerProject = ids.length === 0 ? new Map<string, number>() : await countByProject(client, ids);
  const fullProjects = projects.filter((p) => projectFree.get(p.id)! - (claimedPerProject.get(p.id) ?? 0) <= 0);
  if (clusterFull || fullProjects.length > 0) {
    await client.query(
      `UPDATE runs SET reason = w.reason, updated_at = now() FROM (
         SELECT r.id, CASE WHEN $2 THEN $3 ELSE cap.reason END AS reason
         FROM runs r JOIN campaigns c ON c.id = r.campaign_id
         LEFT JOIN unnest($4::uuid[], $5::text[]) AS cap(project_id, reason) ON cap.project_id = c.project_id
         WHERE c.cluster_id = $1 AND r.state = 'pending' AND c.cancel_requested_at IS NULL AND ($2 OR cap.project_id IS NOT NULL)
           AND NOT ${IN_DEACTIVATED_PROJECT('c')}
       ) w
       WHERE runs.id = w.id AND runs.reason IS DISTINCT FROM w.reason`,
      [
        clusterId, clusterFull,
        queuedBinds ? queuedJobsLimitReason(cluster.name, cluster.max_queued!) : concurrencyLimitReason('cluster', cluster.name, cluster.max ?? 0),
        fullProjects.map((p) => p.id), fullProjects.map((p) => concurrencyLimitReason('project', p.name, p.max)),
      ],
    );
  }
  return ids;
}

/**
 * Pending runs held by a deactivated cluster (all of its runs) or project say so (written only on
 * change). Two statements rather than one with an OR, so that a cycle of an active cluster reads
 * only the runs of deactivated projects (usually none), never all of its pending runs.
 */
async function holdDeactivated(client: Queryable, clusterId: string, clusterName: string, clusterDeactivated: boolean): Promise<void> {
  if (clusterDeactivated) {
    await client.query(
      `UPDATE runs SET reason = $2, updated_at = now()
       FROM campaigns c WHERE c.id = runs.campaign_id AND c.cluster_id = $1 AND c.cancel_requested_at IS NULL
         AND runs.state = 'pending' AND runs.reason IS DISTINCT FROM $2`,
      [clusterId, deactivatedReason('cluster', clusterName)],
    );
    return;
  }
  const [before, after] = deactivatedReason('project', '\0').split('\0');
  await client.query(
    `UPDATE runs SET reason = $2 || p.name || $3, updated_at = now()
     FROM campaigns c JOIN projects p ON p.id = c.project_id
     WHERE p.deactivated_at IS NOT NULL AND c.id = runs.campaign_id AND c.cluster_id = $1 AND c.cancel_requested_at IS NULL
       AND runs.state = 'pending' AND runs.reason IS DISTINCT FROM $2 || p.name || $3`,
    [clusterId, before, after],
  );
}

async function countByProject(client: Queryable, runIds: string[]): Promise<Map<string, number>> {
  const rows = await client.query<{ project_id: string; n: number }>(
    `SELECT c.project_id, count(*)::int AS n FROM runs r JOIN campaigns c ON c.id = r.campaign_id WHERE r.id = ANY($1::uuid[]) GROUP BY 1`,
    [runIds],
  );
  return new Map(rows.rows.map((r) => [r.project_id, r.n]));
}

export interface StagedRun {
  runId: string;
  runDir: string;
  /** The exact rendered sbatch script, kept for provenance. */
  jobScript: string;
  /** The array submission (and task index) the run goes into; absent: a job of its own. */
  array?: { submissionId: string; index: number };
}

/**
 * Records where a claimed run's files were staged, and into which array, before sbatch runs (no
 * state change). Written before sbatch on purpose: after a crash the array is found by its name.
 */
export async function recordStagedRuns(db: Database, runs: StagedRun[], guard?: ClaimGuard): Promise<void> {
  if (runs.length === 0) return;
  await poolOf(db).query(
    `UPDATE runs SET run_dir = v.run_dir, job_script = v.job_script, array_submission = v.array_submission,
            array_index = v.array_index, updated_at = now()
     FROM unnest($1::uuid[], $2::text[], $3::text[], $4::uuid[], $5::int[]) AS v(id, run_dir, job_script, array_submission, array_index)
     WHERE runs.id = v.id AND runs.state = 'submitting' AND ${claimGuardSql(guard, 6)}`,
    [
      runs.map((r) => r.runId),
      runs.map((r) => r.runDir),
      runs.map((r) => r.jobScript),
      runs.map((r) => r.array?.submissionId ?? null),
      runs.map((r) => r.array?.index ?? null),
      ...guardParams(guard),
    ],
  );
}

export interface QueuedRun {
  runId: string;
  slurmJobId: string;
}

/** submitting → queued: sbatch accepted the job (or a job carrying the run id was found). */
export async function markRunsQueued(db: Database, runs: QueuedRun[], guard?: ClaimGuard): Promise<string[]> {
  if (runs.length === 0) return [];
  return transition(poolOf(db), {
    from: `unnest($1::uuid[], $2::text[]) AS v(id, job_id)`,
    where: `runs.id = v.id AND runs.state = 'submitting' AND ${claimGuardSql(guard, 3)}`,
    set: `state = 'queued', slurm_job_id = v.job_id, submitted_at = COALESCE(runs.submitted_at, now())`,
    params: [runs.map((r) => r.runId), runs.map((r) => r.slurmJobId), ...guardParams(guard)],
    detail: `'slurm job ' || v.job_id`,
  });
}

/**
 * submitting → pending: the cluster was asked and has no job for these runs (or sbatch was
 * certainly never reached), so submitting them again cannot create a duplicate.
 */
export async function returnRunsToPending(db: Database, runIds: string[], reason: string, guard?: ClaimGuard): Promise<string[]> {
  if (runIds.length === 0) return [];
  return transition(poolOf(db), {
    where: `runs.id = ANY($1::uuid[]) AND runs.state = 'submitting' AND ${claimGuardSql(guard, 3)}`,
    // Out of its array too: the next claim may put it into another one.
    set: `state = 'pending', reason = $2, claimed_at = NULL, array_submission = NULL, array_index = NULL`,
    params: [runIds, reason, ...guardParams(guard)],
    detail: `$2`,
  });
}

/** submitting → failed: sbatch refused the job for a reason retrying will not fix. */
export async function failRunsAtSubmission(db: Database, runs: { runId: string; reason: string }[], guard?: ClaimGuard): Promise<string[]> {
  if (runs.length === 0) return [];
  return transition(poolOf(db), {
    from: `unnest($1::uuid[], $2::text[]) AS v(id, reason)`,
    where: `runs.id = v.id AND runs.state = 'submitting' AND ${claimGuardSql(guard, 3)}`,
    set: `state = 'failed', reason = v.reason, ended_at = now(), finalized_at = now()`,
    params: [runs.map((r) => r.runId), runs.map((r) => r.reason), ...guardParams(guard)],
    detail: `v.reason`,
  });
}

export interface TrackedRun {
  id: string;
  campaignId: string;
  state: string;
  slurmJobId: string | null;
  /** When the run was created: the start of the window its samples may carry (sampleTimeBounds). */
  createdAt: Date;
  claimedAt: Date | null;
  submittedAt: Date | null;
  runDir: string | null;
  /** The array submission the run was staged into, and its task index; null: a job of its own. */
  arraySubmission: string | null;
  arrayIndex: number | null;
  /** Its campaign, or the run itself, was cancelled: its job is to be scancelled. */
  cancelRequested: boolean;
}

/** Runs of a cluster whose fate is decided by Slurm now: in doubt, queued, running or completing. */
export async function listTrackedRuns(db: Database, clusterId: string): Promise<TrackedRun[]> {
  const result = await poolOf(db).query<{
    id: string; campaign_id: string; state: string; slurm_job_id: string | null; created_at: Date; claimed_at: Date | null;
    submitted_at: Date | null; run_dir: string | null; array_submission: string | null; array_index: number | null; cancel_requested: boolean;
  }>(
    `SELECT r.id, r.campaign_id, r.state::text AS state, r.slurm_job_id, r.created_at, r.claimed_at, r.submitted_at, r.run_dir,
            r.array_submission, r.array_index,
            (c.cancel_requested_at IS NOT NULL OR r.cancel_requested_at IS NOT NULL) AS cancel_requested
     FROM runs r JOIN campaigns c ON c.id = r.campaign_id
     WHERE c.cluster_id = $1 AND r.state IN ${SLOT_HOLDING_SQL}`,
    [clusterId],
  );
  return result.rows.map((r) => ({
    id: r.id, campaignId: r.campaign_id, state: r.state, slurmJobId: r.slurm_job_id, createdAt: r.created_at, claimedAt: r.claimed_at,
    submittedAt: r.submitted_at, runDir: r.run_dir, arraySubmission: r.array_submission, arrayIndex: r.array_index,
    cancelRequested: r.cancel_requested,
  }));
}

export interface SlurmProgress {
  runId: string;
  /** Only non-terminal states here; terminal ones go through finishRun. */
  state: SlurmProgressRunState;
  slurmState: string;
  reason: string | null;
  startedAt: Date | null;
  nodeList: string | null;
}

const SLURM_PROGRESS_SQL = stateListSql(SLURM_PROGRESS_RUN_STATES);
/** The moves between Slurm's unfinished states that the lifecycle allows, as SQL pairs (from, to). */
const SLURM_PROGRESS_MOVES_SQL = `(${SLURM_PROGRESS_RUN_STATES.flatMap((from) =>
  SLURM_PROGRESS_RUN_STATES.filter((to) => isRunStateTransition(from, to)).map((to) => `('${from}', '${to}')`),
).join(', ')})`;

/**
 * queued/running/completing → queued/running/completing as Slurm reports, or the same state with
 * new details (reason, start, nodes); unchanged rows are left alone. Only the lifecycle's moves
 * (RUN_STATE_TRANSITIONS) are made: a report of anything else — a completing run said to be
 * running (sacct lagging behind squeue), a state no poll may set — changes nothing.
 */
export async function recordSlurmProgress(db: Database, updates: SlurmProgress[]): Promise<string[]> {
  if (updates.length === 0) return [];
  return transition(poolOf(db), {
    from: `unnest($1::uuid[], $2::run_state[], $3::text[], $4::text[], $5::timestamptz[], $6::text[]) AS v(id, state, slurm_state, reason, started_at, node_list)`,
    where: `runs.id = v.id AND runs.state IN ${SLURM_PROGRESS_SQL}
            AND (runs.state = v.state OR (runs.state::text, v.state::text) IN ${SLURM_PROGRESS_MOVES_SQL})
            AND (runs.state, runs.slurm_state, runs.reason, runs.started_at, runs.node_list)
                IS DISTINCT FROM (v.state, v.slurm_state, v.reason, v.started_at, v.node_list)`,
    set: `state = v.state, slurm_state = v.slurm_state, reason = v.reason, started_at = v.started_at, node_list = v.node_list`,
    params: [
      updates.map((u) => u.runId), updates.map((u) => u.state), updates.map((u) => u.slurmState), updates.map((u) => u.reason),
      updates.map((u) => u.startedAt), updates.map((u) => u.nodeList),
    ],
    detail: `'slurm: ' || v.slurm_state`,
  });
}

export interface FinishedRun {
  runId: string;
  state: TerminalRunState;
  slurmState: string;
  reason: string | null;
  exitCode: number | null;
  signal: number | null;
  startedAt: Date | null;
  endedAt: Date | null;
  nodeList: string | null;
  workloadStartNs: bigint | null;
  workloadEndNs: bigint | null;
  idleStartNs: bigint | null;
  idleEndNs: bigint | null;
  metrics: Record<string, number | null>;
  stdoutTail: string | null;
  stderrTail: string | null;
  /** What erg could not do in full for the run (metrics read from part of a huge log, a regex stopped at its budget), added to runs.warnings. */
  warnings?: string[];
  /** Slurm's own energy figure for the job (sacct ConsumedEnergyRaw); null: Slurm measured none. */
  slurmEnergyJ?: number | null;
  /** The wait before its idle baseline and workload (the spec's cooldown), as its job and agents recorded it; null: none. */
  cooldown?: RunCooldown | null;
}

/** any non-terminal → terminal, with everything fetched from the run directory. Returns false when already finished. */
export async function finishRun(db: Database, run: FinishedRun): Promise<boolean> {
  const changed = await transition(poolOf(db), {
    where: `runs.id = $1 AND runs.state NOT IN ${TERMINAL_SQL}`,
    set: `state = $2, slurm_state = $3, reason = $4, exit_code = $5, signal = $6, started_at = COALESCE($7, runs.started_at),
          ended_at = $8, node_list = COALESCE($9, runs.node_list), workload_start_ns = $10, workload_end_ns = $11,
          metrics = $12, stdout_tail = $13, stderr_tail = $14, idle_start_ns = $15, idle_end_ns = $16, finalized_at = now(),
          warnings = runs.warnings || $17::text[], slurm_energy_j = $18, cooldown = $19::jsonb`,
    params: [
      run.runId, run.state, run.slurmState, run.reason, run.exitCode, run.signal, run.startedAt, run.endedAt, run.nodeList,
      run.workloadStartNs?.toString() ?? null, run.workloadEndNs?.toString() ?? null, JSON.stringify(run.metrics),
      run.stdoutTail, run.stderrTail, run.idleStartNs?.toString() ?? null, run.idleEndNs?.toString() ?? null, run.warnings ?? [], run.slurmEnergyJ ?? null,
      run.cooldown ? JSON.stringify(run.cooldown) : null,
    ],
    detail: `'finished: ' || $3`,
  });
  return changed.length > 0;
}

/** What a cancel request cancels: runs erg cancels itself, and runs whose Slurm jobs the scheduler cancels. */
export interface CancelRequest {
  /** Runs not yet handed to Slurm. */
  pending: number;
  /** Runs submitting, queued, running or completing. */
  active: number;
}

/**
 * Marks the campaign cancelled-by-request (the first request's time stays) and counts what that
 * cancels; one statement, whatever the campaign's size. A campaign whose runs have all ended is
 * left as it is: there is nothing to cancel (zero and zero). From here on the claim skips the
 * campaign's pending runs; `cancelPendingRuns` ends them, the scheduler scancels the active ones.
 */
export async function requestCampaignCancel(db: Database, campaignId: string): Promise<CancelRequest> {
  const result = await poolOf(db).query<{ pending: number; active: number }>(
    `WITH counts AS (
       SELECT count(*) FILTER (WHERE state = 'pending')::int AS pending, count(*) FILTER (WHERE state IN ${SLOT_HOLDING_SQL})::int AS active
       FROM runs WHERE campaign_id = $1
     ), marked AS (
       UPDATE campaigns SET cancel_requested_at = COALESCE(cancel_requested_at, now())
       WHERE id = $1 AND (SELECT pending + active FROM counts) > 0
       RETURNING id
     )
     SELECT pending, active FROM counts`,
    [campaignId],
  );
  return result.rows[0] ?? { pending: 0, active: 0 };
}

/**
 * pending → cancelled for every run of a cancel-requested campaign, with their events, in one
 * set-based statement. Its cost grows with the campaign (one row and one event per run), which
 * is why the API runs it after answering when there are many. Returns how many it cancelled.
 */
export async function cancelPendingRuns(db: Database, campaignId: string): Promise<number> {
  const ids = await transition(poolOf(db), {
    where: `runs.campaign_id = $1 AND runs.state = 'pending'
            AND EXISTS (SELECT 1 FROM campaigns c WHERE c.id = $1 AND c.cancel_requested_at IS NOT NULL)`,
    set: `state = 'cancelled', reason = 'cancelled before submission', ended_at = now(), finalized_at = now()`,
    params: [campaignId],
    detail: `'cancelled by request'`,
  });
  return ids.length;
}

/**
 * pending → cancelled for runs an adaptive campaign no longer needs: their configuration was
 * decided (dropped, settled) while a repetition of it waited to be submitted. Runs already handed
 * to Slurm run to their end. Marked withdrawn (withdrawn_at): the campaign's state does not count
 * them as failed. Returns how many it withdrew.
 */
export async function withdrawPendingRuns(tx: Pick<pg.PoolClient, 'query'>, configurationIds: readonly string[], why: string): Promise<number> {
  if (configurationIds.length === 0) return 0;
  const ids = await transition(tx as Queryable, {
    where: `runs.configuration_id = ANY($1::uuid[]) AND runs.state = 'pending'`,
    set: `state = 'cancelled', reason = $2, withdrawn_at = now(), ended_at = now(), finalized_at = now()`,
    params: [[...configurationIds], why],
    detail: `$2`,
  });
  return ids.length;
}

/**
 * pending → cancelled for the runs of every cancel-requested campaign on the cluster: the
 * scheduler's sweep each cycle, so that a cancel whose pending runs the API did not get to end
 * (it answers first for large campaigns, and may stop before finishing) still ends them.
 */
export async function cancelPendingRunsOnCluster(db: Database, clusterId: string): Promise<number> {
  const ids = await transition(poolOf(db), {
    where: `runs.state = 'pending'
            AND EXISTS (SELECT 1 FROM campaigns c WHERE c.id = runs.campaign_id AND c.cluster_id = $1
                        AND (c.cancel_requested_at IS NOT NULL OR runs.cancel_requested_at IS NOT NULL))`,
    set: `state = 'cancelled', reason = 'cancelled before submission', ended_at = now(), finalized_at = now()`,
    params: [clusterId],
    detail: `'cancelled by request'`,
  });
  return ids.length;
}

/** What cancelling one run did: ended it at once (it was pending), asked the scheduler to scancel its job, or nothing (already over). */
export type RunCancelOutcome = 'cancelled' | 'cancelling' | 'ended';

/**
 * Cancels one run, the rest of its campaign going on: a pending run ends at once (never
 * submitted); a run that holds a job is marked, and the scheduler's next cycle scancels its job
 * (for an array task, that task alone). A run in doubt (`submitting`) is marked too: its job is
 * cancelled once the scheduler has found it. Idempotent.
 */
export async function requestRunCancel(db: Database, runId: string): Promise<RunCancelOutcome> {
  // Marked first, in whatever unfinished state it is: a claim never takes a marked run, so a run
  // pending here cannot slip into Slurm between the two statements (and one that was claimed
  // already has its job cancelled by the scheduler once found).
  const marked = await poolOf(db).query(
    `UPDATE runs SET cancel_requested_at = COALESCE(cancel_requested_at, now()), updated_at = now()
     WHERE id = $1 AND state IN ${stateListSql(UNFINISHED_RUN_STATES)}`,
    [runId],
  );
  if ((marked.rowCount ?? 0) === 0) return 'ended';
  const cancelled = await transition(poolOf(db), {
    where: `runs.id = $1 AND runs.state = 'pending' AND runs.cancel_requested_at IS NOT NULL`,
    set: `state = 'cancelled', reason = 'cancelled before submission', ended_at = now(), finalized_at = now()`,
    params: [runId],
    detail: `'cancelled by request'`,
  });
  return cancelled.length > 0 ? 'cancelled' : 'cancelling';
}

/**
 * queued → cancelled for runs whose array task was cancelled before it started: Slurm keeps no
 * record of such a task (neither squeue nor sacct lists it, checked on 22.05), so nothing will ever
 * report its end. Only runs whose cancel was requested; there is nothing to finalize (it never ran).
 */
export async function endCancelledUnstartedRuns(db: Database, runIds: string[]): Promise<string[]> {
  if (runIds.length === 0) return [];
  return transition(poolOf(db), {
    where: `runs.id = ANY($1::uuid[]) AND runs.state = 'queued' AND runs.started_at IS NULL
            AND (runs.cancel_requested_at IS NOT NULL OR EXISTS (SELECT 1 FROM campaigns c WHERE c.id = runs.campaign_id AND c.cancel_requested_at IS NOT NULL))`,
    set: `state = 'cancelled', reason = 'cancelled before it started (its array task left Slurm without a record)', ended_at = now(), finalized_at = now()`,
    params: [runIds],
    detail: `'cancelled by request'`,
  });
}

export interface ImportedRunEnd {
  runId: string;
  startedAt: Date;
  endedAt: Date;
  exitCode: number | null;
  metrics: Record<string, number | null>;
}

/**
 * pending → completed | failed for a run of an import campaign: the measurement was taken
 * elsewhere; its window is what the importer says. Exit code 0 or none means completed. A run
 * with telemetry is marked, in the same transaction, as owing its energy figures
 * (markEnergyDueAfterFinish): the scheduler computes them, and no crash between this commit and
 * that computation can lose it.
 */
export async function finishImportedRun(db: Database, run: ImportedRunEnd): Promise<boolean> {
  return withTransaction(db, async (client) => {
    const changed = await transition(client, {
      where: `runs.id = $1 AND runs.state = 'pending'
              AND EXISTS (SELECT 1 FROM campaigns c WHERE c.id = runs.campaign_id AND c.execution = 'import')`,
      set: `state = $2::run_state, exit_code = $3::int, started_at = $4, ended_at = $5, metrics = $6,
            workload_start_ns = $7, workload_end_ns = $8, finalized_at = now(),
            reason = CASE WHEN $2::text = 'failed' THEN 'the imported run reported exit code ' || $3::int::text END`,
      params: [
        run.runId, run.exitCode === null || run.exitCode === 0 ? 'completed' : 'failed', run.exitCode, run.startedAt, run.endedAt,
        JSON.stringify(run.metrics), (BigInt(run.startedAt.getTime()) * 1_000_000n).toString(), (BigInt(run.endedAt.getTime()) * 1_000_000n).toString(),
      ],
      detail: `'imported'`,
    });
    if (changed.length === 0) return false;
    await markEnergyDueAfterFinish(client, run.runId);
    return true;
  });
}

/** Clusters that have runs waiting to be submitted or tracked: the scheduler's work list. */
export async function clustersWithWork(db: Database): Promise<string[]> {
  // Also clusters registered (or changed) in the last PROBE_NEW_CLUSTERS_FOR and not probed yet:
  // their capabilities (is there a node helper?) decide whether campaigns with a power state are
  // accepted. One that stays unreachable that long is tried again once it has work.
  const result = await poolOf(db).query<{ cluster_id: string }>(
    `SELECT c.cluster_id FROM runs r JOIN campaigns c ON c.id = r.campaign_id
     WHERE c.cluster_id IS NOT NULL AND r.state IN ${stateListSql(UNFINISHED_RUN_STATES)}
     UNION
     SELECT id FROM clusters WHERE capabilities IS NULL AND updated_at > now() - interval '${PROBE_NEW_CLUSTERS_FOR}'`,
  );
  return result.rows.map((r) => r.cluster_id);
}

/** How long after its registration the scheduler keeps trying to reach a cluster that has no work, to probe it. */
const PROBE_NEW_CLUSTERS_FOR = '10 minutes';
