import type { Summary } from '@erg/spec';
import { studentTQuantile } from './student-t';

/** n, mean, spread and 95 % interval of one figure over repetitions: the API's type (see its field descriptions). */
export type { Summary } from '@erg/spec';

/**
 * Summarises repetitions of one figure. Missing values (a run whose energy could not be
 * measured) are left out rather than counted as 0, so `n` may be smaller than the runs.
 */
export function summarize(values: readonly (number | null | undefined)[]): Summary {
  const xs: number[] = [];
  for (const x of values) if (typeof x === 'number' && Number.isFinite(x)) xs.push(x);
  const n = xs.length;
  if (n === 0) return { n, mean: null, std: null, ci95: null, cv: null, min: null, max: null };
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  for (const x of xs) {
    sum += x;
    if (x < min) min = x;
    if (x > max) max = x;
  }
  const mean = sum / n;
  // Two passes: the deviations are summed after the mean is known, which keeps precision when
  // the values are large and close together (energies of 1e6 J differing by a few J).
  let ss = 0;
  for (const x of xs) ss += (x - mean) ** 2;
  const std = n > 1 ? Math.sqrt(ss / (n - 1)) : 0;
  const half = n > 1 ? studentTQuantile(0.975, n - 1) * (std / Math.sqrt(n)) : 0;
  return { n, mean, std, ci95: [mean - half, mean + half], cv: mean === 0 ? null : std / Math.abs(mean), min, max };
}
