/**
 * What integration and counter deltas share: cleaning a series, its typical sampling interval,
 * interpolation, and which parts of a window the samples cover. Internal to @erg/energy.
 */
import { EnergyInputError } from './errors';
import type { Gap, Window } from './telemetry';

/** The factor over the median sampling interval beyond which an interval is a gap. */
export const DEFAULT_GAP_FACTOR = 5;

/** A series reduced to its usable samples. */
export interface Samples {
  t: Float64Array;
  v: Float64Array;
}

/** How a window is covered by a series' samples. */
export interface Coverage {
  /** Milliseconds of the window between usable samples, less interior gaps. */
  coveredMs: number;
  /** Milliseconds from the first to the last usable sample inside the window (interior gaps included). */
  spanMs: number;
  /** Clipped start and end of that span; equal when there is no span. */
  fromMs: number;
  toMs: number;
  gaps: Gap[];
  /** The series' median sampling interval; null with fewer than two distinct timestamps. */
  medianIntervalMs: number | null;
}

/** Rejects a window that is not an interval of finite times. */
export function checkWindow(window: Window, what = 'window'): void {
  const { startMs, endMs } = window;
  if (!Number.isFinite(startMs) || !Number.isFinite(endMs) || endMs < startMs) {
    throw new EnergyInputError(
      'ERG_ENERGY_BAD_WINDOW',
      `${what} [${startMs}, ${endMs}] is not a time interval: both bounds must be finite Unix milliseconds and end ≥ start`,
    );
  }
}

/**
 * The samples with a finite time and value, in a fresh Float64Array pair. A non-finite reading
 * is a missing reading, so it is dropped here and shows up as a longer interval (maybe a gap).
 * Throws on unequal lengths or decreasing time: sorting silently would hide an agent bug.
 */
export function usableSamples(t: ArrayLike<number>, v: ArrayLike<number>, sensor = 'series'): Samples {
  if (t.length !== v.length) {
    throw new EnergyInputError('ERG_ENERGY_LENGTH_MISMATCH', `${sensor}: t has ${t.length} values and v has ${v.length}; they must pair up`);
  }
  const ot = new Float64Array(t.length);
  const ov = new Float64Array(t.length);
  let n = 0;
  let last = -Infinity;
  for (let i = 0; i < t.length; i++) {
    const ti = t[i]!;
    const vi = v[i]!;
    if (!Number.isFinite(ti) || !Number.isFinite(vi)) continue;
    if (ti < last) {
      throw new EnergyInputError('ERG_ENERGY_UNSORTED', `${sensor}: timestamp ${ti} at index ${i} comes after ${last}; series must be time-sorted`);
    }
    last = ti;
    ot[n] = ti;
    ov[n] = vi;
    n++;
  }
  return { t: ot.subarray(0, n), v: ov.subarray(0, n) };
}

/** Median of the positive intervals between consecutive timestamps (duplicates are not an interval). */
export function medianInterval(t: ArrayLike<number>): number | null {
  const d: number[] = [];
  for (let i = 1; i < t.length; i++) {
    const dt = t[i]! - t[i - 1]!;
    if (dt > 0) d.push(dt);
  }
  if (d.length === 0) return null;
  const s = Float64Array.from(d).sort();
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Index of the last timestamp ≤ x, or -1 when every timestamp is after x. */
export function lastAtOrBefore(t: ArrayLike<number>, x: number): number {
  let lo = 0;
  let hi = t.length; // invariant: answer in [lo - 1, hi - 1]
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (t[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/**
 * Linear interpolation at x, which must lie within [t[0], t[n-1]]. At a duplicated timestamp
 * (a step) the last sample with that time wins, so the value just after the step is used.
 */
export function valueAt(t: ArrayLike<number>, v: ArrayLike<number>, x: number): number {
  const i = lastAtOrBefore(t, x);
  if (i < 0) return v[0]!;
  if (i >= t.length - 1 || t[i] === x) return v[i]!;
  const t0 = t[i]!;
  const t1 = t[i + 1]!;
  return v[i]! + ((v[i + 1]! - v[i]!) * (x - t0)) / (t1 - t0);
}

/**
 * Which parts of `window` the samples cover. Before the first and after the last sample the
 * series is not extrapolated: those stretches are gaps. Inside, an interval between consecutive
 * samples longer than `gapFactor` × the median interval is a gap too. Adjacent gaps are merged.
 */
export function coverage(t: Float64Array, window: Window, gapFactor: number): Coverage {
  const { startMs, endMs } = window;
  const medianIntervalMs = medianInterval(t);
  const n = t.length;
  const from = n > 0 ? Math.max(startMs, t[0]!) : startMs;
  const to = n > 0 ? Math.min(endMs, t[n - 1]!) : startMs;
  if (n === 0 || to < from) {
    return { coveredMs: 0, spanMs: 0, fromMs: startMs, toMs: startMs, gaps: endMs > startMs ? [{ fromMs: startMs, toMs: endMs }] : [], medianIntervalMs };
  }
  const gaps: Gap[] = [];
  const push = (a: number, b: number) => {
    if (b <= a) return;
    const prev = gaps[gaps.length - 1];
    if (prev && prev.toMs >= a) prev.toMs = Math.max(prev.toMs, b);
    else gaps.push({ fromMs: a, toMs: b });
  };
  push(startMs, from);
  let interior = 0;
  const threshold = medianIntervalMs === null ? Infinity : gapFactor * medianIntervalMs;
  for (let j = Math.max(0, lastAtOrBefore(t, from)); j < n - 1 && t[j]! < to; j++) {
    if (t[j + 1]! - t[j]! > threshold) {
      const a = Math.max(t[j]!, from);
      const b = Math.min(t[j + 1]!, to);
      interior += b - a;
      push(a, b);
    }
  }
  push(to, endMs);
  return { coveredMs: to - from - interior, spanMs: to - from, fromMs: from, toMs: to, gaps, medianIntervalMs };
}
