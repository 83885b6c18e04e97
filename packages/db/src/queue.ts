import { ownerSql } from './campaigns';
import { poolOf, type Database } from './client';
import { decodePowerSamples, lastPowerSamplesSql, type PowerSample } from './live-power';

/**
 * The queue across clusters and campaigns: every run that has not ended, for the admins'
 * dashboard. Two statements whatever the number of runs: the page of runs (with each run's latest
 * power samples) and the per-cluster counts.
 */

export interface QueueFilter {
  /** Unfinished states to include (pending, submitting, queued, running, completing). */
  states: readonly string[];
  cluster?: string | undefined;
  campaignId?: string | undefined;
  owner?: string | undefined;
  limit: number;
  /** Power samples older than this (Unix ms) are not "now". */
  powerSinceMs: number;
  /** Only campaigns of these projects (null: every project). */
  projectIds?: string[] | null;
}

export interface QueueRunRow {
  id: string;
  campaignId: string;
  campaignName: string;
  owner: string | null;
  cluster: string | null;
  clusterLastError: string | null;
  /** The cluster's project: whose maintainers may read clusterLastError's detail. */
  clusterProjectId: string | null;
  configurationKey: string;
  parameters: Record<string, unknown>;
  repetition: number;
  state: string;
  slurmJobId: string | null;
  partition: string | null;
  nodes: number | null;
  nodeList: string | null;
  createdAt: Date;
  submittedAt: Date | null;
  startedAt: Date | null;
  reason: string | null;
  power: PowerSample[];
}

export interface QueueClusterRow {
  name: string;
  projectId: string;
  runCounts: Record<string, number>;
  lastError: string | null;
  lastContactAt: Date | null;
}

/**
 * Running (and completing) first, then queued and submitting, then pending. The index
 * runs_queue_order_idx (migration 20261203120000_large_campaigns) leads with this very
 * expression, so that the page is read in order rather than sorted: change both together.
 */
const RANK = `CASE r.state WHEN 'running' THEN 0 WHEN 'completing' THEN 0 WHEN 'queued' THEN 1 WHEN 'submitting' THEN 1 ELSE 2 END`;

export async function listQueuedRuns(db: Database, f: QueueFilter): Promise<{ runs: QueueRunRow[]; total: number }> {
  const result = await poolOf(db).query<{
    id: string; campaign_id: string; campaign_name: string; owner: string | null; cluster: string | null; last_error: string | null; cluster_project_id: string | null;
    key: string; parameters: Record<string, unknown>; repetition: number; state: string; slurm_job_id: string | null;
    partition: string | null; nodes: number | null; node_list: string | null; created_at: Date; submitted_at: Date | null;
    started_at: Date | null; reason: string | null; total: string; power: { node: string; sensor: string; t: number; v: string }[];
  }>(
    // Campaign columns come from a small materialized set (the campaigns with matching runs, with
    // how many match: one pass over the matching runs gives both the set and the total), so each
    // spec is read once per campaign, not once per run. The page is read in RANK order from
    // runs_queue_order_idx and stops at the limit; the expensive columns (parameters, power) are
    // computed for the page only.
    `WITH counts AS MATERIALIZED (
       SELECT campaign_id, count(*) AS n FROM runs WHERE state = ANY($1::run_state[]) GROUP BY campaign_id
     ), camp AS MATERIALIZED (
       SELECT c.id, c.name, ${ownerSql('c', 'u')} AS owner, cl.project_id AS cluster_project_id, cl.name AS cluster, cl.last_error,
              coalesce(c.spec->'resources'->>'partition', cl.default_partition) AS partition,
              -- A node count swept by a parameter ("{{nodes}}") is no number: null, as for a spec without one.
              CASE WHEN jsonb_typeof(c.spec->'resources'->'nodes') = 'number' THEN (c.spec->'resources'->>'nodes')::int END AS nodes, k.n
       FROM counts k JOIN campaigns c ON c.id = k.campaign_id LEFT JOIN clusters cl ON cl.id = c.cluster_id
            LEFT JOIN users u ON u.id = c.created_by_user_id
       WHERE ($2::text IS NULL OR cl.name = $2) AND ($3::uuid IS NULL OR c.id = $3) AND ($4::text IS NULL OR ${ownerSql('c', 'u')} = $4)
         AND ($7::uuid[] IS NULL OR c.project_id = ANY($7::uuid[]))
     ), page AS (
       SELECT r.id, r.campaign_id, r.configuration_id, r.repetition, r.state, r.slurm_job_id, r.node_list, r.created_at,
              r.submitted_at, r.started_at, r.reason, r.position, ${RANK} AS rank
       FROM runs r JOIN camp ON camp.id = r.campaign_id
       WHERE r.state = ANY($1::run_state[])
       ORDER BY rank, r.created_at, r.campaign_id, r.position
       LIMIT $5
     )
     SELECT p.id, p.campaign_id, camp.name AS campaign_name, camp.owner, camp.cluster, camp.last_error, camp.cluster_project_id,
            cf.key, cf.parameters, p.repetition, p.state::text AS state, p.slurm_job_id, camp.partition, camp.nodes, p.node_list,
            p.created_at, p.submitted_at, p.started_at, p.reason, (SELECT sum(n) FROM camp) AS total,
            ${lastPowerSamplesSql('p.id', '$6::float8')} AS power
     FROM page p JOIN camp ON camp.id = p.campaign_id JOIN configurations cf ON cf.id = p.configuration_id
     ORDER BY p.rank, p.created_at, p.campaign_id, p.position`,
    [f.states, f.cluster ?? null, f.campaignId ?? null, f.owner ?? null, f.limit, f.powerSinceMs, f.projectIds ?? null],
  );
  return {
    total: Number(result.rows[0]?.total ?? 0),
    runs: result.rows.map((r) => ({
      id: r.id, campaignId: r.campaign_id, campaignName: r.campaign_name, owner: r.owner, cluster: r.cluster, clusterLastError: r.last_error, clusterProjectId: r.cluster_project_id,
      configurationKey: r.key, parameters: r.parameters, repetition: r.repetition, state: r.state, slurmJobId: r.slurm_job_id,
      partition: r.partition, nodes: r.nodes, nodeList: r.node_list, createdAt: r.created_at, submittedAt: r.submitted_at,
      startedAt: r.started_at, reason: r.reason, power: decodePowerSamples(r.power),
    })),
  };
}

/**
 * Every registered cluster (or the one named) with the counts, by state, of all runs of its
 * campaigns that still have unfinished runs: how far along the work in flight is.
 */
export async function listQueueClusters(db: Database, unfinished: readonly string[], cluster?: string, projectIds: string[] | null = null): Promise<QueueClusterRow[]> {
  const result = await poolOf(db).query<{ name: string; project_id: string; last_error: string | null; last_contact_at: Date | null; state: string | null; n: string | null }>(
    `SELECT cl.name, cl.project_id, cl.last_error, cl.last_contact_at, k.state, k.n
     FROM clusters cl
     LEFT JOIN LATERAL (
       SELECT r.state::text AS state, count(*) AS n
       FROM runs r JOIN campaigns c ON c.id = r.campaign_id
       WHERE c.cluster_id = cl.id AND c.id IN (SELECT DISTINCT campaign_id FROM runs WHERE state = ANY($1::run_state[]))
       GROUP BY 1
     ) k ON true
     WHERE ($2::text IS NULL OR cl.name = $2) AND ($3::uuid[] IS NULL OR cl.project_id = ANY($3::uuid[]))
     ORDER BY cl.name`,
    [unfinished, cluster ?? null, projectIds],
  );
  const clusters = new Map<string, QueueClusterRow>();
  for (const row of result.rows) {
    const c = clusters.get(row.name) ?? { name: row.name, projectId: row.project_id, runCounts: {}, lastError: row.last_error, lastContactAt: row.last_contact_at };
    if (row.state !== null) c.runCounts[row.state] = Number(row.n);
    clusters.set(row.name, c);
  }
  return [...clusters.values()];
}
