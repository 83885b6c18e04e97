// Every figure the UI shows reads as in the CLI: both use @erg/format (three significant digits
// with an SI prefix, clock-like durations, `—` for "no value"). Here: what only the UI needs.
import { formatElapsed as formatSpan, isNumber, NO_VALUE } from '@erg/format';

export {
  formatByteRate, formatBytes, formatCarbon, formatCost, formatCount, formatEdp, formatEnergy, formatIntensity, formatJoulesPerGB, formatNumber, formatPercent, formatPower,
  formatP, formatTime, isNumber, linkKindLabel, NO_VALUE, plural, withPrefix,
} from '@erg/format';

/**
 * A wall-clock span to the second (time in queue, time running): "42 s", "1 min 05 s". Never
 * negative: a start a little in the future (clocks of browser and API apart) reads "0 s".
 */
export function formatElapsed(seconds: number | null | undefined): string {
  return isNumber(seconds) ? formatSpan(Math.max(0, seconds)) : NO_VALUE;
}

/** Seconds between an ISO time (or Unix ms) and `nowMs`; null when the time is absent or invalid. */
export function secondsSince(at: string | number | null | undefined, nowMs: number): number | null {
  const ms = toMs(at);
  return ms === null ? null : (nowMs - ms) / 1000;
}

/** Unix ms from Unix ms, a numeric string or ISO 8601; null otherwise. */
export function toMs(at: string | number | null | undefined): number | null {
  if (at === null || at === undefined || at === '') return null;
  if (typeof at === 'number') return Number.isFinite(at) ? at : null;
  if (/^\d+(\.\d+)?$/.test(at)) return Number(at);
  const ms = Date.parse(at);
  return Number.isNaN(ms) ? null : ms;
}
