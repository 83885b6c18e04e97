import type { ClusterPrice, RunCarbon, RunCost } from '@erg/spec';
import { EnergyInputError } from './errors';
import type { Window } from './telemetry';

/**
 * A run's carbon and cost from its energy and time, with its cluster's settings (docs/energy.md,
 * "Carbon and cost"):
 *
 *   kWh   = energyJ / 3.6e6                     (what the nodes drew in the workload window)
 *   gCO2e = kWh × PUE × intensity
 *   cost  = nodes × timeS / 3600 × perNodeHour + kWh × PUE × perKWh
 *
 * The intensity is the cluster's series over the window where it has one there, else its constant.
 * A series is a step function: each point's value holds from its time until the next point's (grid
 * operators publish averages over the interval that starts at the stamp), the last point for as
 * long as the step before it. Over the window the mean is time-weighted (not energy-weighted: a
 * run's power over time is not at hand where its figures are computed, and grid values change
 * hourly, slowly next to a workload's power).
 */

const J_PER_KWH = 3.6e6;

/** One point of a series: Unix ms and gCO2e per kWh. */
export interface IntensityPoint {
  tMs: number;
  gCO2ePerKWh: number;
}

/** A series' time-weighted mean intensity over a window, and which of its points made it. */
export interface SeriesIntensity {
  gCO2ePerKWh: number;
  /** 0–1: the share of the window some point covers. */
  coverage: number;
  points: number;
  firstMs: number;
  lastMs: number;
}

function finite(name: string, x: number): void {
  if (!Number.isFinite(x)) throw new EnergyInputError('ERG_ENERGY_BAD_ARGUMENT', `${name} is ${x}; it must be a finite number`);
}

/**
 * The time-weighted mean of a step series over a window; null when no point covers any of it.
 * `points` in time order (distinct times). A window of zero length takes the value holding at its
 * start.
 */
export function seriesIntensity(points: readonly IntensityPoint[], window: Window): SeriesIntensity | null {
  finite('the window start', window.startMs);
  finite('the window end', window.endMs);
  if (window.endMs < window.startMs) throw new EnergyInputError('ERG_ENERGY_BAD_WINDOW', `the window ends (${window.endMs}) before it starts (${window.startMs})`);
  const length = window.endMs - window.startMs;
  let weighted = 0;
  let covered = 0;
  let used = 0;
  let firstMs = NaN;
  let lastMs = NaN;
  for (let i = 0; i < points.length; i++) {
    const p = points[i]!;
    finite(`points[${i}].tMs`, p.tMs);
    finite(`points[${i}].gCO2ePerKWh`, p.gCO2ePerKWh);
    const prev = points[i - 1];
    const next = points[i + 1];
    if (prev && !(prev.tMs < p.tMs)) throw new EnergyInputError('ERG_ENERGY_UNSORTED', `the intensity series is not in time order at points[${i}] (${p.tMs} ms after ${prev.tMs} ms)`);
    const from = p.tMs;
    // The last point holds for as long as the step before it; a lone point, for no time.
    const to = next ? next.tMs : prev ? p.tMs + (p.tMs - prev.tMs) : p.tMs;
    let overlap: number;
    if (length === 0) overlap = window.startMs >= from && window.startMs < to ? 1 : 0;
    else overlap = Math.max(0, Math.min(to, window.endMs) - Math.max(from, window.startMs));
    if (overlap <= 0) continue;
    weighted += p.gCO2ePerKWh * overlap;
    covered += overlap;
    used++;
    if (used === 1) firstMs = p.tMs;
    lastMs = p.tMs;
  }
  if (covered === 0) return null;
  return { gCO2ePerKWh: weighted / covered, coverage: length === 0 ? 1 : covered / length, points: used, firstMs, lastMs };
}

/** What runCarbon needs: the run's energy and window, the cluster's PUE, constant and series. */
export interface RunCarbonInput {
  energyJ: number;
  window: Window;
  pue: number;
  /** The cluster's constant intensity; null: none. */
  constant: number | null;
  /** The cluster's series around the window, in time order (may be empty). */
  series: readonly IntensityPoint[];
}

const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

/**
 * The run's gCO2e: the series' mean where it covers the window (the part it does not cover at the
 * constant where there is one, else at the series' mean), else the constant; null with neither.
 */
export function runCarbon(input: RunCarbonInput): RunCarbon | null {
  finite('energyJ', input.energyJ);
  finite('pue', input.pue);
  if (input.pue < 1) throw new EnergyInputError('ERG_ENERGY_BAD_ARGUMENT', `pue is ${input.pue}; a PUE is at least 1`);
  if (input.constant !== null) finite('the constant intensity', input.constant);
  const energyKWh = input.energyJ / J_PER_KWH;
  const s = seriesIntensity(input.series, input.window);
  const of = (gCO2ePerKWh: number) => energyKWh * input.pue * gCO2ePerKWh;
  if (s) {
    const full = s.coverage >= 1;
    const gCO2ePerKWh = full || input.constant === null ? s.gCO2ePerKWh : s.gCO2ePerKWh * s.coverage + input.constant * (1 - s.coverage);
    const points = `${s.points} point${s.points === 1 ? '' : 's'}`;
    const note = full
      ? `the cluster's series over the window (time-weighted mean of ${points})`
      : input.constant === null
        ? `the cluster's series covers ${pct(s.coverage)} of the window (${points}); its mean there stands for the rest (the cluster has no constant intensity)`
        : `the cluster's series covers ${pct(s.coverage)} of the window (${points}); the cluster's constant ${input.constant} gCO2e/kWh for the rest`;
    return {
      gCO2e: of(gCO2ePerKWh), energyKWh, pue: input.pue, gCO2ePerKWh, source: 'series',
      series: { points: s.points, firstMs: s.firstMs, lastMs: s.lastMs, coverage: s.coverage }, note,
    };
  }
  if (input.constant === null) return null;
  const note = input.series.length > 0 ? "the cluster's constant: its series does not cover the window" : "the cluster's constant";
  return { gCO2e: of(input.constant), energyKWh, pue: input.pue, gCO2ePerKWh: input.constant, source: 'constant', series: null, note };
}

/** What runCost needs: the run's energy, time and node count, the PUE and the price. */
export interface RunCostInput {
  energyJ: number;
  timeS: number;
  nodes: number;
  pue: number;
  price: ClusterPrice;
}

/** The run's cost: node-hours of the workload window at perNodeHour plus the site's kWh at perKWh (the parts priced). */
export function runCost(input: RunCostInput): RunCost {
  finite('energyJ', input.energyJ);
  finite('timeS', input.timeS);
  finite('pue', input.pue);
  if (!Number.isInteger(input.nodes) || input.nodes < 0) throw new EnergyInputError('ERG_ENERGY_BAD_ARGUMENT', `nodes is ${input.nodes}; it must be a whole number ≥ 0`);
  const perNodeHour = input.price.perNodeHour ?? null;
  const perKWh = input.price.perKWh ?? null;
  const nodeHours = (input.nodes * input.timeS) / 3600;
  const energyKWh = input.energyJ / J_PER_KWH;
  const nodeTimeCost = perNodeHour === null ? null : nodeHours * perNodeHour;
  const energyCost = perKWh === null ? null : energyKWh * input.pue * perKWh;
  return {
    total: (nodeTimeCost ?? 0) + (energyCost ?? 0), currency: input.price.currency,
    nodes: input.nodes, nodeHours, perNodeHour, nodeTimeCost, energyKWh, pue: input.pue, perKWh, energyCost,
  };
}
