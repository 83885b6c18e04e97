import { studentTQuantile } from '@erg/energy';
import { meanVar, requireFinite } from './sample';

/** Why a relative change could not be computed. */
export type ChangeUnavailableReason = 'too_few_repetitions' | 'non_positive_mean';

export type RelativeChange =
  | { ok: true; change: number; ci95: [number, number] }
  | { ok: false; reason: ChangeUnavailableReason; change: number | null; ci95: null };

/**
 * mean(candidate)/mean(baseline) − 1 with a 95 % interval from the delta method on the log of
 * the ratio of means: log R̂ ± t₀.₉₇₅,ν · √(s²c/(nc·m²c) + s²b/(nb·m²b)), ν by Welch–Satterthwaite
 * on the two terms, then exponentiated. Chosen over Fieller because it is always a finite
 * interval (Fieller's is unbounded when the baseline mean is not clearly above 0) and it is
 * asymmetric the way ratios are (−50 % and +100 % are the same distance). The interval needs
 * n ≥ 2 on both sides and positive means; otherwise `ok: false` with the reason (and the
 * point change when the means allow it).
 */
export function relativeChange(baseline: readonly number[], candidate: readonly number[]): RelativeChange {
  const r = logRatioOfMeans(baseline, candidate);
  if (!r.ok) return { ok: false, reason: r.reason, change: r.change, ci95: null };
  const { change, logRatio, se, df } = r;
  if (se === 0) return { ok: true, change, ci95: [change, change] };
  const half = studentTQuantile(0.975, df) * se;
  return { ok: true, change, ci95: [Math.exp(logRatio - half) - 1, Math.exp(logRatio + half) - 1] };
}

/** log(mean(candidate)/mean(baseline)) with its delta-method standard error and Welch–Satterthwaite df. */
export type LogRatio =
  | { ok: true; change: number; logRatio: number; se: number; df: number }
  | { ok: false; reason: ChangeUnavailableReason; change: number | null };

/** The log ratio of means under relativeChange's interval (and the sequential futility test). */
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
