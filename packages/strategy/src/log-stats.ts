/**
 * Statistics of repetitions on the log scale. Run-to-run noise of time and energy is
 * multiplicative (a CV, roughly the same for every configuration of one workload on one machine),
 * so on the log scale every configuration has about the same variance, and one pooled estimate —
 * with the degrees of freedom of all configurations together — tells apart at 2 repetitions what
 * each configuration's own estimate (1 degree of freedom) cannot. A configuration whose own
 * spread is clearly larger than the pooled one is compared with its own (the pooled estimate
 * would make it look surer than it is).
 */
import { regularizedBeta } from '@erg/energy';

/** One configuration's repetitions of one objective, on the log scale. */
export interface LogSample {
  n: number;
  /** Mean of ln(x). */
  mean: number;
  /** Sample variance of ln(x) (divisor n − 1); NaN below 2 values. */
  variance: number;
}

export function logSample(values: readonly number[]): LogSample {
  const ys = values.map((x) => Math.log(x));
  const n = ys.length;
  const mean = n === 0 ? NaN : ys.reduce((a, b) => a + b, 0) / n;
  const variance = n < 2 ? NaN : ys.reduce((a, y) => a + (y - mean) ** 2, 0) / (n - 1);
  return { n, mean, variance };
}

/** The pooled variance of ln(x) over configurations, and its degrees of freedom Σ(nᵢ − 1). */
export interface Pooled {
  variance: number;
  df: number;
}

export function pooledVariance(samples: readonly LogSample[]): Pooled | null {
  let ss = 0;
  let df = 0;
  for (const s of samples) {
    if (s.n < 2) continue;
    ss += s.variance * (s.n - 1);
    df += s.n - 1;
  }
  return df === 0 ? null : { variance: ss / df, df };
}

/**
 * The variance a configuration is judged with and its degrees of freedom: the pooled one, unless
 * its own is larger than the pooled one's upper `1 − alpha` F bound (then its own, with n − 1
 * degrees of freedom). With fewer than 2 values it has no own estimate: the pooled one.
 */
export function varianceOf(s: LogSample, pooled: Pooled, alpha: number): Pooled {
  if (s.n < 2 || !(s.variance > pooled.variance)) return pooled;
  // P(F > ratio) for F(n − 1, df): the chance its spread is this much larger if both share one variance.
  const p = fUpperTail(s.variance / pooled.variance, s.n - 1, pooled.df);
  return p < alpha ? { variance: s.variance, df: s.n - 1 } : pooled;
}

/** P(F > f) for F(d1, d2) = I_x(d2/2, d1/2) with x = d2 / (d2 + d1 f). */
function fUpperTail(f: number, d1: number, d2: number): number {
  return regularizedBeta(d2 / (d2 + d1 * f), d2 / 2, d1 / 2);
}
