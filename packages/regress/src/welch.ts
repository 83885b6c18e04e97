import { RegressInputError } from './errors';
import { meanVar, requireFinite } from './sample';
import { studentTCdf, studentTTwoSided } from '@erg/energy';

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
  if (a.length < 2 || b.length < 2)
    throw new RegressInputError('ERG_REGRESS_TOO_FEW', `Welch's test needs at least 2 values per sample, got ${a.length} and ${b.length}`);
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
