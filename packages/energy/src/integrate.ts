import { checkWindow, coverage, DEFAULT_GAP_FACTOR, lastAtOrBefore, usableSamples, valueAt } from './sampling';
import type { Gap, Window } from './telemetry';

/** Options shared by integration and counter deltas. */
export interface CoverageOptions {
  /** An interval longer than this many median sampling intervals is a gap. Default 5. */
  gapFactor?: number;
}

/** Energy over a window, and how much of the window the samples support. */
export interface IntegralResult {
  joules: number;
  /** Milliseconds of the window between samples, less gaps; coveredMs / window length is the coverage. */
  coveredMs: number;
  /** Milliseconds from the first to the last sample inside the window: the stretch the figure is taken over. */
  spanMs: number;
  gaps: Gap[];
  /** The series' median sampling interval, for provenance; null with fewer than two distinct timestamps. */
  medianIntervalMs: number | null;
}

/**
 * Trapezoid integral (J) of a power series (W, t in ms) over `window`.
 *
 * - Samples outside the window are clipped; at the window's edges the series is linearly
 *   interpolated between the bracketing samples.
 * - Before the first and after the last sample nothing is extrapolated: that stretch is a gap
 *   and adds nothing to `joules`.
 * - An interval between consecutive samples longer than `gapFactor` × the median interval is
 *   reported as a gap and left out of `coveredMs`, but it IS still integrated linearly: power
 *   between two readings is better estimated by the line through them than by zero, and the
 *   caller reports coverage, so the reader sees the estimate. Non-finite readings are dropped.
 */
export function integratePower(
  series: { t: ArrayLike<number>; v: ArrayLike<number>; sensor?: string },
  window: Window,
  options: CoverageOptions = {},
): IntegralResult {
  checkWindow(window);
  const { t, v } = usableSamples(series.t, series.v, series.sensor);
  const cov = coverage(t, window, options.gapFactor ?? DEFAULT_GAP_FACTOR);
  const { fromMs: a, toMs: b } = cov;
  let sum = 0; // W·ms
  if (b > a) {
    let x0 = a;
    let y0 = valueAt(t, v, a);
    for (let j = lastAtOrBefore(t, a) + 1; j < t.length && t[j]! < b; j++) {
      const x1 = t[j]!;
      const y1 = v[j]!;
      sum += ((x1 - x0) * (y0 + y1)) / 2;
      x0 = x1;
      y0 = y1;
    }
    sum += ((b - x0) * (y0 + valueAt(t, v, b))) / 2;
  }
  return { joules: sum / 1000, coveredMs: cov.coveredMs, spanMs: cov.spanMs, gaps: cov.gaps, medianIntervalMs: cov.medianIntervalMs };
}
