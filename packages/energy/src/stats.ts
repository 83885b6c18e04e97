import { EnergyInputError } from './errors';

/** n, mean, spread and 95 % interval of one figure over repetitions. */
export interface Summary {
  /** Values counted: finite numbers only (null, undefined, NaN and ±Infinity are left out). */
  n: number;
  /** null only when n = 0, as are std, ci95, min and max. */
  mean: number | null;
  /** Sample standard deviation (divisor n − 1); 0 when n = 1. */
  std: number | null;
  /** Two-sided 95 % Student-t interval of the mean; [mean, mean] when n = 1 (one value carries no spread: read n). */
  ci95: [number, number] | null;
  /** Coefficient of variation std / |mean|; null when n = 0 or the mean is 0. */
  cv: number | null;
  min: number | null;
  max: number | null;
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
  const half = n > 1 ? studentTQuantile(0.975, n - 1) * (std / Math.sqrt(n)) : 0;
  return { n, mean, std, ci95: [mean - half, mean + half], cv: mean === 0 ? null : std / Math.abs(mean), min, max };
}

/**
 * The p-quantile of Student's t distribution with `df` degrees of freedom (df > 0, not
 * necessarily an integer). Closed forms for df = 1 and 2; otherwise the t CDF, written with the
 * regularised incomplete beta function, is inverted by bisection to ~1e-12; for df above 1e5
 * the Cornish–Fisher expansion around the normal quantile (error far below 1e-9) is used, and
 * df = Infinity gives the normal quantile.
 */
export function studentTQuantile(p: number, df: number): number {
  if (!(p > 0 && p < 1)) throw new EnergyInputError('ERG_ENERGY_BAD_ARGUMENT', `p must lie strictly between 0 and 1, got ${p}`);
  if (!(df > 0)) throw new EnergyInputError('ERG_ENERGY_BAD_ARGUMENT', `df must be positive, got ${df}`);
  if (p === 0.5) return 0;
  if (p < 0.5) return -studentTQuantile(1 - p, df);
  if (df === 1) return Math.tan(Math.PI * (p - 0.5));
  if (df === 2) return (2 * p - 1) / Math.sqrt(2 * p * (1 - p));
  if (df > 1e5) return cornishFisher(normalQuantile(p), df);
  const q = 1 - p;
  let lo = 0;
  let hi = 1;
  while (studentTUpperTail(hi, df) > q) {
    lo = hi;
    hi *= 2;
  }
  for (let i = 0; i < 200 && hi - lo > 1e-13 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (studentTUpperTail(mid, df) > q) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/** P(T > t) for t ≥ 0: ½ · I_{df/(df+t²)}(df/2, ½). */
function studentTUpperTail(t: number, df: number): number {
  return 0.5 * regularizedBeta(df / (df + t * t), df / 2, 0.5);
}

/** Abramowitz & Stegun 26.7.5: t quantile from the normal quantile z, up to the ν⁻⁴ term. */
function cornishFisher(z: number, df: number): number {
  const z2 = z * z;
  const g1 = (z * (z2 + 1)) / 4;
  const g2 = (z * ((5 * z2 + 16) * z2 + 3)) / 96;
  const g3 = (z * (((3 * z2 + 19) * z2 + 17) * z2 - 15)) / 384;
  const g4 = (z * ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945)) / 92160;
  return z + g1 / df + g2 / df ** 2 + g3 / df ** 3 + g4 / df ** 4;
}

/** Acklam's rational approximation of the standard normal quantile (relative error < 1.2e-9). */
function normalQuantile(p: number): number {
  const a = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
  const b = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
  const c = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const poly = (k: number[], x: number) => k.reduce((acc, ki) => acc * x + ki, 0);
  const low = 0.02425;
  if (p < low) {
    const q = Math.sqrt(-2 * Math.log(p));
    return poly(c, q) / (poly(d, q) * q + 1);
  }
  if (p > 1 - low) {
    const q = Math.sqrt(-2 * Math.log(1 - p));
    return -poly(c, q) / (poly(d, q) * q + 1);
  }
  const q = p - 0.5;
  const r = q * q;
  return (poly(a, r) * q) / (poly(b, r) * r + 1);
}

/** Regularised incomplete beta I_x(a, b) by its continued fraction (Numerical Recipes' betai). */
function regularizedBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(lnGamma(a + b) - lnGamma(a) - lnGamma(b) + a * Math.log(x) + b * Math.log1p(-x));
  // The fraction converges fast only on one side of the mean; use the symmetry elsewhere.
  if (x < (a + 1) / (a + b + 2)) return (front * betaFraction(x, a, b)) / a;
  return 1 - (front * betaFraction(1 - x, b, a)) / b;
}

/** Modified Lentz evaluation of the incomplete beta continued fraction. */
function betaFraction(x: number, a: number, b: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 10_000; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-15) break;
  }
  return h;
}

const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905,
  -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];

/** ln Γ(x) by the Lanczos approximation (g = 7), accurate to ~1e-15 relative. */
function lnGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x);
  const y = x - 1;
  let s = LANCZOS[0]!;
  for (let i = 1; i < LANCZOS.length; i++) s += LANCZOS[i]! / (y + i);
  const t = y + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (y + 0.5) * Math.log(t) - t + Math.log(s);
}
