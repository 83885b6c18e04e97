/**
 * Two samples compared: Welch's t-test of the difference of their means, and the log of the ratio
 * of their means with its delta-method standard error. The campaign's claims (claims.ts) and
 * @erg/regress's verdicts both rest on these, so a claim in the results and a regression verdict
 * are the same statistic.
 */
import { EnergyInputError } from './errors';
import { studentTCdf, studentTTwoSided } from './student-t';

/** Mean and sample variance (divisor n − 1) in two passes, which keeps precision for large, close values. */
export function meanVar(xs: readonly number[]): { n: number; mean: number; variance: number } {
  const n = xs.length;
  let sum = 0;
  for (const x of xs) sum += x;
  const mean = sum / n;
  let ss = 0;
  for (const x of xs) ss += (x - mean) ** 2;
  return { n, mean, variance: n > 1 ? ss / (n - 1) : 0 };
}

function requireFinite(xs: readonly number[], what: string): void {
  const i = xs.findIndex((x) => typeof x !== 'number' || !Number.isFinite(x));
  if (i >= 0) throw new EnergyInputError('ERG_ENERGY_BAD_ARGUMENT', `${what}[${i}] must be a finite number, got ${String(xs[i])}`);
}

/** Welch's unequal-variance t-test of mean(a) − mean(b). */
export interface WelchResult {
  /** (mean(a) − mean(b)) / √(s²a/na + s²b/nb); ±Infinity when both samples are constant and differ. */
  t: number;
  /** Welch–Satterthwaite degrees of freedom; na + nb − 2 when both variances are 0. */
  df: number;
  /** Two-sided p-value. */
  p: number;
  /** One-sided p-value of the alternative mean(a) > mean(b). */
  pGreater: number;
  /** One-sided p-value of the alternative mean(a) < mean(b). */
  pLess: number;
}

/** Welch's t-test; both samples need at least two finite values. */
export function welch(a: readonly number[], b: readonly number[]): WelchResult {
  requireFinite(a, 'a');
  requireFinite(b, 'b');
  if (a.length < 2 || b.length < 2) throw new EnergyInputError('ERG_ENERGY_BAD_ARGUMENT', `Welch's test needs at least 2 values per sample, got ${a.length} and ${b.length}`);
  const sa = meanVar(a);
  const sb = meanVar(b);
  const ua = sa.variance / sa.n;
  const ub = sb.variance / sb.n;
  const diff = sa.mean - sb.mean;
  const se2 = ua + ub;
  if (se2 === 0) {
    // Two constant samples: identical means carry no evidence, different ones are certain.
    const t = diff === 0 ? 0 : diff > 0 ? Infinity : -Infinity;
    const df = sa.n + sb.n - 2;
    return { t, df, p: diff === 0 ? 1 : 0, pGreater: diff > 0 ? 0 : 1, pLess: diff < 0 ? 0 : 1 };
  }
  const t = diff / Math.sqrt(se2);
  const df = (se2 * se2) / ((ua * ua) / (sa.n - 1) + (ub * ub) / (sb.n - 1));
  const pLess = studentTCdf(t, df);
  return { t, df, p: studentTTwoSided(t, df), pGreater: studentTCdf(-t, df), pLess };
}

/** Why a ratio of means could not be tested. */
export type ChangeUnavailableReason = 'too_few_repetitions' | 'non_positive_mean';

/** log(mean(candidate)/mean(baseline)) with its delta-method standard error and Welch–Satterthwaite df. */
export type LogRatio =
  | { ok: true; change: number; logRatio: number; se: number; df: number }
  | { ok: false; reason: ChangeUnavailableReason; change: number | null };

/**
 * log R̂ = log(mean(candidate)/mean(baseline)) with se = √(s²c/(nc·m²c) + s²b/(nb·m²b)) (the
 * delta method) and ν by Welch–Satterthwaite on the two terms (nb + nc − 2 when both are 0).
 * Chosen over Fieller because its interval is always finite and asymmetric the way ratios are.
 * Needs positive means and n ≥ 2 per side; otherwise `ok: false` with the reason (and the point
 * change, mean(candidate)/mean(baseline) − 1, when the means allow it).
 */
export function logRatioOfMeans(baseline: readonly number[], candidate: readonly number[]): LogRatio {
  requireFinite(baseline, 'baseline');
  requireFinite(candidate, 'candidate');
  const b = meanVar(baseline);
  const c = meanVar(candidate);
  if (b.n === 0 || c.n === 0) return { ok: false, reason: 'too_few_repetitions', change: null };
  if (!(b.mean > 0 && c.mean > 0)) return { ok: false, reason: 'non_positive_mean', change: null };
  const change = c.mean / b.mean - 1;
  if (b.n < 2 || c.n < 2) return { ok: false, reason: 'too_few_repetitions', change };
  const ub = b.variance / (b.n * b.mean * b.mean);
  const uc = c.variance / (c.n * c.mean * c.mean);
  const u = ub + uc;
  const df = u === 0 ? b.n + c.n - 2 : (u * u) / ((ub * ub) / (b.n - 1) + (uc * uc) / (c.n - 1));
  return { ok: true, change, logRatio: Math.log(c.mean / b.mean), se: Math.sqrt(u), df };
}

/**
 * log R̂ = log(mean(candidate)/mean(baseline)) over paired values — baseline[i] and candidate[i]
 * ran in the same block of the campaign's run order, side by side — with the delta method's
 * standard error including their covariance: se² = s²_d / n with dᵢ = cᵢ/m_c − bᵢ/m_b (the
 * linearised log ratio), on n − 1 degrees of freedom. What drifts from block to block (a busier
 * node, the room's temperature) moves both members of a pair and cancels in d; the unpaired
 * statistic counts it as noise. Needs n ≥ 2 pairs and positive means.
 */
export function pairedLogRatioOfMeans(baseline: readonly number[], candidate: readonly number[]): LogRatio {
  requireFinite(baseline, 'baseline');
  requireFinite(candidate, 'candidate');
  if (baseline.length !== candidate.length) throw new RangeError(`paired samples need as many values each, got ${baseline.length} and ${candidate.length}`);
  const n = baseline.length;
  if (n === 0) return { ok: false, reason: 'too_few_repetitions', change: null };
  const mb = baseline.reduce((s, x) => s + x, 0) / n;
  const mc = candidate.reduce((s, x) => s + x, 0) / n;
  if (!(mb > 0 && mc > 0)) return { ok: false, reason: 'non_positive_mean', change: null };
  const change = mc / mb - 1;
  if (n < 2) return { ok: false, reason: 'too_few_repetitions', change };
  const d = baseline.map((b, i) => candidate[i]! / mc - b / mb);
  const variance = meanVar(d).variance;
  return { ok: true, change, logRatio: Math.log(mc / mb), se: Math.sqrt(variance / n), df: n - 1 };
}
