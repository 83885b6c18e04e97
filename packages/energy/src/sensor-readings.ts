/**
 * One sensor's series as the phase attribution reads it: a cumulative energy curve (what any
 * stretch of time cost: stretches that partition a window add up to the sensor's energy over it)
 * and the observations it makes (intervals of known energy) that the regression fits.
 *
 * What interval a reading covers is the one thing the attribution cannot see in the samples,
 * and phases shorter than a reading are resolved only as well as it is known (see SensorTiming).
 * Internal to @erg/energy.
 */
import { usableWrapAt } from './counter';
import { lastAtOrBefore, medianInterval, usableSamples } from './sampling';
import { parseSensorName, type SensorInfo, type Series, type Window } from './telemetry';

/**
 * When a sensor's readings happened, relative to their timestamps. Both default to 0 / "since
 * the previous reading", which is exact for a counter read directly and for a power meter whose
 * averaging interval equals the sampling interval; otherwise a phase shorter than a reading gets
 * part of its neighbours' energy (docs/benchmarks.md, "Energy per phase").
 */
export interface SensorTiming {
  /**
   * A power sensor's averaging interval (ms), ending at its timestamp (less lagMs): GH200 hwmon's
   * `power1_average_interval` (50 ms by default), NVML power usage 1000 ms on Ampere and newer.
   * Default: the time since the previous reading.
   */
  averagingMs?: number;
  /**
   * How far (ms) a reading's value trails its timestamp on average: half the device's update
   * period for a counter the device updates on its own clock (NVML's total energy: every ~20–100 ms).
   * Default 0.
   */
  lagMs?: number;
}

/** An interval whose energy one sensor measured. */
export interface Observation {
  fromMs: number;
  toMs: number;
  joules: number;
}

export interface SensorReadings {
  /** Energy (J) from the first sample to `x`: 0 before it, constant after the last (nothing is extrapolated). */
  energyAt: (x: number) => number;
  /** Intervals inside the window with a measured energy, in time order. */
  observations: Observation[];
  /** The part of the window the curve covers (first to last reading, moved by its timing); empty (from = to) when none. */
  span: { fromMs: number; toMs: number };
  /** The interval one reading resolves: the median sampling interval, or the averaging interval where that is longer; null with fewer than two samples. */
  resolutionMs: number | null;
}

/** The readings of a `*.energy` counter or a `*.power` sensor over `window`. */
export function sensorReadings(series: Series, info: SensorInfo | undefined, window: Window, gapFactor: number, timing: SensorTiming = {}): SensorReadings {
  const { t, v } = usableSamples(series.t, series.v, series.sensor);
  const lag = timing.lagMs !== undefined && Number.isFinite(timing.lagMs) ? timing.lagMs : 0;
  // A lagging reading describes the moment lagMs before its timestamp: move the timeline once.
  const at = lag === 0 ? t : t.map((x) => x - lag);
  return parseSensorName(series.sensor)?.quantity === 'energy'
    ? counterReadings(at, v, info?.wrapAt, window)
    : powerReadings(at, v, window, gapFactor, timing.averagingMs !== undefined && timing.averagingMs > 0 ? timing.averagingMs : undefined);
}

/** The part of the window from the first to the last of `edges` (sorted); empty at the window's start when they miss it. */
function spanOf(edges: Float64Array, window: Window): { fromMs: number; toMs: number } {
  if (edges.length === 0) return { fromMs: window.startMs, toMs: window.startMs };
  const fromMs = Math.max(window.startMs, edges[0]!);
  const toMs = Math.min(window.endMs, edges[edges.length - 1]!);
  return toMs > fromMs ? { fromMs, toMs } : { fromMs: window.startMs, toMs: window.startMs };
}

/**
 * A counter's readings: its samples unwrapped into a cumulative curve exactly as counterEnergy
 * does (a decrease is a wrap past `wrapAt`, else a reset counted from 0), read between samples by
 * linear interpolation; each interval between consecutive samples inside the window is one
 * observation — except one with a reset in it, whose energy before the reset is lost.
 */
function counterReadings(t: Float64Array, v: Float64Array, wrapAt: number | undefined, window: Window): SensorReadings {
  const wrap = usableWrapAt(wrapAt);
  const cum = new Float64Array(t.length);
  const observations: Observation[] = [];
  for (let i = 1; i < t.length; i++) {
    let d = v[i]! - v[i - 1]!;
    const reset = d < 0 && wrap === undefined;
    if (d < 0) d = wrap !== undefined ? d + wrap : v[i]!;
    cum[i] = cum[i - 1]! + d;
    if (!reset && t[i]! > t[i - 1]! && t[i - 1]! >= window.startMs && t[i]! <= window.endMs) observations.push({ fromMs: t[i - 1]!, toMs: t[i]!, joules: d });
  }
  const energyAt = (x: number): number => {
    const i = lastAtOrBefore(t, x);
    if (i < 0) return 0;
    if (i >= t.length - 1) return cum[t.length - 1]!;
    return cum[i]! + ((cum[i + 1]! - cum[i]!) * (x - t[i]!)) / (t[i + 1]! - t[i]!);
  };
  return { energyAt, observations, span: spanOf(t, window), resolutionMs: medianInterval(t) };
}

/**
 * A power sensor's readings. Each reading is its mean power over the interval it averages — by
 * default the one since the previous reading, else `averagingMs` ending at its timestamp — and is
 * one observation: that power times the interval's length. A reading after a gap (longer than
 * gapFactor × the median interval) is not one: it averages its own interval, not the gap.
 *
 * The curve holds each reading's power over the sampling interval before it (not the trapezoid
 * of integratePower, which reads the value as instantaneous and so lags an averaging sensor by
 * half an interval), moved by half the amount its averaging exceeds the median sampling interval
 * (or falls short of it), so that it stays centred on what the reading averaged. Over a whole
 * window it differs from the trapezoid only at the edges; the attribution rescales to the
 * trapezoid's total.
 */
function powerReadings(t: Float64Array, v: Float64Array, window: Window, gapFactor: number, averagingMs: number | undefined): SensorReadings {
  const n = t.length;
  const median = medianInterval(t);
  const gapMs = median === null ? Infinity : gapFactor * median;
  const observations: Observation[] = [];
  for (let i = 1; i < n; i++) {
    const dt = t[i]! - t[i - 1]!;
    if (!(dt > 0) || dt > gapMs) continue;
    const span = averagingMs ?? dt;
    const fromMs = t[i]! - span;
    if (fromMs >= window.startMs && t[i]! <= window.endMs) observations.push({ fromMs, toMs: t[i]!, joules: (v[i]! * span) / 1000 });
  }
  const shift = averagingMs !== undefined && median !== null ? (averagingMs - median) / 2 : 0;
  const edges = shift === 0 ? t : t.map((x) => x - shift);
  const cum = new Float64Array(n); // J at each edge
  for (let i = 1; i < n; i++) cum[i] = cum[i - 1]! + ((edges[i]! - edges[i - 1]!) * v[i]!) / 1000;
  const energyAt = (x: number): number => {
    const i = lastAtOrBefore(edges, x);
    if (i < 0) return 0;
    if (i >= n - 1) return cum[n - 1]!;
    return cum[i]! + ((x - edges[i]!) * v[i + 1]!) / 1000;
  };
  const resolutionMs = median === null ? null : Math.max(median, averagingMs ?? 0);
  return { energyAt, observations, span: spanOf(edges, window), resolutionMs };
}
