import { listConfigurationEnergies, type Database } from '@erg/db';
import { campaignVerdict, decideLook, sequentialVerdictFor, verdictFor, type ConfigurationLook, type RegressionPolicy, type Verdict } from '@erg/regress';
import { countedRuns } from '@erg/results';

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
  return verdictView(campaignId, baselineId, policy, configurations, candidate, baseline);
}

/** The verdict view of the configurations judged: the campaign verdict over them and the keys only one side has. */
function verdictView(campaignId: string, baselineId: string, policy: RegressionPolicy, configurations: { key: string; verdicts: Verdict[] }[], candidate: ReadonlyMap<string, unknown>, baseline: ReadonlyMap<string, unknown>) {
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

/**
 * One look of a sequential suite run (issue 16 §2): every configuration key both campaigns have,
 * time and energy, by @erg/regress's sequentialVerdictFor at the repetitions scheduled for it
 * (`repetitions`, by key); alpha is shared by all of the run's tests. Returns the verdict in the
 * campaign verdict's shape and what the run does next (decideLook).
 */
export async function sequentialCampaignVerdict(db: Database, campaignId: string, baselineId: string, policy: RegressionPolicy, repetitions: ReadonlyMap<string, number>) {
  const [candidate, baseline] = await Promise.all([measuredByKey(db, campaignId), measuredByKey(db, baselineId)]);
  const shared = [...candidate.keys()].filter((k) => baseline.has(k));
  const tests = Math.max(1, shared.length * 2);
  const looks: ConfigurationLook[] = shared.map((key) => {
    const b = baseline.get(key)!;
    const c = candidate.get(key)!;
    const r = repetitions.get(key) ?? c.time.length;
    return { key, repetitions: r, verdicts: [sequentialVerdictFor('time', b.time, c.time, r, policy, tests), sequentialVerdictFor('energy', b.energy, c.energy, r, policy, tests)] };
  });
  const configurations = looks.map((l) => ({ key: l.key, verdicts: l.verdicts.map((v) => v.verdict) }));
  return { view: verdictView(campaignId, baselineId, policy, configurations, candidate, baseline), decision: decideLook(looks) };
}
