// What the Pareto plot may be drawn on: two distinct objectives of time, energy, EDP, carbon and
// cost, each minimised (GET /v1/campaigns/:id/results?objectives=a,b decides the front on them).
// Per objective: its figure in a configuration's results, its unit, how its ticks and figures
// read, and which objectives a campaign's results can offer (carbon and cost only where some
// configuration has them). Pure, for the campaign page and the tests.
import { formatCarbon, formatCost, formatEdp, formatEnergy, formatTime } from './format';
import { hasCarbon, hasCost } from './results';
import type { CampaignResults, ConfigurationResult, Summary } from './types';

export type Objective = CampaignResults['objectives'][number];
/** The x and the y objective, in that order (the API's `objectives`: the front is listed by the first). */
export type ObjectivePair = readonly [Objective, Objective];

/**
 * @erg/spec's OBJECTIVES, in its order (a test holds the two equal; the spec's module brings zod,
 * which the bundle leaves out).
 */
export const OBJECTIVES: readonly Objective[] = ['time', 'energy', 'edp', 'carbon', 'cost'];
export const DEFAULT_OBJECTIVES: ObjectivePair = ['time', 'energy'];

export interface ObjectiveInfo {
  objective: Objective;
  /** How the selectors name it. */
  name: string;
  /** The axis' title, its unit in brackets: "mean carbon per run (gCO₂e)". */
  axisLabel: string;
  /** The unit the figures are in: s, J, J·s, gCO₂e or the results' currency. */
  unit: string;
  /** A figure of it with its unit, as everywhere else in erg ("12.3 kJ", "0.0123 EUR"). */
  format: (value: number | null | undefined) => string;
  /** A tick: as `format`, but cost leaves its currency to the axis' title. */
  tick: (value: number) => string;
  /** Its figure in a configuration's results (the means and intervals of its runs). */
  summary: (c: ConfigurationResult) => Summary | undefined;
}

/** What the plot knows of `objective`; costs are in `currency` (the results'), "cost" when there is none. */
export function objectiveInfo(objective: Objective, currency: string | null = null): ObjectiveInfo {
  switch (objective) {
    case 'time':
      return { objective, name: 'time', axisLabel: 'mean time to solution (s)', unit: 's', format: formatTime, tick: formatTime, summary: (c) => c.timeS };
    case 'energy':
      return { objective, name: 'energy', axisLabel: 'mean energy (J)', unit: 'J', format: formatEnergy, tick: formatEnergy, summary: (c) => c.energyJ };
    case 'edp':
      return { objective, name: 'EDP', axisLabel: 'mean energy-delay product (J·s)', unit: 'J·s', format: formatEdp, tick: formatEdp, summary: (c) => c.edpJs };
    case 'carbon':
      return { objective, name: 'carbon', axisLabel: 'mean carbon per run (gCO₂e)', unit: 'gCO₂e', format: formatCarbon, tick: formatCarbon, summary: (c) => c.carbon };
    case 'cost':
      return {
        objective, name: 'cost', axisLabel: `mean cost per run (${currency ?? 'cost'})`, unit: currency ?? '',
        format: (v) => formatCost(v, currency), tick: (v) => formatCost(v, null), summary: (c) => c.cost,
      };
  }
}

/** The objectives these results can offer: time, energy and EDP always; carbon and cost where some configuration has them. */
export function availableObjectives(results: Pick<CampaignResults, 'configurations'>): Objective[] {
  return OBJECTIVES.filter((o) => (o === 'carbon' ? hasCarbon(results) : o === 'cost' ? hasCost(results) : true));
}

/** What the results' front was decided on (time, energy from an API older than objectives). */
export function resultsObjectives(results: Pick<CampaignResults, 'objectives'>): ObjectivePair {
  const o = results.objectives;
  return o && o.length === 2 ? [o[0], o[1]] : DEFAULT_OBJECTIVES;
}

export function sameObjectives(a: readonly string[] | null | undefined, b: readonly string[] | null | undefined): boolean {
  return !!a && !!b && a.length === 2 && b.length === 2 && a[0] === b[0] && a[1] === b[1];
}

/**
 * `pair` with `objective` on `axis` (0: x, 1: y). Choosing on one axis what the other shows swaps
 * them, so the two stay distinct (the API refuses a front on one objective twice).
 */
export function chooseObjective(pair: ObjectivePair, axis: 0 | 1, objective: Objective): ObjectivePair {
  const other = pair[1 - axis]!;
  if (objective === other) return axis === 0 ? [objective, pair[0]] : [pair[1], objective];
  return axis === 0 ? [objective, other] : [other, objective];
}

/** `pair` when both are among `available`, else the default (carbon chosen, then a refetch without carbon figures). */
export function usableObjectives(pair: ObjectivePair, available: readonly Objective[]): ObjectivePair {
  return available.includes(pair[0]) && available.includes(pair[1]) && pair[0] !== pair[1] ? pair : DEFAULT_OBJECTIVES;
}

/** The query of GET /v1/campaigns/:id/results for a front on `pair`: '' for the default (time, energy). */
export function objectivesQuery(pair: ObjectivePair): string {
  return sameObjectives(pair, DEFAULT_OBJECTIVES) ? '' : `?objectives=${pair[0]},${pair[1]}`;
}

/**
 * The results to draw the plot on `pair` from: the page's own (decided on time, energy) for the
 * default, else those fetched with ?objectives= once they are the answer for `pair`; null while
 * that answer is on its way.
 */
export function resultsOnObjectives<R extends Pick<CampaignResults, 'objectives'>>(pair: ObjectivePair, pageResults: R | null, fetched: R | null): R | null {
  if (pageResults && sameObjectives(resultsObjectives(pageResults), pair)) return pageResults;
  return fetched && sameObjectives(resultsObjectives(fetched), pair) ? fetched : null;
}
