import { type ChangeUnavailableReason, logRatioOfMeans as logRatio, type LogRatio, studentTQuantile } from '@erg/energy';
import { requireFinite } from './sample';

/** Why a relative change could not be computed; the log ratio of means. */
export type { ChangeUnavailableReason, LogRatio } from '@erg/energy';

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

/**
 * The log ratio of means under relativeChange's interval (and the sequential futility test):
 * @erg/energy's, which the campaign's claims use too, with the samples checked here so that a
 * bad one is a RegressInputError naming it.
 */
export function logRatioOfMeans(baseline: readonly number[], candidate: readonly number[]): LogRatio {
  requireFinite(baseline, 'baseline');
  requireFinite(candidate, 'candidate');
  return logRatio(baseline, candidate);
}
