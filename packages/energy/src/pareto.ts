import type { BestOf, Tradeoff } from '@erg/spec';
import { EnergyInputError } from './errors';

/** One configuration as a point in (time, energy), both to be minimised. */
export interface TradeoffPoint {
  key: string;
  timeS: number;
  energyJ: number;
}

// BestOf (least time, least energy, least EDP, each with its tie-breaks) and Tradeoff (fastest
// versus most frugal) are the API's types, defined once in @erg/spec.
export type { BestOf, Tradeoff } from '@erg/spec';

function checkPoints(points: readonly TradeoffPoint[]): void {
  for (const p of points) {
    if (!Number.isFinite(p.timeS) || !Number.isFinite(p.energyJ)) {
      throw new EnergyInputError(
        'ERG_ENERGY_BAD_ARGUMENT',
        `configuration ${JSON.stringify(p.key)} has time ${p.timeS} s and energy ${p.energyJ} J; both must be finite (leave unmeasured configurations out)`,
      );
    }
  }
}

const byTimeThenEnergy = (x: TradeoffPoint, y: TradeoffPoint) =>
  x.timeS - y.timeS || x.energyJ - y.energyJ || (x.key < y.key ? -1 : x.key > y.key ? 1 : 0);
const byEnergyThenTime = (x: TradeoffPoint, y: TradeoffPoint) =>
  x.energyJ - y.energyJ || x.timeS - y.timeS || (x.key < y.key ? -1 : x.key > y.key ? 1 : 0);

/**
 * Keys of the Pareto-optimal points, sorted by time (then energy, then key). A point is
 * dominated when another is ≤ in both time and energy and < in one; identical points do not
 * dominate each other, so duplicates are on the front together.
 */
export function paretoFront(points: readonly TradeoffPoint[]): string[] {
  checkPoints(points);
  return paretoFrontOf(points.map((p) => ({ key: p.key, a: p.timeS, b: p.energyJ })));
}

/** One configuration as a point on two objectives `a` and `b` (time, energy, EDP, carbon, cost), both minimised. */
export interface ObjectivePoint {
  key: string;
  a: number;
  b: number;
}

/**
 * Keys of the Pareto-optimal points on (a, b), sorted by a (then b, then key); what paretoFront
 * is on (time, energy). Identical points are on the front together.
 */
export function paretoFrontOf(points: readonly ObjectivePoint[]): string[] {
  for (const p of points) {
    if (!Number.isFinite(p.a) || !Number.isFinite(p.b)) {
      throw new EnergyInputError('ERG_ENERGY_BAD_ARGUMENT', `configuration ${JSON.stringify(p.key)} has objectives ${p.a} and ${p.b}; both must be finite (leave unmeasured configurations out)`);
    }
  }
  const sorted = [...points].sort((x, y) => x.a - y.a || x.b - y.b || (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
  const front: ObjectivePoint[] = [];
  // Sweep in order of a: a point is on the front when its b is less than every point's before
  // it, or when it equals the last front point (an identical twin).
  for (const p of sorted) {
    const last = front[front.length - 1];
    if (!last || p.b < last.b || (p.b === last.b && p.a === last.a)) front.push(p);
  }
  return front.map((p) => p.key);
}

/** The best point by each criterion (the points themselves, so duplicate keys cannot mix them up). */
function bestPoints(points: readonly TradeoffPoint[]): { time: TradeoffPoint; energy: TradeoffPoint; edp: TradeoffPoint } | null {
  checkPoints(points);
  if (points.length === 0) return null;
  const edp = (p: TradeoffPoint) => p.timeS * p.energyJ;
  const pick = (cmp: (x: TradeoffPoint, y: TradeoffPoint) => number) => points.reduce((best, p) => (cmp(p, best) < 0 ? p : best));
  return {
    time: pick(byTimeThenEnergy),
    energy: pick(byEnergyThenTime),
    edp: pick((x, y) => edp(x) - edp(y) || byTimeThenEnergy(x, y)),
  };
}

/** The fastest, the most frugal and the EDP-optimal configuration; null for no points. (campaignResults adds carbon and cost.) */
export function bestOf(points: readonly TradeoffPoint[]): Pick<BestOf, 'time' | 'energy' | 'edp'> | null {
  const best = bestPoints(points);
  return best && { time: best.time.key, energy: best.energy.key, edp: best.edp.key };
}

/** Energy saved and time lost by running the most frugal configuration instead of the fastest; null for no points. */
export function tradeoff(points: readonly TradeoffPoint[]): Tradeoff | null {
  const best = bestPoints(points);
  if (!best) return null;
  const { time: fast, energy: frugal } = best;
  const energySavedJ = fast.energyJ - frugal.energyJ;
  const timeLostS = frugal.timeS - fast.timeS;
  return {
    fastest: fast.key,
    mostFrugal: frugal.key,
    energySavedJ,
    energySavedPct: fast.energyJ === 0 ? null : (100 * energySavedJ) / fast.energyJ,
    timeLostS,
    timeLostPct: fast.timeS === 0 ? null : (100 * timeLostS) / fast.timeS,
  };
}
