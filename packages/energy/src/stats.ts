import type { Summary } from '@erg/spec';
import { studentTQuantile } from './student-t';

/** n, mean, spread and 95 % interval of one figure over repetitions: the API's type (see its field descriptions). */
export type { Summary } from '@erg/spec';

/**
 * The 97.5 % quantile of Student's t by degrees of freedom: every summary of n repetitions needs
 * the one for n - 1, and computing it (Newton's method on the CDF) was about half of what a
 * campaign's results cost (100,000 runs: ~70,000 summaries).
 */
const t975 = new Map<number, number>();

function t975Of(df: number): number {
  let q = t975.get(df);
  if (q === undefined) {
    q = studentTQuantile(0.975, df);
    if (t975.size < 100_000) t975.set(df, q);
  }
  return q;
}

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
  const half = n > 1 ? t975Of(n - 1) * (std / Math.sqrt(n)) : 0;
  return { n, mean, std, ci95: [mean - half, mean + half], cv: mean === 0 ? null : std / Math.abs(mean), min, max };
}
