import { addAdaptiveRuns, closeStrategy, storeDecisions, type DecisionToStore } from '@erg/db';
import type { CampaignRunOrder, SearchStrategy } from '@erg/spec';
import { addTo, type AdaptStep, type Observed, type ObservedConfiguration } from './observed';
import type { SearchCandidate, SearchObservation, SearchStep } from './search';
import { SearchStepFailed, type SearchStepRunner } from './search-runner';

type Tx = Parameters<typeof addAdaptiveRuns>[0];

/** Runs a search keeps in flight when neither its spec nor the cluster says how many fit. */
export const DEFAULT_SEARCH_PARALLEL = 4;

/**
 * The first design of a search without `initialConfigurations`: a fifth of what its budget can
 * try, at least 4 — enough points to fit the surrogate to, and most of the budget left for it.
 */
export function initialDesignOf(strategy: Pick<SearchStrategy, 'initialConfigurations' | 'repetitions' | 'budget'>): number {
  return strategy.initialConfigurations ?? Math.max(4, Math.round(strategy.budget.maxRuns / strategy.repetitions / 5));
}

/**
 * One step of a search campaign (`strategy: search`), under the campaign's row lock like the
 * adaptive step: the configurations it tried and their measured objectives → searchStep
 * (search.ts) → the configurations it proposes added as pending runs (`repetitions` each, through
 * the same claim/submit path), and every tried configuration's standing stored (on the observed
 * front, dominated by a named one, or in flight). Free slots are `parallel` minus the runs in
 * flight, cut to what the node-hour and energy budgets still pay for at the runs' mean cost so
 * far. The strategy closes once its budget is spent (or every configuration was tried) and
 * nothing is in flight: the last runs' figures still count for the front it reports.
 */
export async function searchCampaign(
  tx: Tx, campaignId: string, design: CampaignRunOrder, strategy: SearchStrategy, observed: Observed, parallel: number, run: SearchStepRunner,
): Promise<AdaptStep> {
  const inFlight = observed.configurations.reduce((s, c) => s + c.pending, 0);
  const afford = affordableRuns(strategy, observed, inFlight);
  const slots = Math.max(0, Math.min(parallel - inFlight, afford.runs));
  const tried = observed.configurations.filter((c) => c.runs.length + c.pending + c.failed > 0);
  const candidates: SearchCandidate[] = observed.configurations.map((c) => ({ key: c.key, parameters: c.parameters as SearchCandidate['parameters'] }));
  const observations: SearchObservation[] = tried.map((c) => ({ key: c.key, runs: c.runs, pending: c.pending, failed: c.failed }));
  let step: SearchStep;
  try {
    step = await run(
      { repetitions: strategy.repetitions, initialConfigurations: initialDesignOf(strategy), seed: strategy.seed, budget: { maxRuns: strategy.budget.maxRuns } },
      candidates,
      observations,
      { slots, spentRuns: observed.spent.runs },
    );
  } catch (err) {
    // A step that failed this way (past its time budget, its worker out of memory) would fail
    // again on the same results: the search stops with what it measured, and says why. Anything
    // else (a scheduler shutting down) rolls the step back, for a later step to take.
    if (!(err instanceof SearchStepFailed)) throw err;
    const reason = `the search stopped: its step failed (${err.message})`;
    await closeStrategy(tx, campaignId, reason);
    return { kind: 'search', added: 0, withdrawn: 0, undecided: 0, stop: { why: 'failed', reason } };
  }
  // The proposals' runs go in the campaign's run order: block r is repetition r of every proposal.
  const added = await addAdaptiveRuns(
    tx, campaignId, design,
    step.propose.map((key) => addTo(observed.byKey.get(key)!, strategy.repetitions)),
    'search: proposed where the results so far expect the front to improve most',
  );
  // searchStep proposes only untried configurations: they join the tried ones, their runs in flight.
  const proposed = step.propose.map((key) => ({ ...observed.byKey.get(key)!, pending: strategy.repetitions }));
  const standing = standings(
    [...tried, ...proposed],
    new Set(step.front),
    strategy.objectives,
  );
  await storeDecisions(tx, campaignId, observed.spent.runs, standing, { standing: true });
  const stop = step.stop ?? afford.stop;
  const closes = stop !== null && inFlight === 0 && added === 0;
  if (closes) await closeStrategy(tx, campaignId, stop.reason);
  return { kind: 'search', added, withdrawn: 0, undecided: standing.filter((d) => d.status === 'sampling').length, stop: closes ? stop : null };
}

/** How many more runs the node-hour and energy budgets pay for (runs in flight at the mean cost so far). */
function affordableRuns(strategy: SearchStrategy, observed: Observed, inFlight: number): { runs: number; stop: null | { why: 'budget'; reason: string } } {
  const costs = observed.configurations.flatMap((c) => (c.perRun ? [c.perRun] : []));
  if (costs.length === 0) return { runs: Number.POSITIVE_INFINITY, stop: null };
  const perRun = { nodeHours: mean(costs.map((c) => c.nodeHours)), energyKWh: mean(costs.map((c) => c.energyKWh)) };
  let runs = Number.POSITIVE_INFINITY;
  let stop: null | { why: 'budget'; reason: string } = null;
  const limit = (most: number | undefined, spent: number, each: number, what: string) => {
    if (most === undefined || !(each > 0)) return;
    const left = Math.floor((most - spent - inFlight * each) / each);
    if (left < runs) runs = Math.max(0, left);
    if (left <= 0 && stop === null) stop = { why: 'budget', reason: `the ${what} budget (${most}) is spent: ${spent.toPrecision(3)} used, another run costs about ${each.toPrecision(3)}` };
  };
  limit(strategy.budget.maxNodeHours, observed.spent.nodeHours, perRun.nodeHours, 'node-hour');
  limit(strategy.budget.maxEnergyKWh, observed.spent.energyKWh, perRun.energyKWh, 'kWh');
  return { runs, stop };
}

const figure = (x: number) => x.toPrecision(3);

/**
 * Where each tried configuration stands: in flight (`sampling`), on the observed front (`front`),
 * dominated by a front member (`dropped`, the search does not try it again), or every run of it
 * ended without figures (`exhausted`).
 */
function standings(configs: readonly ObservedConfiguration[], front: ReadonlySet<string>, objectives: readonly [string, string]): DecisionToStore[] {
  const means = new Map(configs.filter((c) => c.runs.length > 0).map((c) => [c.key, [mean(c.runs.map((r) => r[0])), mean(c.runs.map((r) => r[1]))] as const]));
  const [a, b] = objectives;
  return configs.map((c): DecisionToStore => {
    const base = { configurationId: c.configurationId, n: c.runs.length, p: null, relativeHalfWidth: null, by: null };
    const m = means.get(c.key);
    if (c.pending > 0) return { ...base, status: 'sampling', reason: `${c.key}: proposed by the search, ${c.pending} run(s) in flight` };
    if (!m) return { ...base, status: 'exhausted', reason: `${c.key}: its ${c.failed} run(s) ended without figures; the search does not try it again` };
    if (front.has(c.key)) {
      return { ...base, status: 'front', reason: `${c.key} on the observed front after ${c.runs.length} run(s): no configuration tried is better on both ${a} and ${b} (${a} ${figure(m[0])}, ${b} ${figure(m[1])})` };
    }
    const by = [...front].map((k) => [k, means.get(k)] as const).find(([, f]) => f && f[0] <= m[0] && f[1] <= m[1]);
    return {
      ...base, status: 'dropped', by: by?.[0] ?? null,
      reason: by
        ? `${c.key} dominated by ${by[0]} on ${a} and ${b} (${figure(m[0])} vs ${figure(by[1]![0])}, ${figure(m[1])} vs ${figure(by[1]![1])}) after ${c.runs.length} run(s)`
        : `${c.key} off the observed front after ${c.runs.length} run(s)`,
    };
  });
}

function mean(xs: readonly number[]): number {
  return xs.reduce((s, x) => s + x, 0) / xs.length;
}

/** How many runs a search may keep in flight: its `parallel`, else the default. */
export function searchParallel(strategy: SearchStrategy): number {
  return strategy.parallel ?? DEFAULT_SEARCH_PARALLEL;
}
