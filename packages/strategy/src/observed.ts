import type { ConfigurationAttempts } from '@erg/db';
import { objectiveFigure, type RunFigures } from '@erg/energy';
import { countedRuns } from '@erg/results';
import type { Objective } from '@erg/spec';

/**
 * What a strategy step sees of its campaign: per configuration, the measured objectives of the
 * runs whose figures count (the results' rule, @erg/results' countedRuns), its runs in flight and
 * those that ended without figures, and what its runs cost so far — and what a step did. Shared by
 * the adaptive step (step.ts) and the search step (search-step.ts).
 */

/** What one step of a campaign's strategy did. */
export interface AdaptStep {
  /** Which strategy stepped. */
  kind: 'adaptive' | 'search';
  /** Runs added for the scheduler to submit. */
  added: number;
  /** Pending runs cancelled because their configuration was decided before they were submitted. */
  withdrawn: number;
  /** Configurations still undecided (adaptive) or in flight (search). */
  undecided: number;
  /** Why the strategy stopped (it closed in this step), or null while it goes on. */
  stop: null | { why: string; reason: string };
}

const J_PER_KWH = 3.6e6;

/** One run's value of an objective, from the figures that count; null where it has none the log scale takes (> 0). */
function objectiveOf(f: RunFigures, o: Objective): number | null {
  const v = objectiveFigure(f, o);
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : null;
}

/** One configuration as a strategy sees it: its measured objectives, its attempts, what a run of it costs. */
export interface ObservedConfiguration {
  key: string;
  configurationId: string;
  /** Its position in the campaign's listed configurations: what the run order names it by. */
  position: number;
  parameters: Record<string, unknown>;
  /** Completed runs with both objectives (> 0). */
  runs: [number, number][];
  /** Runs in flight. */
  pending: number;
  /** Runs that ended without both objectives (failed, cancelled, or unmeasured). */
  failed: number;
  maxRepetition: number;
  /** The mean cost of its runs so far (for the node-hour and energy budgets). */
  perRun?: { nodeHours: number; energyKWh: number };
}

export interface Observed {
  configurations: ObservedConfiguration[];
  byKey: Map<string, ObservedConfiguration>;
  /** Completed and ended runs (in-flight ones are counted from `pending`). */
  spent: { runs: number; nodeHours: number; energyKWh: number };
}

/** The figures that count (the results' rule) and the attempts, per configuration in the campaign's order. */
export function observe(rows: Parameters<typeof countedRuns>[0], attempts: readonly ConfigurationAttempts[], objectives: readonly [Objective, Objective], nodesOf: (parameters: Record<string, unknown>) => number): Observed {
  const { configs } = countedRuns(rows);
  const byConfig = new Map(configs.map((c) => [c.key, c]));
  const spent = { runs: 0, nodeHours: 0, energyKWh: 0 };
  const configurations = attempts.map((a): ObservedConfiguration => {
    const figures = byConfig.get(a.key)?.runs ?? [];
    const nodes = nodesOf(byConfig.get(a.key)?.parameters ?? {});
    const runs: [number, number][] = [];
    let failed = a.endedUnsuccessfully;
    for (const f of figures) {
      const x = objectiveOf(f, objectives[0]);
      const y = objectiveOf(f, objectives[1]);
      if (x !== null && y !== null) runs.push([x, y]);
      else failed++;
      spent.runs += 1;
      spent.nodeHours += ((f.timeS ?? 0) * nodes) / 3600;
      spent.energyKWh += (f.energyJ ?? 0) / J_PER_KWH;
    }
    spent.runs += a.endedUnsuccessfully;
    const timed = figures.filter((f) => typeof f.timeS === 'number');
    const perRun = timed.length > 0
      ? { nodeHours: (mean(timed.map((f) => f.timeS!)) * nodes) / 3600, energyKWh: mean(timed.map((f) => f.energyJ ?? 0)) / J_PER_KWH }
      : undefined;
    return {
      key: a.key, configurationId: a.configurationId, position: a.position, parameters: byConfig.get(a.key)?.parameters ?? {}, runs, pending: a.inFlight, failed, maxRepetition: a.maxRepetition,
      ...(perRun ? { perRun } : {}),
    };
  });
  return { configurations, byKey: new Map(configurations.map((c) => [c.key, c])), spent };
}

function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}


/** What adding runs to a configuration names it by: its id, its position (the run order's name) and its highest repetition. */
export function addTo(c: Pick<ObservedConfiguration, 'configurationId' | 'position' | 'maxRepetition'>, runs: number) {
  return { configurationId: c.configurationId, position: c.position, after: c.maxRepetition, runs };
}
