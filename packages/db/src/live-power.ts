import { poolOf, type Database } from './client';

/** The last sample of one power sensor of a run on one node. */
export interface PowerSample {
  node: string;
  sensor: string;
  /** Unix ms. */
  t: number;
  /** Watts. */
  w: number;
}

/**
 * SQL for a JSON array of the newest sample of each `*.power` sensor of the run `runIdSql` whose
 * chunk ends at or after `sinceSql` (Unix ms); decode with `decodePowerSamples`. Only the last 8
 * bytes of each chunk's value array leave the database (chunks are time-sorted, so that is the
 * newest value), and the (run_id, t_last) index reads only the chunks of the recent window, however
 * long the run has been sending telemetry.
 */
export function lastPowerSamplesSql(runIdSql: string, sinceSql: string): string {
  return `(SELECT coalesce(json_agg(json_build_object('node', p.node, 'sensor', p.sensor, 't', p.t_last, 'v', p.v)), '[]'::json)
     FROM (SELECT DISTINCT ON (node, sensor) node, sensor, t_last, encode(substring(v FROM length(v) - 7), 'hex') AS v
           FROM telemetry_chunks
           WHERE run_id = ${runIdSql} AND t_last >= ${sinceSql} AND sensor LIKE '%.power'
           ORDER BY node, sensor, t_last DESC, seq DESC) p)`;
}

/** Rows of lastPowerSamplesSql → samples (the value is a little-endian float64 in hex). */
export function decodePowerSamples(json: { node: string; sensor: string; t: number; v: string }[] | null): PowerSample[] {
  return (json ?? []).map((s) => ({ node: s.node, sensor: s.sensor, t: s.t, w: Buffer.from(s.v, 'hex').readDoubleLE(0) }));
}

/** The newest sample of each power sensor of each run, newer than `sinceMs`; one statement for all runs. */
export async function readLastPowerSamples(db: Database, runIds: readonly string[], sinceMs: number): Promise<Map<string, PowerSample[]>> {
  const rows = await poolOf(db).query<{ id: string; campaign_id: string; power: { node: string; sensor: string; t: number; v: string }[] }>(
    `SELECT r.id, r.campaign_id, ${lastPowerSamplesSql('r.id', '$2::float8')} AS power FROM runs r WHERE r.id = ANY($1::uuid[])`,
    [runIds, sinceMs],
  );
  return new Map(rows.rows.map((r) => [r.id, decodePowerSamples(r.power)]));
}
