import type { Database } from '@erg/db';
import { campaignResults } from '@erg/energy';

/**
 * A campaign's results: per configuration, statistics over its completed runs that have energy
 * figures; the Pareto front on (mean time, mean energy); the best configurations and the trade-off
 * between the fastest and the most frugal. One query, whatever the number of runs.
 */
export async function campaignResultsView(db: Database, campaignId: string) {
  const rows = await db.pool.query<{
    key: string; parameters: Record<string, unknown>; position: number; run_id: string | null; state: string | null;
    metrics: Record<string, number | null> | null; result: Record<string, any> | null;
  }>(
    `SELECT c.key, c.parameters, c.position, r.id AS run_id, r.state::text AS state, r.metrics, e.result
     FROM configurations c
     LEFT JOIN runs r ON r.configuration_id = c.id AND r.state = 'completed'
     LEFT JOIN run_energy e ON e.run_id = r.id
     WHERE c.campaign_id = $1
     ORDER BY c.position, r.repetition`,
    [campaignId],
  );
  const configs = new Map<string, { key: string; parameters: Record<string, unknown>; runs: any[] }>();
  for (const row of rows.rows) {
    const c = configs.get(row.key) ?? { key: row.key, parameters: row.parameters, runs: [] };
    configs.set(row.key, c);
    if (row.run_id && row.result) {
      const e = row.result;
      c.runs.push({
        timeS: e.timeS, energyJ: e.energyJ, edpJs: e.edpJs, ed2pJs2: e.ed2pJs2, avgPowerW: e.avgPowerW, metrics: row.metrics ?? {},
        ...(e.components && typeof e.components === 'object' ? { components: e.components } : {}),
      });
    }
  }
  return campaignResults([...configs.values()]);
}
