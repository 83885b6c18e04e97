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
  requireFinite(baseline, 'baseline');
  requireFinite(candidate, 'candidate');
  const b = meanVar(baseline);
  const c = meanVar(candidate);
  if (b.n === 0 || c.n === 0) return { ok: false, reason: 'too_few_repetitions', change: null, ci95: null };
  if (!(b.mean > 0 && c.mean > 0)) return { ok: false, reason: 'non_positive_mean', change: null, ci95: null };
  const change = c.mean / b.mean - 1;
  if (b.n < 2 || c.n < 2) return { ok: false, reason: 'too_few_repetitions', change, ci95: null };
  const ub = b.variance / (b.n * b.mean * b.mean);
  const uc = c.variance / (c.n * c.mean * c.mean);
  const u = ub + uc;
  if (u === 0) return { ok: true, change, ci95: [change, change] };
  const df = (u * u) / ((ub * ub) / (b.n - 1) + (uc * uc) / (c.n - 1));
  const half = studentTQuantile(0.975, df) * Math.sqrt(u);
  const logRatio = Math.log(c.mean / b.mean);
  return { ok: true, change, ci95: [Math.exp(logRatio - half) - 1, Math.exp(logRatio + half) - 1] };
}
