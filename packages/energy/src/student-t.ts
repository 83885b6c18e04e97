/** Student's t distribution: CDF, two-sided p-values and quantiles, and the special functions they rest on. */
import { EnergyInputError } from './errors';

/**
 * P(T ≤ t) for Student's t with `df` > 0 degrees of freedom (df need not be an integer;
 * Infinity gives the standard normal). Written with the regularised incomplete beta function:
 * P(|T| > |t|) = I_{df/(df+t²)}(df/2, ½).
 */
export function studentTCdf(t: number, df: number): number {
  if (Number.isNaN(t)) throw new EnergyInputError('ERG_ENERGY_BAD_ARGUMENT', 't must be a number, got NaN');
  if (!(df > 0)) throw new EnergyInputError('ERG_ENERGY_BAD_ARGUMENT', `df must be positive, got ${df}`);
  if (t === Infinity) return 1;
  if (t === -Infinity) return 0;
  // Beyond ~1e7 the beta fraction needs thousands of terms and the t is normal to ~1e-8 anyway.
  if (df > 1e7) return 0.5 * erfc(-t / Math.SQRT2);
  const tail = 0.5 * regularizedBeta(df / (df + t * t), df / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

/** Two-sided p-value P(|T| ≥ |t|). Computed from the tail directly so small p keep their precision. */
export function studentTTwoSided(t: number, df: number): number {
  const lower = studentTCdf(-Math.abs(t), df);
  return Math.min(1, 2 * lower);
}

/**
 * The p-quantile of Student's t distribution with `df` degrees of freedom (df > 0, not
 * necessarily an integer). Closed forms for df = 1 and 2; for df above 1e5 the Cornish–Fisher
 * expansion around the normal quantile (error far below 1e-9); otherwise Newton's method on the
 * CDF, and bisection of the CDF to ~1e-12 where Newton does not settle.
 */
export function studentTQuantile(p: number, df: number): number {
  if (!(p > 0 && p < 1)) throw new EnergyInputError('ERG_ENERGY_BAD_ARGUMENT', `p must lie strictly between 0 and 1, got ${p}`);
  if (!(df > 0)) throw new EnergyInputError('ERG_ENERGY_BAD_ARGUMENT', `df must be positive, got ${df}`);
  if (p === 0.5) return 0;
  if (p < 0.5) return -studentTQuantile(1 - p, df);
  if (df === 1) return Math.tan(Math.PI * (p - 0.5));
  if (df === 2) return (2 * p - 1) / Math.sqrt(2 * p * (1 - p));
  if (df > 1e5) return cornishFisher(normalQuantile(p), df);
  const newton = newtonQuantile(p, df);
  if (newton !== null) return newton;
  const q = 1 - p;
  let lo = 0;
  let hi = 1;
  while (1 - studentTCdf(hi, df) > q) {
    lo = hi;
    hi *= 2;
  }
  for (let i = 0; i < 200 && hi - lo > 1e-13 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (1 - studentTCdf(mid, df) > q) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/**
 * Newton's method on `studentTCdf` for p in (0.5, 1), started from the Cornish–Fisher expansion;
 * null when it does not settle. Newton needs ~3 CDF evaluations where bisection needs ~45, which
 * is what makes thousands of verdicts (the regression simulations) affordable.
 */
function newtonQuantile(p: number, df: number): number | null {
  const logNorm = lnGamma((df + 1) / 2) - lnGamma(df / 2) - 0.5 * Math.log(df * Math.PI);
  let x = cornishFisher(normalQuantile(p), df);
  for (let i = 0; i < 12; i++) {
    const density = Math.exp(logNorm - ((df + 1) / 2) * Math.log1p((x * x) / df));
    const step = (studentTCdf(x, df) - p) / density;
    const next = x - step;
    if (!(next > 0) || !Number.isFinite(next)) break;
    x = next;
    if (Math.abs(step) < 1e-10 * x) return x;
  }
  return null;
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

/**
 * Regularised incomplete beta I_x(a, b) by its continued fraction (Numerical Recipes' betai,
 * evaluated with the modified Lentz method).
 */
export function regularizedBeta(x: number, a: number, b: number): number {
  if (!(a > 0 && b > 0)) throw new EnergyInputError('ERG_ENERGY_BAD_ARGUMENT', `a and b must be positive, got a=${a}, b=${b}`);
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(lnGamma(a + b) - lnGamma(a) - lnGamma(b) + a * Math.log(x) + b * Math.log1p(-x));
  // The fraction converges fast only for x below the mean (a+1)/(a+b+2); use I_x(a,b) = 1 − I_{1−x}(b,a) above it.
  if (x < (a + 1) / (a + b + 2)) return (front * betaFraction(x, a, b)) / a;
  return 1 - (front * betaFraction(1 - x, b, a)) / b;
}

function betaFraction(x: number, a: number, b: number): number {
  const tiny = 1e-300;
  const clamp = (v: number) => (Math.abs(v) < tiny ? tiny : v);
  let c = 1;
  let d = 1 / clamp(1 - ((a + b) * x) / (a + 1));
  let h = d;
  for (let m = 1; m <= 100_000; m++) {
    const m2 = 2 * m;
    const even = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 / clamp(1 + even * d);
    c = clamp(1 + even / c);
    h *= d * c;
    const odd = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 / clamp(1 + odd * d);
    c = clamp(1 + odd / c);
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-15) return h;
  }
  return h;
}

const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905,
  -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];

/** ln Γ(x) by the Lanczos approximation (g = 7), ~1e-15 relative. */
export function lnGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x);
  const y = x - 1;
  let s = LANCZOS[0]!;
  for (let i = 1; i < LANCZOS.length; i++) s += LANCZOS[i]! / (y + i);
  const t = y + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (y + 0.5) * Math.log(t) - t + Math.log(s);
}

/** Complementary error function, Numerical Recipes' erfcc (Chebyshev fit, relative error < 1.2e-7). */
function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? r : 2 - r;
}

