import { UNMARKED_PHASE, type CampaignPhases, type ConfigurationPhases, type PhaseComparison, type PhaseDifference, type PhaseEnergy, type PhaseSummary, type RunPhases } from '@erg/spec';
import { EnergyInputError } from './errors';
import { summarize } from './stats';

// The result types are the API's: one definition, in @erg/spec.
export type { CampaignPhases, ConfigurationPhases, PhaseComparison, PhaseDifference, PhaseSummary } from '@erg/spec';

/** One configuration with its runs' phases. */
export interface ConfigurationPhaseRuns {
  key: string;
  runs: readonly RunPhases[];
}

/** The campaign's runtime- and energy-optimal configuration keys (campaignResults' `best`). */
export interface OptimalConfigurations {
  time: string;
  energy: string;
}

/**
 * A campaign's energy per phase: per configuration and phase, n, mean, spread and 95 % Student-t
 * interval of its energy and time over the runs (a run in which the phase did not occur counts
 * 0 J and 0 s); and which phases explain the energy the runtime-optimal configuration spends
 * beyond the energy-optimal one. That comparison uses self energies: they partition each run's
 * energy, so the phases' differences add up to the total difference (nested phases would count
 * twice).
 */
export function campaignPhases(configs: readonly ConfigurationPhaseRuns[], optimal: OptimalConfigurations | null): CampaignPhases {
  const byKey = new Map<string, IndexedRuns>();
  for (const c of configs) {
    if (byKey.has(c.key)) throw new EnergyInputError('ERG_ENERGY_BAD_ARGUMENT', `configuration key ${JSON.stringify(c.key)} appears twice; keys must be unique`);
    byKey.set(c.key, indexRuns(c));
  }
  let comparison: PhaseComparison | null = null;
  if (optimal) {
    const [fast, frugal] = [optimal.time, optimal.energy].map((key) => {
      const c = byKey.get(key);
      if (!c) throw new EnergyInputError('ERG_ENERGY_BAD_ARGUMENT', `optimal configuration ${JSON.stringify(key)} is not among the configurations given; pass the campaign's best.time and best.energy`);
      return c;
    }) as [IndexedRuns, IndexedRuns];
    comparison = comparePhases(fast, frugal);
  }
  return { configurations: configs.map((c) => summarizeConfiguration(byKey.get(c.key)!)), comparison };
}

/**
 * A configuration's runs with each run's phases by name. Built once, so that every later lookup
 * of a name in a run is O(1): looking each name up in each run's list instead costs names ×
 * phases, which a run with 25,000 phase names (issue 27) made seconds.
 */
interface IndexedRuns {
  key: string;
  runs: readonly RunPhases[];
  phases: ReadonlyMap<string, PhaseEnergy>[];
  /** The names that occur in any of its runs. */
  names: ReadonlySet<string>;
}

function indexRuns(c: ConfigurationPhaseRuns): IndexedRuns {
  const names = new Set<string>();
  const phases = c.runs.map((r) => {
    const byName = new Map<string, PhaseEnergy>();
    for (const p of r.phases) {
      const name = p.name;
      // A name listed twice in one run (not something computeRunPhases writes): the first counts, as a search would find it.
      if (!byName.has(name)) byName.set(name, p);
      names.add(name);
    }
    return byName;
  });
  return { key: c.key, runs: c.runs, phases, names };
}

/** One configuration's phases summarised over its runs: by name, the unmarked time last. */
function summarizeConfiguration(c: IndexedRuns): ConfigurationPhases {
  const phases: PhaseSummary[] = sortedNames([c.names]).map((name) => {
    const of = c.phases.map((byName) => byName.get(name));
    return {
      name,
      energyJ: summarize(of.map((p) => p?.energyJ ?? 0)),
      selfEnergyJ: summarize(of.map((p) => p?.selfEnergyJ ?? 0)),
      timeS: summarize(of.map((p) => p?.timeS ?? 0)),
    };
  });
  phases.push({
    name: UNMARKED_PHASE,
    energyJ: summarize(c.runs.map((r) => r.unmarked.energyJ)),
    selfEnergyJ: summarize(c.runs.map((r) => r.unmarked.energyJ)),
    timeS: summarize(c.runs.map((r) => r.unmarked.timeS)),
  });
  return { key: c.key, n: c.runs.length, energyJ: summarize(c.runs.map((r) => r.energyJ)), phases };
}

/**
 * Per phase, the mean self energy of the runtime-optimal configuration's runs minus the
 * energy-optimal one's, and its share of the total difference; the phase that explains most of
 * the difference (the largest in its direction) first. null when either has no runs.
 */
function comparePhases(fast: IndexedRuns, frugal: IndexedRuns): PhaseComparison | null {
  if (fast.runs.length === 0 || frugal.runs.length === 0) return null;
  const meanSelf = (c: IndexedRuns, name: string) =>
    summarize(c.runs.map((r, i) => (name === UNMARKED_PHASE ? r.unmarked.energyJ : (c.phases[i]!.get(name)?.selfEnergyJ ?? 0)))).mean!;
  const differenceJ = summarize(fast.runs.map((r) => r.energyJ)).mean! - summarize(frugal.runs.map((r) => r.energyJ)).mean!;
  const direction = Math.sign(differenceJ) || 1;
  const phases: PhaseDifference[] = [...sortedNames([fast.names, frugal.names]), UNMARKED_PHASE].map((name) => {
    const runtimeOptimalJ = meanSelf(fast, name);
    const energyOptimalJ = meanSelf(frugal, name);
    const d = runtimeOptimalJ - energyOptimalJ;
    return { name, runtimeOptimalJ, energyOptimalJ, differenceJ: d, shareOfDifference: differenceJ !== 0 ? d / differenceJ : null };
  });
  phases.sort((a, b) => direction * (b.differenceJ - a.differenceJ) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { runtimeOptimal: fast.key, energyOptimal: frugal.key, differenceJ, phases };
}

/** The names of these sets together, sorted. */
function sortedNames(sets: readonly ReadonlySet<string>[]): string[] {
  const names = new Set<string>();
  for (const s of sets) for (const name of s) names.add(name);
  return [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
