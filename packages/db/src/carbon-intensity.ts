import type pg from 'pg';
import { poolOf, withTransaction, type Database } from './client';

/**
 * A cluster's grid carbon intensity over time (cluster_carbon_intensity): one row per point, a
 * value holding from its time until the next point's. Written by PUT
 * /v1/clusters/:name/carbon-intensity, read when a run's energy is computed.
 */

/** One point: Unix ms and gCO2e per kWh. */
export interface CarbonIntensityRow {
  tMs: number;
  gCO2ePerKWh: number;
}

/** The stored series in short; null times when there are no points. */
export interface CarbonIntensitySummary {
  points: number;
  fromMs: number | null;
  toMs: number | null;
}

/** What storing points did: how many stored points it replaced, and the series after it. */
export type CarbonIntensityWrite =
  | { ok: true; replaced: number; series: CarbonIntensitySummary }
  /** Nothing stored: the series would have held `wouldHold` points, more than allowed. */
  | { ok: false; wouldHold: number };

/**
 * Stores points (sorted or not; times distinct) in the cluster's series. Without `replace`, every
 * stored point from the earliest to the latest given time is replaced by the given ones and the
 * rest kept; with it, the series becomes exactly the given points. Refused as a whole — nothing
 * changes — when the series would then hold more than `maxPoints`. Writes to one cluster's series
 * are serialised (its row is locked), so the bound holds under concurrent writes.
 */
export async function putCarbonIntensity(
  db: Database, clusterId: string, points: readonly CarbonIntensityRow[], options: { replace: boolean; maxPoints: number },
): Promise<CarbonIntensityWrite> {
  return withTransaction(db, async (client) => {
    await client.query('SELECT 1 FROM clusters WHERE id = $1 FOR UPDATE', [clusterId]);
    let replaced = 0;
    if (options.replace) {
      replaced = (await client.query('DELETE FROM cluster_carbon_intensity WHERE cluster_id = $1', [clusterId])).rowCount ?? 0;
    } else if (points.length > 0) {
      let first = Infinity;
      let last = -Infinity;
      for (const p of points) {
        if (p.tMs < first) first = p.tMs;
        if (p.tMs > last) last = p.tMs;
      }
      replaced = (await client.query(
        `DELETE FROM cluster_carbon_intensity WHERE cluster_id = $1 AND t >= to_timestamp($2::float8 / 1000)::timestamptz(3) AND t <= to_timestamp($3::float8 / 1000)::timestamptz(3)`,
        [clusterId, first, last],
      )).rowCount ?? 0;
    }
    if (points.length > 0) {
      await client.query(
        `INSERT INTO cluster_carbon_intensity (cluster_id, t, g_co2e_per_kwh)
         SELECT $1, to_timestamp(t::float8 / 1000)::timestamptz(3), v FROM unnest($2::float8[], $3::float8[]) AS p(t, v)
         ON CONFLICT (cluster_id, t) DO UPDATE SET g_co2e_per_kwh = EXCLUDED.g_co2e_per_kwh`,
        [clusterId, points.map((p) => p.tMs), points.map((p) => p.gCO2ePerKWh)],
      );
    }
    const series = await summaryOf(client, clusterId);
    if (series.points > options.maxPoints) {
      // Thrown, so that the transaction is rolled back: a refused request changes nothing.
      throw new SeriesTooLong(series.points);
    }
    return { ok: true as const, replaced, series };
  }).catch((err: unknown) => {
    if (err instanceof SeriesTooLong) return { ok: false as const, wouldHold: err.points };
    throw err;
  });
}

/** Thrown inside the transaction so that withTransaction rolls it back. */
class SeriesTooLong extends Error {
  constructor(readonly points: number) {
    super(`the series would hold ${points} points`);
  }
}

async function summaryOf(client: pg.PoolClient, clusterId: string): Promise<CarbonIntensitySummary> {
  const r = await client.query<{ n: number; from_ms: string | null; to_ms: string | null }>(
    `SELECT count(*)::int AS n, (extract(epoch FROM min(t)) * 1000)::text AS from_ms, (extract(epoch FROM max(t)) * 1000)::text AS to_ms
     FROM cluster_carbon_intensity WHERE cluster_id = $1`,
    [clusterId],
  );
  const row = r.rows[0]!;
  return { points: row.n, fromMs: row.from_ms === null ? null : Math.round(Number(row.from_ms)), toMs: row.to_ms === null ? null : Math.round(Number(row.to_ms)) };
}

/** The stored series of each of these clusters in short (every id gets one; no points: 0 and null times). */
export async function carbonIntensitySummaries(db: Database, clusterIds: readonly string[]): Promise<Map<string, CarbonIntensitySummary>> {
  const out = new Map<string, CarbonIntensitySummary>(clusterIds.map((id) => [id, { points: 0, fromMs: null, toMs: null }]));
  if (clusterIds.length === 0) return out;
  const r = await poolOf(db).query<{ cluster_id: string; n: number; from_ms: string; to_ms: string }>(
    `SELECT cluster_id, count(*)::int AS n, (extract(epoch FROM min(t)) * 1000)::text AS from_ms, (extract(epoch FROM max(t)) * 1000)::text AS to_ms
     FROM cluster_carbon_intensity WHERE cluster_id = ANY($1::uuid[]) GROUP BY cluster_id`,
    [clusterIds],
  );
  for (const row of r.rows) out.set(row.cluster_id, { points: row.n, fromMs: Math.round(Number(row.from_ms)), toMs: Math.round(Number(row.to_ms)) });
  return out;
}

/** The points of a cluster's series from `fromMs` to `toMs` (inclusive, either open), in time order, at most `limit`. */
export async function listCarbonIntensity(
  db: Database, clusterId: string, range: { fromMs?: number | undefined; toMs?: number | undefined; limit: number },
): Promise<CarbonIntensityRow[]> {
  const r = await poolOf(db).query<{ t_ms: string; v: number }>(
    `SELECT (extract(epoch FROM t) * 1000)::text AS t_ms, g_co2e_per_kwh AS v FROM cluster_carbon_intensity
     WHERE cluster_id = $1 AND ($2::float8 IS NULL OR t >= to_timestamp($2::float8 / 1000)::timestamptz(3)) AND ($3::float8 IS NULL OR t <= to_timestamp($3::float8 / 1000)::timestamptz(3))
     ORDER BY t LIMIT $4`,
    [clusterId, range.fromMs ?? null, range.toMs ?? null, range.limit],
  );
  return r.rows.map((row) => ({ tMs: Math.round(Number(row.t_ms)), gCO2ePerKWh: row.v }));
}

/**
 * The points that decide the intensity over [fromMs, toMs], in time order: those inside it, the
 * two before it (the one holding at fromMs, and the one before that, whose spacing says how long
 * the last point of a series holds) and the first after it (where the last one inside stops).
 */
export async function readCarbonIntensityAround(db: Database, clusterId: string, fromMs: number, toMs: number): Promise<CarbonIntensityRow[]> {
  const r = await poolOf(db).query<{ t_ms: string; v: number }>(
    `SELECT t_ms, v FROM (
       (SELECT t, g_co2e_per_kwh AS v FROM cluster_carbon_intensity WHERE cluster_id = $1 AND t < to_timestamp($2::float8 / 1000)::timestamptz(3) ORDER BY t DESC LIMIT 2)
       UNION ALL
       (SELECT t, g_co2e_per_kwh FROM cluster_carbon_intensity WHERE cluster_id = $1 AND t >= to_timestamp($2::float8 / 1000)::timestamptz(3) AND t <= to_timestamp($3::float8 / 1000)::timestamptz(3))
       UNION ALL
       (SELECT t, g_co2e_per_kwh FROM cluster_carbon_intensity WHERE cluster_id = $1 AND t > to_timestamp($3::float8 / 1000)::timestamptz(3) ORDER BY t LIMIT 1)
     ) p(t, v), LATERAL (SELECT (extract(epoch FROM p.t) * 1000)::text AS t_ms) ms
     ORDER BY p.t`,
    [clusterId, fromMs, toMs],
  );
  return r.rows.map((row) => ({ tMs: Math.round(Number(row.t_ms)), gCO2ePerKWh: row.v }));
}
