import { listConfigurationEnergies, type Database } from '@erg/db';
import { campaignVerdict, verdictFor, type RegressionPolicy, type Verdict } from '@erg/regress';
import { countedRuns } from './load-campaign-results';

/** Per configuration key, the times and energies that count — by the same rule as the campaign's results. */
async function measuredByKey(db: Database, campaignId: string): Promise<Map<string, { time: number[]; energy: number[] }>> {
  const { configs } = countedRuns(await listConfigurationEnergies(db, campaignId));
  const byKey = new Map<string, { time: number[]; energy: number[] }>();
  for (const c of configs) {
    if (c.runs.length === 0) continue;
    byKey.set(c.key, {
      time: c.runs.flatMap((r) => (r.timeS === null ? [] : [r.timeS])),
      energy: c.runs.flatMap((r) => (r.energyJ === null ? [] : [r.energyJ])),
    });
  }
  return byKey;
}

/**
 * A campaign judged against a baseline campaign: for every configuration key both have, a verdict
 * on time and one on energy over their completed, measured runs; then one campaign verdict.
 * Keys only one side has are listed, not judged.
 */
export async function campaignVerdictView(db: Database, campaignId: string, baselineId: string, policy: RegressionPolicy) {
  const [candidate, baseline] = await Promise.all([measuredByKey(db, campaignId), measuredByKey(db, baselineId)]);
  const configurations: { key: string; verdicts: Verdict[] }[] = [];
  for (const [key, c] of candidate) {
    const b = baseline.get(key);
    if (!b) continue;
    configurations.push({ key, verdicts: [verdictFor('time', b.time, c.time, policy), verdictFor('energy', b.energy, c.energy, policy)] });
  }
  return {
    campaignId,
    baselineId,
    policy,
    ...campaignVerdict(configurations),
    configurations,
    onlyInCandidate: [...candidate.keys()].filter((k) => !baseline.has(k)),
    onlyInBaseline: [...baseline.keys()].filter((k) => !candidate.has(k)),
  };
}
