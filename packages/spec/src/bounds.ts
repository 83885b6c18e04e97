/**
 * Bounds on numbers that come into erg from outside and that figures are computed from, beyond
 * the sample ranges of the telemetry (sensors.ts's QUANTITIES, MAX_WRAP_AT): a measurement's
 * window and a figure of merit. Each is physical — nothing measured lies outside it — and keeps
 * the arithmetic on it finite: a figure that is not (Infinity, NaN) has no JSON and no answer.
 * (The times a job writes into its run directory are bounded where they are read: run-dir.ts.)
 */

// Windows are stored in nanoseconds as 64-bit integers, which end in 2262 and begin in 1677: an
// import finished with a year 9999 or 0001 overflowed Postgres' bigint (a 500). Samples and marks
// keep to their own run's bounds (sampleTimeBounds), which lie within these.

/** The earliest time a measurement may start: 2000-01-01. */
export const EARLIEST_MEASUREMENT_MS = Date.UTC(2000, 0, 1);
/** How far after the server's now a time may lie: node clocks and erg's differ by this much at most. */
export const CLOCK_SKEW_MS = 10 * 60_000;
/** The longest window a measurement may cover: a year and a day (Slurm jobs end within days; an import of a long service, a year). */
export const MAX_WINDOW_MS = 366 * 86_400_000;

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * What is wrong with a window from `startMs` to `endMs` (Unix ms) at `nowMs`, as an issue at the
 * field to change; null when both ends lie within [EARLIEST_MEASUREMENT_MS, now + CLOCK_SKEW_MS],
 * it ends after it starts, and it is at most MAX_WINDOW_MS long. `fields` names its two ends.
 */
export function windowIssue(
  startMs: number, endMs: number, nowMs: number, fields: { start: string; end: string } = { start: 'startedAt', end: 'endedAt' },
): { field: string; message: string } | null {
  const latest = nowMs + CLOCK_SKEW_MS;
  for (const [field, ms] of [[fields.start, startMs], [fields.end, endMs]] as const) {
    if (!Number.isFinite(ms)) return { field, message: 'not a real date and time (a day or an hour that does not exist)' };
    if (ms < EARLIEST_MEASUREMENT_MS) return { field, message: `${iso(ms)} is before ${iso(EARLIEST_MEASUREMENT_MS)}, the earliest time erg takes for a measurement` };
    if (ms > latest) {
      return { field, message: `${iso(ms)} is in the future (the server's time is ${iso(nowMs)}; clocks may differ by ${CLOCK_SKEW_MS / 60_000} minutes at most)` };
    }
  }
  if (endMs <= startMs) return { field: fields.end, message: `must be after ${fields.start}` };
  if (endMs - startMs > MAX_WINDOW_MS) {
    return { field: fields.end, message: `the window is ${((endMs - startMs) / 86_400_000).toFixed(1)} days long; at most ${MAX_WINDOW_MS / 86_400_000} days` };
  }
  return null;
}

/**
 * The largest magnitude a figure of merit may have (steps, tokens/s, FLOP/s: an exascale machine
 * does 1e18 a second). Beyond it the statistics over runs — sums, squares, their squares in a
 * two-sample test — would leave the doubles' range.
 */
export const MAX_METRIC_MAGNITUDE = 1e50;
