import { listConfigurationEnergies, type ConfigurationEnergyRow, type Database } from '@erg/db';
import { campaignResults, countedFigures, type RunFigures, type StoredFigures } from '@erg/energy';
import type { RunLeftOut } from '@erg/spec';

/** Each configuration's completed runs with the figures that count (countedFigures), and the runs left out and why. */
export function countedRuns(rows: readonly ConfigurationEnergyRow[]): {
  configs: { key: string; parameters: Record<string, unknown>; runs: RunFigures[] }[];
  runsLeftOut: RunLeftOut[];
} {
  const configs = new Map<string, { key: string; parameters: Record<string, unknown>; runs: RunFigures[] }>();
  const runsLeftOut: RunLeftOut[] = [];
  for (const row of rows) {
    const c = configs.get(row.key) ?? { key: row.key, parameters: row.parameters, runs: [] };
    configs.set(row.key, c);
    if (!row.runId) continue;
    // Stored by refreshRunEnergy (store-run-energy.ts) in the shape of @erg/spec's RunEnergy.
    const counted = countedFigures(row.result as StoredFigures | null);
    if (counted.leftOut) runsLeftOut.push({ runId: row.runId, key: row.key, repetition: row.repetition ?? 0, leftOut: counted.leftOut.what, why: counted.leftOut.why });
    c.runs.push({ ...counted.figures, metrics: row.metrics ?? {} });
  }
  return { configs: [...configs.values()], runsLeftOut };
}

/**
 * A campaign's results: per configuration, statistics over its completed runs by the one rule of
 * which figures count (a run whose energy was not measured never enters them as 0 J); the Pareto
 * front on (mean time, mean energy); the best configurations and the trade-off between the fastest
 * and the most frugal; the runs left out and why. One query, whatever the number of runs.
 */
export async function campaignResultsView(db: Database, campaignId: string) {
  const { configs, runsLeftOut } = countedRuns(await listConfigurationEnergies(db, campaignId));
  return { ...campaignResults(configs), runsLeftOut };
}
