import type { CampaignSpec, ClusterCarbon, ClusterPrice, RunCooldown } from '@erg/spec';
import type pg from 'pg';
import type { CarbonIntensityRow } from './carbon-intensity';
import { poolOf, prismaOf, type Database } from './client';
import { countedFiguresSql, countedMembersSql } from './counted-figures';
import { readStoredSpec } from './stored-spec';

/**
 * A run's energy figures (run_energy): computed by @erg/results from the run's stored telemetry
 * over its workload window, one row per run, replaced whenever late telemetry arrives.
 */

/** What computing a run's energy needs of the run: its windows, metrics and campaign. */
export interface RunEnergyInputs {
  workloadStartNs: bigint | null;
  workloadEndNs: bigint | null;
  idleStartNs: bigint | null;
  idleEndNs: bigint | null;
  metrics: Record<string, number | null> | null;
  /** Slurm's node list of its job (a hostlist expression); null for an import or before it ran. */
  nodeList: string | null;
  /** Slurm's own energy figure for the job (sacct ConsumedEnergyRaw, J); null: none. */
  slurmEnergyJ: number | null;
  /** When the run was finalized (its windows and outputs read); null while it is not. */
  finalizedAt: Date | null;
  configuration: { key: string; parameters: Record<string, string | number | boolean> };
  campaign: { spec: CampaignSpec; execution: 'slurm' | 'import' };
  /**
   * The cluster whose carbon and price settings apply, as they are now: the campaign's, or for an
   * import the one its spec names (where the measurements were taken); null: none.
   */
  cluster: { id: string; name: string; carbon: ClusterCarbon | null; price: ClusterPrice | null } | null;
}

const SETTINGS = { id: true, name: true, carbon: true, price: true } as const;

export async function findRunEnergyInputs(db: Database, runId: string): Promise<RunEnergyInputs | null> {
  const run = await prismaOf(db).run.findUnique({
    where: { id: runId },
    select: {
      workloadStartNs: true, workloadEndNs: true, idleStartNs: true, idleEndNs: true, metrics: true, nodeList: true, slurmEnergyJ: true, finalizedAt: true,
      configuration: { select: { key: true, parameters: true } },
      campaignId: true,
      campaign: { select: { spec: true, execution: true, cluster: { select: SETTINGS } } },
    },
  });
  if (!run) return null;
  const { campaignId, ...inputs } = run;
  const spec = readStoredSpec(campaignId, run.campaign.spec);
  const named = spec.cluster;
  // An import campaign is bound to no cluster (it is never submitted); the one its spec names was
  // checked to exist, and to be visible to its creator, when it was created.
  const cluster = run.campaign.cluster ??
    (run.campaign.execution === 'import' && typeof named === 'string' ? await prismaOf(db).cluster.findUnique({ where: { name: named }, select: SETTINGS }) : null);
  return {
    ...inputs,
    metrics: run.metrics as RunEnergyInputs['metrics'],
    configuration: { key: run.configuration.key, parameters: run.configuration.parameters as RunEnergyInputs['configuration']['parameters'] },
    campaign: { spec, execution: run.campaign.execution as RunEnergyInputs['campaign']['execution'] },
    // Stored by createCluster/upsertCluster as the API validated them.
    cluster: cluster && { id: cluster.id, name: cluster.name, carbon: (cluster.carbon ?? null) as ClusterCarbon | null, price: (cluster.price ?? null) as ClusterPrice | null },
  };
}

/** Another job on the same cluster that may have been on nodes during a span, with its node list and when it surely loaded them. */
export interface NeighbourJob {
  runId: string;
  nodeList: string;
  /**
   * When it surely loaded its nodes (Unix ms): its idle baseline and workload as its job script
   * measured them, where known (to the nanosecond); else Slurm's start and end, which are whole
   * seconds, each moved a second inward (end: now while it runs) — so that back-to-back jobs,
   * whose Slurm times touch, do not look overlapping.
   */
  busyFromMs: number;
  busyToMs: number;
}

/** Slurm reports job start and end in whole seconds. */
const SLURM_TIME_RESOLUTION_MS = 1000;

/**
 * The other runs on a run's cluster whose jobs may have been on nodes during [fromMs, toMs], with
 * their node lists and busy times; callers intersect the node lists and the busy times.
 */
export async function listNeighbourJobs(db: Database, runId: string, fromMs: number, toMs: number): Promise<NeighbourJob[]> {
  const rows = await poolOf(db).query<{
    id: string; node_list: string; started_ms: number; ended_ms: number | null; from_ns: string | null; to_ns: string | null;
  }>(
    `SELECT o.id, o.node_list, extract(epoch FROM o.started_at) * 1000 AS started_ms, extract(epoch FROM o.ended_at) * 1000 AS ended_ms,
            coalesce(o.idle_start_ns, o.workload_start_ns)::text AS from_ns, o.workload_end_ns::text AS to_ns
     FROM runs r
     JOIN campaigns c ON c.id = r.campaign_id
     JOIN runs o ON o.id <> r.id AND o.node_list IS NOT NULL AND o.started_at IS NOT NULL
       AND o.started_at < to_timestamp(($3::float8 + $4::float8) / 1000.0) AND (o.ended_at IS NULL OR o.ended_at > to_timestamp(($2::float8 - $4::float8) / 1000.0))
     JOIN campaigns oc ON oc.id = o.campaign_id AND oc.cluster_id = c.cluster_id
     WHERE r.id = $1`,
    [runId, fromMs, toMs, SLURM_TIME_RESOLUTION_MS],
  );
  return rows.rows.map((r) => {
    if (r.from_ns !== null && r.to_ns !== null) {
      return { runId: r.id, nodeList: r.node_list, busyFromMs: Number(BigInt(r.from_ns) / 1000n) / 1000, busyToMs: Number(BigInt(r.to_ns) / 1000n) / 1000 };
    }
    const endedMs = r.ended_ms === null ? Date.now() : Number(r.ended_ms);
    return { runId: r.id, nodeList: r.node_list, busyFromMs: Number(r.started_ms) + SLURM_TIME_RESOLUTION_MS, busyToMs: endedMs - SLURM_TIME_RESOLUTION_MS };
  });
}

/**
 * What a run's figures are computed from beyond its own rows (its telemetry, marks, windows, nodes,
 * campaign): read from the cluster when they are computed, and stored beside them, as they were
 * read. None of it marks the figures stale when it changes — a neighbour's job ends, a cluster's
 * price is edited — so the evidence bundle writes these, not what the cluster holds at export.
 */
export interface RunEnergyContext {
  /** The other jobs that may have shared the run's nodes (listNeighbourJobs). */
  neighbours: readonly NeighbourJob[];
  /** Its cluster's carbon and price settings; null: no cluster. */
  cluster: { carbon: ClusterCarbon | null; price: ClusterPrice | null } | null;
  /** Its cluster's carbon-intensity series around the window (readCarbonIntensityAround). */
  carbonIntensity: readonly CarbonIntensityRow[];
}

/** A run's figures as stored: the indexed columns, the whole result and what it was computed from beyond the run's rows. */
export interface RunEnergyFigures {
  timeS: number;
  energyJ: number;
  method: string;
  coverage: number;
  /** Everything GET /v1/runs/:id/energy shows, as JSON. */
  result: Record<string, unknown>;
  /** Absent: not kept (figures a test stores as they would have been before erg kept it). */
  context?: RunEnergyContext;
}

/**
 * Stores (or replaces) a run's figures computed from `batchesSeen` telemetry batches (countRunBatches,
 * read before its inputs). Figures computed from more batches are never replaced: two overlapping
 * recomputes of one run may finish in either order, and the one that read fewer must not win.
 * Returns whether they were stored.
 */
export async function storeRunEnergy(db: Database, runId: string, figures: RunEnergyFigures, batchesSeen: number): Promise<boolean> {
  const { rowCount } = await poolOf(db).query(
    `INSERT INTO run_energy (run_id, time_s, energy_j, method, coverage, result, context, batches_seen) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (run_id) DO UPDATE SET computed_at = now(), time_s = EXCLUDED.time_s, energy_j = EXCLUDED.energy_j,
       method = EXCLUDED.method, coverage = EXCLUDED.coverage, result = EXCLUDED.result, context = EXCLUDED.context, batches_seen = EXCLUDED.batches_seen
     WHERE run_energy.batches_seen <= EXCLUDED.batches_seen`,
    [runId, figures.timeS, figures.energyJ, figures.method, figures.coverage, JSON.stringify(figures.result), figures.context ? JSON.stringify(figures.context) : null, batchesSeen],
  );
  return (rowCount ?? 0) > 0;
}

/**
 * Forgets a run's figures (its telemetry is gone), unless they were computed from more than
 * `batchesSeen` batches; without it, whatever they were computed from. (No numeric default: the
 * column is an INTEGER, and a bound past its range is an error in Postgres, not "no bound".)
 */
export async function deleteRunEnergy(db: Database, runId: string, batchesSeen?: number): Promise<void> {
  if (batchesSeen === undefined) await poolOf(db).query('DELETE FROM run_energy WHERE run_id = $1', [runId]);
  else await poolOf(db).query('DELETE FROM run_energy WHERE run_id = $1 AND batches_seen <= $2', [runId, batchesSeen]);
}

/** How many telemetry batches a run has (they are only ever added): what its figures were computed from. */
export async function countRunBatches(db: Database, runId: string): Promise<number> {
  const { rows } = await poolOf(db).query<{ n: number }>('SELECT count(*)::int AS n FROM telemetry_batches WHERE run_id = $1', [runId]);
  return rows[0]!.n;
}

/**
 * Marks runs as having telemetry their energy figures have not seen, in the transaction that
 * stores it: a new row, or its version raised. Distinct ids in sorted order (lock order).
 */
export async function markEnergyDirty(client: Pick<pg.PoolClient, 'query'>, runIds: readonly string[]): Promise<void> {
  const ids = [...new Set(runIds)].sort();
  if (ids.length === 0) return;
  await client.query(
    `INSERT INTO run_energy_dirty (run_id) SELECT id FROM unnest($1::uuid[]) AS id ORDER BY id
     ON CONFLICT (run_id) DO UPDATE SET version = run_energy_dirty.version + 1`,
    [ids],
  );
}

/**
 * A run just finalized owes its energy figures over its new window, where it has telemetry to
 * compute them from: its marker is set (or raised), in the transaction that finalizes it, for the
 * scheduler's refresh (listStaleEnergyRuns). A run without telemetry has nothing to compute.
 */
export async function markEnergyDueAfterFinish(client: Pick<pg.PoolClient, 'query'>, runId: string): Promise<void> {
  await client.query(
    `INSERT INTO run_energy_dirty (run_id) SELECT $1::uuid WHERE EXISTS (SELECT 1 FROM telemetry_batches WHERE run_id = $1)
     ON CONFLICT (run_id) DO UPDATE SET version = run_energy_dirty.version + 1`,
    [runId],
  );
}

/** The run's dirty marker version (null: its figures have seen all its telemetry). Read before the inputs. */
export async function energyDirtyVersion(db: Database, runId: string): Promise<bigint | null> {
  const { rows } = await poolOf(db).query<{ version: string }>('SELECT version FROM run_energy_dirty WHERE run_id = $1', [runId]);
  return rows[0] ? BigInt(rows[0].version) : null;
}

/** Clears the marker if it is still at `version` (a batch stored since keeps it). */
export async function clearEnergyDirty(db: Database, runId: string, version: bigint): Promise<void> {
  await poolOf(db).query('DELETE FROM run_energy_dirty WHERE run_id = $1 AND version = $2', [runId, version.toString()]);
}

/**
 * Finalized runs whose telemetry changed after their figures were computed (a late batch, a
 * recompute that crashed), the longest-waiting first: what the scheduler recomputes each tick.
 */
export async function listStaleEnergyRuns(db: Database, limit: number): Promise<string[]> {
  const { rows } = await poolOf(db).query<{ run_id: string }>(
    `SELECT d.run_id FROM run_energy_dirty d JOIN runs r ON r.id = d.run_id
     WHERE r.finalized_at IS NOT NULL ORDER BY d.since, d.run_id LIMIT $1`,
    [limit],
  );
  return rows.map((r) => r.run_id);
}

/** Whether a finalized run's figures are behind its telemetry (a recompute is due). */
export async function isEnergyStale(db: Database, runId: string): Promise<boolean> {
  const { rows } = await poolOf(db).query(
    'SELECT 1 FROM run_energy_dirty d JOIN runs r ON r.id = d.run_id WHERE d.run_id = $1 AND r.finalized_at IS NOT NULL',
    [runId],
  );
  return rows.length > 0;
}

/** A run's stored figures and when they were computed; null when none exist. */
export async function findRunEnergy(
  db: Database, runId: string,
): Promise<{ result: Record<string, unknown>; computedAt: Date; cooldown: RunCooldown | null } | null> {
  // The cooldown is the run's (finalizing stores it), not its figures': it shows beside them.
  const rows = await poolOf(db).query<{ result: Record<string, unknown>; computed_at: Date; cooldown: RunCooldown | null }>(
    'SELECT e.result, e.computed_at, r.cooldown FROM run_energy e JOIN runs r ON r.id = e.run_id WHERE e.run_id = $1',
    [runId],
  );
  const r = rows.rows[0];
  return r ? { result: r.result, computedAt: r.computed_at, cooldown: r.cooldown } : null;
}

/**
 * What a run's stored figures were computed from beyond its rows (RunEnergyContext), as it was
 * read then; null when it has no figures, or figures stored before erg kept it. The evidence bundle's.
 */
export async function findRunEnergyContext(db: Database, runId: string): Promise<RunEnergyContext | null> {
  const { rows } = await poolOf(db).query<{ context: RunEnergyContext | null }>('SELECT context FROM run_energy WHERE run_id = $1', [runId]);
  return rows[0]?.context ?? null;
}

/**
 * One configuration of a campaign with one of its completed runs and that run's figures;
 * `runId` and `result` are null for a configuration without completed runs, `result` also for a
 * completed run without figures. `result` holds only the figures statistics count
 * (counted-figures.ts, COUNTED_FIGURES: the stored result's timeS, energyJ, edpJs, ed2pJs2,
 * avgPowerW, coverage, components and flags, and of its carbon and cost `carbonG` = carbon.gCO2e,
 * `costTotal`, `costCurrency` and `costPerKWh`, and of its validity `valid`, `excluded`, `reasons`
 * and the gates it `failed` — null where none was checked), not the whole record
 * GET /v1/runs/{id}/energy shows. Rows of one configuration share its `parameters`.
 */
export interface ConfigurationEnergyRow {
  key: string;
  parameters: Record<string, unknown>;
  position: number;
  runId: string | null;
  repetition: number | null;
  metrics: Record<string, number | null> | null;
  result: Record<string, unknown> | null;
  /** Slurm's node list for the run (e.g. "gh-[001-002]"); null before it started or for imports. */
  nodeList: string | null;
}

/** The figures that count of a run's stored result (counted-figures.ts), in SQL, from its members read once (`m`). */
const COUNTED_FIGURES_SQL = countedFiguresSql('e.result', 'm');
const COUNTED_MEMBERS_SQL = countedMembersSql('e.result', 'm');

/** One of a campaign's configurations as the results read it (listCampaignConfigurationRows). */
export interface ConfigurationRecord {
  id: string;
  key: string;
  parameters: Record<string, unknown>;
  position: number;
}

/** One completed run with the figures that count of its stored result (listCompletedRunFigures). */
export interface CompletedRunFigures {
  configurationId: string;
  runId: string;
  repetition: number;
  metrics: Record<string, number | null> | null;
  nodeList: string | null;
  /** The figures that count (COUNTED_FIGURES); null when the run has no stored figures. */
  figures: Record<string, unknown> | null;
}

/** A campaign's configurations, by position. */
export async function listCampaignConfigurationRows(db: Database, campaignId: string): Promise<ConfigurationRecord[]> {
  const { rows } = await poolOf(db).query<ConfigurationRecord>(
    'SELECT id, key, parameters, position FROM configurations WHERE campaign_id = $1 ORDER BY position',
    [campaignId],
  );
  return rows;
}

/**
 * A campaign's completed runs with the figures that count, in no particular order; only those of
 * `runIds` when given (the runs a results reader knows changed: packages/results inputs-snapshot.ts).
 * A run of `runIds` that is not completed (any more) is simply not among them.
 */
export async function listCompletedRunFigures(db: Database, campaignId: string, runIds?: readonly string[]): Promise<CompletedRunFigures[]> {
  const { rows } = await poolOf(db).query<CompletedRunFigures>(
    `SELECT r.configuration_id AS "configurationId", r.id AS "runId", r.repetition, r.metrics, r.node_list AS "nodeList",
            CASE WHEN e.run_id IS NOT NULL THEN ${COUNTED_FIGURES_SQL} END AS figures
     FROM runs r LEFT JOIN run_energy e ON e.run_id = r.id LEFT JOIN LATERAL ${COUNTED_MEMBERS_SQL} ON true
     WHERE r.campaign_id = $1 AND r.state = 'completed'${runIds ? ' AND r.id = ANY($2::uuid[])' : ''}`,
    runIds ? [campaignId, runIds] : [campaignId],
  );
  return rows;
}

/**
 * The rows of listConfigurationEnergies from its two reads: every configuration by position, each
 * with its completed runs by repetition, or one row without a run. `rowOf` makes a run's row (a
 * reader that keeps rows between reads passes one that gives back the row it made before).
 */
export function configurationEnergyRows(
  configurations: readonly ConfigurationRecord[], runs: Iterable<CompletedRunFigures>,
  rowOf: (c: ConfigurationRecord, r: CompletedRunFigures) => ConfigurationEnergyRow = configurationRunRow,
): ConfigurationEnergyRow[] {
  const byConfiguration = new Map<string, CompletedRunFigures[]>();
  for (const r of runs) {
    const list = byConfiguration.get(r.configurationId);
    if (list) list.push(r);
    else byConfiguration.set(r.configurationId, [r]);
  }
  const rows: ConfigurationEnergyRow[] = [];
  for (const c of configurations) {
    const completed = byConfiguration.get(c.id);
    if (!completed) {
      rows.push({ key: c.key, parameters: c.parameters, position: c.position, runId: null, repetition: null, metrics: null, result: null, nodeList: null });
      continue;
    }
    // Ties (one repetition twice) fall back to the run id, so that every read orders them alike.
    completed.sort((a, b) => a.repetition - b.repetition || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0));
    for (const r of completed) rows.push(rowOf(c, r));
  }
  return rows;
}

/** A completed run's row of listConfigurationEnergies. */
export function configurationRunRow(c: ConfigurationRecord, r: CompletedRunFigures): ConfigurationEnergyRow {
  return { key: c.key, parameters: c.parameters, position: c.position, runId: r.runId, repetition: r.repetition, metrics: r.metrics, result: r.figures, nodeList: r.nodeList };
}

/**
 * Every configuration of a campaign with its completed runs' figures, by position and repetition;
 * two statements, whatever the number of runs. Each run brings only the figures that count and no
 * copy of its configuration: for 100,000 runs reading whole results, with the parameters once per
 * run, took 3 s and 1 GB of the API's memory.
 */
export async function listConfigurationEnergies(db: Database, campaignId: string): Promise<ConfigurationEnergyRow[]> {
  const [configurations, runs] = await Promise.all([listCampaignConfigurationRows(db, campaignId), listCompletedRunFigures(db, campaignId)]);
  return configurationEnergyRows(configurations, runs);
}
