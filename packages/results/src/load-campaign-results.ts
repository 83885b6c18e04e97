import { listConfigurationEnergies, type Database } from '@erg/db';
import { campaignResults } from '@erg/energy';

/**
 * A campaign's results: per configuration, statistics over its completed runs that have energy
 * figures; the Pareto front on (mean time, mean energy); the best configurations and the trade-off
 * between the fastest and the most frugal. One query, whatever the number of runs.
 */
export async function campaignResultsView(db: Database, campaignId: string) {
  const rows = await listConfigurationEnergies(db, campaignId);
  const configs = new Map<string, { key: string; parameters: Record<string, unknown>; runs: any[] }>();
  for (const row of rows) {
    const c = configs.get(row.key) ?? { key: row.key, parameters: row.parameters, runs: [] };
    configs.set(row.key, c);
    if (row.runId && row.result) {
      const e = row.result as Record<string, any>;
      c.runs.push({
        timeS: e.timeS, energyJ: e.energyJ, edpJs: e.edpJs, ed2pJs2: e.ed2pJs2, avgPowerW: e.avgPowerW, metrics: row.metrics ?? {},
        ...(e.components && typeof e.components === 'object' ? { components: e.components } : {}),
      });
    }
  }
  return campaignResults([...configs.values()]);
}
