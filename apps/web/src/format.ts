// Every figure the UI shows goes through these, and they read like the CLI's (apps/cli
// src/output/units.ts): three significant digits with an SI prefix, clock-like elapsed times, `—`
// for "no value". The CLI's module is not imported because it would pull Node-only code into the
// browser bundle.

export const NO_VALUE = '—';

type Maybe = number | null | undefined;

export function isNumber(x: unknown): x is number {
  return typeof x === 'number' && Number.isFinite(x);
}

const SI_PREFIXES = [
  { prefix: 'µ', factor: 1e-6 },
  { prefix: 'm', factor: 1e-3 },
  { prefix: '', factor: 1 },
  { prefix: 'k', factor: 1e3 },
  { prefix: 'M', factor: 1e6 },
  { prefix: 'G', factor: 1e9 },
  { prefix: 'T', factor: 1e12 },
] as const;

function threeDigits(x: number): string {
  if (x === 0) return '0';
  if (Math.abs(x) >= 1000) return String(Math.round(x));
  return x.toPrecision(3);
}

/** `value` in `unit` with the SI prefix that puts the mantissa in [1, 1000), three significant digits. */
export function withPrefix(value: Maybe, unit: string): string {
  if (!isNumber(value)) return NO_VALUE;
  if (value === 0) return `0 ${unit}`;
  const magnitude = Math.abs(value);
  let index = SI_PREFIXES.findIndex((p) => magnitude < p.factor * 1000);
  if (index < 0) index = SI_PREFIXES.length - 1;
  let step = SI_PREFIXES[index]!;
  let mantissa = Number((value / step.factor).toPrecision(3));
  if (Math.abs(mantissa) >= 1000 && index < SI_PREFIXES.length - 1) {
    step = SI_PREFIXES[index + 1]!;
    mantissa /= 1000;
  }
  return `${threeDigits(mantissa)} ${step.prefix}${unit}`;
}

export const formatEnergy = (joules: Maybe): string => withPrefix(joules, 'J');
export const formatPower = (watts: Maybe): string => withPrefix(watts, 'W');
export const formatEdp = (jouleSeconds: Maybe): string => withPrefix(jouleSeconds, 'J·s');

function pad2(n: number): string {
  return String(n).padStart(2, '0');
}

function clock(totalSeconds: number): string {
  if (totalSeconds < 3600) return `${Math.floor(totalSeconds / 60)} min ${pad2(totalSeconds % 60)} s`;
  const minutes = Math.round(totalSeconds / 60);
  if (minutes < 24 * 60) return `${Math.floor(minutes / 60)} h ${pad2(minutes % 60)} min`;
  const hours = Math.round(totalSeconds / 3600);
  return `${Math.floor(hours / 24)} d ${pad2(hours % 24)} h`;
}

/** A measured duration: "223 ms", "3.21 s" under a minute, then "1 min 05 s", "1 h 02 min". */
export function formatTime(seconds: Maybe): string {
  if (!isNumber(seconds)) return NO_VALUE;
  const f = (s: number): string => {
    if (s === 0) return '0 s';
    if (Number(s.toPrecision(3)) < 60) return withPrefix(s, 's');
    return clock(Math.round(s));
  };
  return seconds < 0 ? `-${f(-seconds)}` : f(seconds);
}

/** A wall-clock span to the second (time in queue, time running): "42 s", "1 min 05 s". */
export function formatElapsed(seconds: Maybe): string {
  if (!isNumber(seconds)) return NO_VALUE;
  const whole = Math.max(0, Math.round(seconds));
  return whole < 60 ? `${whole} s` : clock(whole);
}

/** A fraction as a percentage with one decimal: 0.1234 → "12.3 %". */
export function formatPercent(fraction: Maybe): string {
  if (!isNumber(fraction)) return NO_VALUE;
  const text = `${(fraction * 100).toFixed(1)} %`;
  return text === '-0.0 %' ? '0.0 %' : text;
}

/** A count with thousands separators: 12345 → "12,345". */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
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
