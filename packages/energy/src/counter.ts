import { MAX_WRAP_AT } from '@erg/spec/sensors';
import type { CoverageOptions, IntegralResult } from './integrate';
import { checkWindow, coverage, DEFAULT_GAP_FACTOR, lastAtOrBefore, usableSamples, valueAt } from './sampling';
import type { Window } from './telemetry';

/** Options for reading an energy counter. */
export interface CounterOptions extends CoverageOptions {
  /** The counter's range in its unit: a decrease means it wrapped past this. Unknown → a decrease is a reset. */
  wrapAt?: number;
}

/** Energy from a counter over a window, with the discontinuities met inside it. */
export interface CounterResult extends IntegralResult {
  /** Decreases read as a wrap past `wrapAt` (inside the window's span). */
  wraps: number;
  /** Decreases read as a reset to zero, because `wrapAt` is unknown (inside the window's span). */
  resets: number;
}

/**
 * A declared counter range the unwrapping can use: above 0, finite and within MAX_WRAP_AT (the
 * API refuses wider ones; sensors stored before it did may still declare 1e308, and one decrease
 * read as a wrap past that is Infinity). Anything else is unknown: a decrease is then a reset.
 */
export function usableWrapAt(wrapAt: number | null | undefined): number | undefined {
  return typeof wrapAt === 'number' && wrapAt > 0 && wrapAt <= MAX_WRAP_AT ? wrapAt : undefined;
}

/**
 * Energy (in the counter's unit, J for erg's `*.energy` sensors) from a monotonic counter over
 * `window`: the counter's value at the window's start and end by linear interpolation between
 * the bracketing samples, and every increment between them summed.
 *
 * - A decrease with `wrapAt` known is a wrap: the increment is `v[i] − v[i−1] + wrapAt`.
 *   (A counter that wraps more than once between two samples cannot be told apart: sample
 *   faster than the wrap period, which is tens of minutes for RAPL.)
 * - A decrease without a usable `wrapAt` (usableWrapAt) is a reset (driver reload): the new value is counted from 0 and
 *   `resets` says so; whatever was consumed before the reset in that interval is lost.
 * - Coverage and gaps mean what they mean for {@link integratePower}: nothing is extrapolated
 *   before the first or after the last sample, and an interval longer than `gapFactor` × the
 *   median interval is a gap excluded from `coveredMs` — though its increment still counts,
 *   since the counter kept counting (unless it wrapped twice or reset inside it, which is
 *   exactly why the reader must see the gap).
 *
 * Exact for energy that grows linearly in time.
 */
export function counterEnergy(
  series: { t: ArrayLike<number>; v: ArrayLike<number>; sensor?: string },
  window: Window,
  options: CounterOptions = {},
): CounterResult {
  checkWindow(window);
  const { t, v } = usableSamples(series.t, series.v, series.sensor);
  const cov = coverage(t, window, options.gapFactor ?? DEFAULT_GAP_FACTOR);
  const wrapAt = usableWrapAt(options.wrapAt);
  const { fromMs: a, toMs: b } = cov;
  const base = { coveredMs: cov.coveredMs, spanMs: cov.spanMs, gaps: cov.gaps, medianIntervalMs: cov.medianIntervalMs };
  if (b <= a) return { joules: 0, ...base, wraps: 0, resets: 0 };

  // Unwrap only the samples that bracket [a, b]: a cumulative, monotonic counter starting at 0,
  // which linear interpolation then reads at the window's edges.
  const first = Math.max(0, lastAtOrBefore(t, a));
  let last = lastAtOrBefore(t, b);
  if (t[last]! < b) last++; // the sample after b brackets it
  const cum = new Float64Array(last - first + 1);
  let wraps = 0;
  let resets = 0;
  for (let i = first + 1; i <= last; i++) {
    let d = v[i]! - v[i - 1]!;
    // Only a decrease in an interval overlapping the span is counted; a duplicated timestamp
    // with a different value is still an interval of the counter's history.
    const inside = t[i]! > a && t[i - 1]! < b;
    if (d < 0) {
      if (wrapAt !== undefined) {
        d += wrapAt;
        if (inside) wraps++;
      } else {
        d = v[i]!;
        if (inside) resets++;
      }
    }
    cum[i - first] = cum[i - 1 - first]! + d;
  }
  const ts = t.subarray(first, last + 1);
  const joules = valueAt(ts, cum, b) - valueAt(ts, cum, a);
  return { joules, ...base, wraps, resets };
}
