import { MAX_COOLDOWN_REFERENCES, type IdleNodeFigures, type IdleReference } from '@erg/spec';
import { poolOf, type Database } from './client';

/** How many of a cluster's most recent runs with an idle baseline its idle references are read from. */
export const IDLE_REFERENCE_RUNS = 300;

/**
 * What a cooldown compares each node of a cluster with: the node's figures from the latest idle
 * baseline erg measured on it (computeRunEnergy's idle.nodes, stored with each run's energy),
 * among the cluster's IDLE_REFERENCE_RUNS most recent runs with one — the nodes measured most
 * recently first, at most MAX_COOLDOWN_REFERENCES. One statement; its cost is bounded by those
 * runs, whatever the cluster's history (runs_idle_end_ns_idx finds them newest first).
 */
export async function listIdleReferences(
  db: Database, clusterId: string, limits: { runs?: number; nodes?: number } = {},
): Promise<IdleReference[]> {
  const { rows } = await poolOf(db).query<{ node: string; figures: Partial<IdleNodeFigures>; run_id: string; idle_end_ns: string }>(
    `WITH recent AS (
       SELECT r.id, r.idle_end_ns, e.result->'idle'->'nodes' AS nodes
       FROM runs r
       JOIN campaigns c ON c.id = r.campaign_id AND c.cluster_id = $1
       JOIN run_energy e ON e.run_id = r.id
       WHERE r.idle_end_ns IS NOT NULL AND jsonb_typeof(e.result->'idle'->'nodes') = 'array'
       ORDER BY r.idle_end_ns DESC
       LIMIT $2
     ), latest AS (
       SELECT DISTINCT ON (n->>'node') n->>'node' AS node, n AS figures, recent.id AS run_id, recent.idle_end_ns
       FROM recent CROSS JOIN LATERAL jsonb_array_elements(recent.nodes) AS n
       WHERE jsonb_typeof(n->'node') = 'string'
       ORDER BY n->>'node', recent.idle_end_ns DESC
     )
     SELECT node, figures, run_id, idle_end_ns::text FROM latest ORDER BY idle_end_ns DESC, node LIMIT $3`,
    [clusterId, limits.runs ?? IDLE_REFERENCE_RUNS, limits.nodes ?? MAX_COOLDOWN_REFERENCES],
  );
  // Only refreshRunEnergy writes these figures (IdleNodeFigures); a member of another shape is left out.
  return rows.map((r) => ({
    node: r.node,
    powerW: typeof r.figures.powerW === 'number' ? r.figures.powerW : null,
    gpus: (Array.isArray(r.figures.gpus) ? r.figures.gpus : []).flatMap((g) => (typeof g?.gpu === 'number' && typeof g.meanTempC === 'number' ? [{ gpu: g.gpu, tempC: g.meanTempC }] : [])),
    runId: r.run_id,
    measuredAt: new Date(Number(BigInt(r.idle_end_ns) / 1_000_000n)).toISOString(),
  }));
}
