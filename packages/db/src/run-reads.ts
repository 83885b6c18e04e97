import { RUN_STATES_HOLDING_A_SLOT, TERMINAL_RUN_STATES, type CampaignSpec, type RunCooldown, type RunState } from '@erg/spec';
import { poolOf, prismaOf, type Database } from './client';
import type { CampaignCluster } from './campaigns';
import { stateListSql } from './state-sql';
import { readStoredSpec } from './stored-spec';

/**
 * Reads of runs: what the API shows of a run and what it checks before writing to one. The
 * writes, one per state transition, are in runs.ts.
 */

/** A run as a campaign's run list shows it. */
export interface RunSummaryRecord {
  id: string;
  campaignId: string;
  configurationKey: string;
  parameters: Record<string, unknown>;
  repetition: number;
  position: number;
  state: RunState;
  slurmJobId: string | null;
  exitCode: number | null;
  reason: string | null;
}

/** A run with everything GET /v1/runs/:id shows, but its log tails. */
export interface RunRecord extends RunSummaryRecord {
  slurmState: string | null;
  signal: number | null;
  submitAttempts: number;
  createdAt: Date;
  submittedAt: Date | null;
  startedAt: Date | null;
  endedAt: Date | null;
  finalizedAt: Date | null;
  workloadStartNs: bigint | null;
  workloadEndNs: bigint | null;
  idleStartNs: bigint | null;
  idleEndNs: bigint | null;
  nodeList: string | null;
  runDir: string | null;
  metrics: Record<string, number | null> | null;
  warnings: string[];
  jobScript: string | null;
  cancelRequestedAt: Date | null;
  /** The wait before its idle baseline and workload (the spec's cooldown); null: none. */
  cooldown: RunCooldown | null;
}

/** A run with its campaign's name, spec and execution, and its cluster. */
export interface RunDetail extends RunRecord {
  campaign: { name: string; spec: CampaignSpec; execution: 'slurm' | 'import' };
  cluster: CampaignCluster | null;
}

const SUMMARY_COLUMNS = {
  id: true, campaignId: true, repetition: true, position: true, state: true, slurmJobId: true, exitCode: true, reason: true,
  configuration: { select: { key: true, parameters: true } },
} as const;

const RECORD_COLUMNS = {
  ...SUMMARY_COLUMNS,
  slurmState: true, signal: true, submitAttempts: true, createdAt: true, submittedAt: true, startedAt: true, endedAt: true, finalizedAt: true,
  workloadStartNs: true, workloadEndNs: true, idleStartNs: true, idleEndNs: true, nodeList: true, runDir: true, metrics: true, warnings: true,
  jobScript: true, cancelRequestedAt: true, cooldown: true,
} as const;

function summaryOf<R extends { configuration: { key: string; parameters: unknown } }>(row: R) {
  const { configuration, ...rest } = row;
  return { ...rest, configurationKey: configuration.key, parameters: configuration.parameters as Record<string, unknown> };
}

export async function findRunDetail(db: Database, id: string): Promise<RunDetail | null> {
  const row = await prismaOf(db).run.findUnique({
    where: { id },
    select: {
      ...RECORD_COLUMNS,
      campaign: { select: { name: true, spec: true, execution: true, cluster: { select: { name: true, projectId: true, lastError: true, defaultPartition: true } } } },
    },
  });
  if (!row) return null;
  const { campaign, ...run } = row;
  return {
    ...summaryOf(run),
    metrics: run.metrics as RunRecord['metrics'],
    // Only finishRun writes it, from a validated RunCooldown.
    cooldown: run.cooldown as RunRecord['cooldown'],
    campaign: { name: campaign.name, spec: readStoredSpec(run.campaignId, campaign.spec), execution: campaign.execution as RunDetail['campaign']['execution'] },
    cluster: campaign.cluster,
  };
}

/**
 * A page of a campaign's runs in position order (all of them without a limit), optionally of one
 * state, with how many there are in all.
 */
export async function listCampaignRuns(
  db: Database,
  campaignId: string,
  opts: { state?: RunState | undefined; limit?: number | undefined; offset?: number | undefined } = {},
): Promise<{ items: RunSummaryRecord[]; total: number }> {
  const where = { campaignId, ...(opts.state ? { state: opts.state } : {}) };
  const [rows, total] = await Promise.all([
    prismaOf(db).run.findMany({ where, select: SUMMARY_COLUMNS, orderBy: { position: 'asc' }, take: opts.limit, skip: opts.offset }),
    prismaOf(db).run.count({ where }),
  ]);
  return { items: rows.map(summaryOf), total };
}

/**
 * A campaign's run ids in its run order (position): what an evidence bundle walks. One column, no
 * summaries: 100,000 runs as summaries are seconds of row mapping on the caller's event loop.
 */
export async function listCampaignRunIds(db: Database, campaignId: string): Promise<string[]> {
  const { rows } = await poolOf(db).query<{ id: string }>('SELECT id FROM runs WHERE campaign_id = $1 ORDER BY position, id', [campaignId]);
  return rows.map((r) => r.id);
}

/** What accepting telemetry for a run needs to know of it. */
export interface RunIngestTarget {
  id: string;
  campaignId: string;
  state: RunState;
  createdAt: Date;
  endedAt: Date | null;
  finalizedAt: Date | null;
  campaign: { execution: 'slurm' | 'import' };
}

export async function findRunIngestTarget(db: Database, id: string): Promise<RunIngestTarget | null> {
  const row = await prismaOf(db).run.findUnique({
    where: { id },
    select: { id: true, campaignId: true, createdAt: true, endedAt: true, finalizedAt: true, state: true, campaign: { select: { execution: true } } },
  });
  return row ? { ...row, campaign: { execution: row.campaign.execution as RunIngestTarget['campaign']['execution'] } } : null;
}

/** A run's state and whether its workload ended; null when there is no such run. */
export async function findRunProgress(db: Database, id: string): Promise<{ id: string; state: RunState; workloadEndNs: bigint | null } | null> {
  return prismaOf(db).run.findUnique({ where: { id }, select: { id: true, state: true, workloadEndNs: true } });
}

/** Runs per cluster (its name or id; null for import campaigns) and state, over every campaign. */
export async function countRunsByClusterAndState(
  db: Database,
  clusterBy: 'name' | 'id',
): Promise<{ cluster: string | null; state: RunState; n: number }[]> {
  const { rows } = await poolOf(db).query<{ cluster: string | null; state: RunState; n: number }>(
    `SELECT ${clusterBy === 'name' ? 'cl.name' : 'cl.id::text'} AS cluster, r.state::text AS state, count(*)::int AS n
       FROM runs r
       JOIN campaigns c ON c.id = r.campaign_id
       LEFT JOIN clusters cl ON cl.id = c.cluster_id
      GROUP BY 1, 2`,
  );
  return rows;
}

/** Where a run's logs are (its directory on its campaign's cluster) and the tails kept when it ended. */
export interface RunLogSource {
  id: string;
  clusterId: string | null;
  runDir: string | null;
  finalizedAt: Date | null;
  stdoutTail: string | null;
  stderrTail: string | null;
}

export async function findRunLogSource(db: Database, id: string): Promise<RunLogSource | null> {
  const row = await prismaOf(db).run.findUnique({
    where: { id },
    select: { id: true, runDir: true, finalizedAt: true, stdoutTail: true, stderrTail: true, campaign: { select: { clusterId: true } } },
  });
  if (!row) return null;
  const { campaign, ...run } = row;
  return { ...run, clusterId: campaign.clusterId };
}

/** How many state changes of a campaign's runs went to `to` (run_events). */
export async function countCampaignRunEvents(db: Database, campaignId: string, to: RunState): Promise<number> {
  const rows = await poolOf(db).query<{ n: number }>(
    `SELECT count(*)::int AS n FROM run_events e JOIN runs r ON r.id = e.run_id WHERE r.campaign_id = $1 AND e."to" = $2::run_state`,
    [campaignId, to],
  );
  return rows.rows[0]!.n;
}

/** Slurm job ids of every run, on any cluster, whose job may still be in Slurm (submitting to completing). */
export async function listActiveSlurmJobIds(db: Database): Promise<string[]> {
  const rows = await poolOf(db).query<{ slurm_job_id: string }>(
    `SELECT slurm_job_id FROM runs WHERE slurm_job_id IS NOT NULL AND state IN ${stateListSql(RUN_STATES_HOLDING_A_SLOT)}`,
  );
  return rows.rows.map((r) => r.slurm_job_id);
}

/** How many runs of these campaigns (null: of every campaign) have not reached a terminal state. */
export async function countUnfinishedRuns(db: Database, campaignIds: readonly string[] | null): Promise<number> {
  const rows = await poolOf(db).query<{ n: number }>(
    `SELECT count(*)::int AS n FROM runs WHERE ($1::uuid[] IS NULL OR campaign_id = ANY($1::uuid[])) AND state::text <> ALL($2::text[])`,
    [campaignIds, TERMINAL_RUN_STATES],
  );
  return rows.rows[0]!.n;
}

/** How a run came out: its state and job, whether it has energy figures, and when it last changed state. */
export interface RunOutcome {
  id: string;
  campaignId: string;
  state: RunState;
  slurmJobId: string | null;
  reason: string | null;
  submitAttempts: number;
  hasEnergy: boolean;
  energyMethod: string | null;
  energyJ: number | null;
  lastEventAt: Date | null;
  /** The array submission it was last staged into, and its task there; null: a job of its own. */
  arraySubmission: string | null;
  arrayIndex: number | null;
}

/** Every run of these campaigns with its outcome (what the chaos suite's ledger counts). */
export async function listRunOutcomes(db: Database, campaignIds: readonly string[]): Promise<RunOutcome[]> {
  const rows = await poolOf(db).query<{
    id: string; campaign_id: string; state: RunState; slurm_job_id: string | null; reason: string | null; submit_attempts: number;
    has_energy: boolean; energy_method: string | null; energy_j: number | null; last_event_at: Date | null;
    array_submission: string | null; array_index: number | null;
  }>(
    `SELECT r.id, r.campaign_id, r.state::text AS state, r.slurm_job_id, r.reason, r.submit_attempts, r.array_submission, r.array_index,
            e.run_id IS NOT NULL AS has_energy, e.method AS energy_method, e.energy_j,
            (SELECT max(at) FROM run_events ev WHERE ev.run_id = r.id) AS last_event_at
       FROM runs r LEFT JOIN run_energy e ON e.run_id = r.id
      WHERE r.campaign_id = ANY($1::uuid[])`,
    [campaignIds],
  );
  return rows.rows.map((r) => ({
    id: r.id, campaignId: r.campaign_id, state: r.state, slurmJobId: r.slurm_job_id, reason: r.reason, submitAttempts: r.submit_attempts,
    hasEnergy: r.has_energy, energyMethod: r.energy_method, energyJ: r.energy_j, lastEventAt: r.last_event_at,
    arraySubmission: r.array_submission, arrayIndex: r.array_index,
  }));
}

/** One state change of a run (run_events), as appended by its transition. */
export interface RunEventRecord {
  at: Date;
  from: RunState | null;
  to: RunState;
  detail: string | null;
}

/** A run's state changes, oldest first (the order they were appended in, for equal times). */
export async function listRunEvents(db: Database, runId: string): Promise<RunEventRecord[]> {
  const { rows } = await poolOf(db).query<{ at: Date; from: RunState | null; to: RunState; detail: string | null }>(
    `SELECT at, "from"::text AS "from", "to"::text AS "to", detail FROM run_events WHERE run_id = $1 ORDER BY at, id`,
    [runId],
  );
  return rows;
}
