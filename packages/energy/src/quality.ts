import { EnergyInputError } from './errors';
import { checkWindow, usableSamples } from './sampling';
import type { Window } from './telemetry';

/** Runs of a reading repeated unchanged. */
export interface RepeatedValues {
  /** Samples considered (finite time and value, inside the window when one is given). */
  samples: number;
  /** Maximal runs of two or more identical consecutive values. */
  runs: number;
  /** Samples equal to the one before them: a run of k samples contributes k − 1. */
  repeated: number;
  /** repeated / samples (0 for no samples): the share of readings that brought no new information. */
  share: number;
  /** Length, in samples, of the longest run (1 when nothing repeats, 0 for no samples). */
  longestRun: number;
}

/**
 * Finds identical consecutive readings. A hwmon power meter whose averaging interval (50 ms or
 * 1 s on GH200) is longer than the sampling interval returns its cached value, so a high share
 * means the effective resolution is coarser than the sampling rate suggests.
 */
export function repeatedValues(series: { t: ArrayLike<number>; v: ArrayLike<number>; sensor?: string }, window?: Window): RepeatedValues {
  if (window) checkWindow(window);
  const { t, v } = usableSamples(series.t, series.v, series.sensor);
  let samples = 0;
  let runs = 0;
  let repeated = 0;
  let longestRun = 0;
  let run = 0;
  let prev = NaN;
  for (let i = 0; i < t.length; i++) {
    if (window && (t[i]! < window.startMs || t[i]! > window.endMs)) continue;
    const x = v[i]!;
    samples++;
    if (x === prev) {
      repeated++;
      run++;
      if (run === 2) runs++;
    } else {
      run = 1;
    }
    longestRun = Math.max(longestRun, run);
    prev = x;
  }
  return { samples, runs, repeated, share: samples === 0 ? 0 : repeated / samples, longestRun };
}

/** Samples present against samples expected. */
export interface SamplePresence {
  /** round(window length / interval): what a sampler at `intervalMs` delivers in the window. */
  expected: number;
  /** Samples with a finite value and startMs ≤ t < endMs. */
  present: number;
  /** min(1, present / expected); 1 when nothing is expected. Capped: extra samples do not hide missing ones elsewhere. */
  share: number;
}

/**
 * Share of the samples a sampler at `intervalMs` should have delivered in `window` that are
 * present (erg's goal: ≥ 99.5 %). The window is taken half-open, [startMs, endMs), so adjacent
 * windows do not count a boundary sample twice.
 */
export function expectedVsPresent(series: { t: ArrayLike<number>; v: ArrayLike<number>; sensor?: string }, window: Window, intervalMs: number): SamplePresence {
  checkWindow(window);
  if (!(intervalMs > 0) || !Number.isFinite(intervalMs)) {
    throw new EnergyInputError('ERG_ENERGY_BAD_ARGUMENT', `intervalMs must be a positive number of milliseconds, got ${intervalMs}`);
  }
  const { t } = usableSamples(series.t, series.v, series.sensor);
  let present = 0;
  for (const x of t) if (x >= window.startMs && x < window.endMs) present++;
  const expected = Math.round((window.endMs - window.startMs) / intervalMs);
  return { expected, present, share: expected === 0 ? 1 : Math.min(1, present / expected) };
}
