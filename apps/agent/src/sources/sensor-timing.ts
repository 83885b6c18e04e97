import { MAX_SENSOR_TIMING_MS } from '@erg/spec/sensors';

// What a sensor says of its timing (SensorInfo averagingMs, updateMs): the interval a power
// reading averages, and how often a counter changes on the device's own clock. The first is
// stated by the source where it knows it (hwmon reads it from sysfs, NVML's is documented); the
// second the agent measures, once at start-up, with probeUpdatePeriods — the median spacing of
// value changes while it reads the counters as fast as it usefully can.

/** `ms` as a sensor may declare it (finite, above 0, at most an hour: what the API accepts); undefined otherwise. */
export function declarableMs(ms: number): number | undefined {
  return Number.isFinite(ms) && ms > 0 && ms <= MAX_SENSOR_TIMING_MS ? ms : undefined;
}

/** How probeUpdatePeriods reads: every `pollMs`, until each counter changed `changes` times or `budgetMs` passed. */
export interface ProbeOptions {
  pollMs: number;
  budgetMs: number;
  changes: number;
  /** The fewest spacings a period is reported from. */
  minSpacings: number;
  /** A period under this many times the actual spacing of reads is not resolved (the counter changed about as often as it was read). */
  minPollRatio: number;
  /** Monotonic time (ms). */
  now: () => number;
  sleep: (ms: number) => void;
}

/**
 * At NVML's documented ~20–100 ms, nine changes take up to 0.9 s; 0.8 s and at least four
 * spacings keep the start-up short and still measure a 100 ms counter. Reads every 1 ms.
 */
export const UPDATE_PROBE: ProbeOptions = {
  pollMs: 1,
  budgetMs: 800,
  changes: 9,
  minSpacings: 4,
  minPollRatio: 3,
  now: () => performance.now(),
  sleep: sleepSync,
};

/** What the probe saw of one counter, for meta.json. */
export interface UpdateProbe {
  /** The median spacing of value changes (ms, to 0.1 ms); null: too few changes, or as many as reads. */
  updateMs: number | null;
  changes: number;
  reads: number;
  spanMs: number;
}

/**
 * Reads every counter (`read` answers NaN when a read fails) until each has changed
 * `options.changes` times or the budget is spent, and reports each one's median change spacing.
 * Blocks for at most budgetMs (plus one read round): it runs once, while the sources are detected.
 */
export function probeUpdatePeriods(reads: readonly (() => number)[], options: ProbeOptions = UPDATE_PROBE): UpdateProbe[] {
  const { now, sleep } = options;
  const start = now();
  const last = reads.map((read) => read());
  const changeTimes: number[][] = reads.map(() => []);
  let rounds = 0;
  while (now() - start < options.budgetMs && changeTimes.some((c) => c.length < options.changes)) {
    sleep(options.pollMs);
    rounds += 1;
    const t = now();
    reads.forEach((read, i) => {
      if (changeTimes[i]!.length >= options.changes) return;
      const v = read();
      if (!Number.isFinite(v) || v === last[i]) return;
      last[i] = v;
      changeTimes[i]!.push(t);
    });
  }
  const spanMs = now() - start;
  const pollSpacing = rounds > 0 ? spanMs / rounds : Number.POSITIVE_INFINITY;
  return changeTimes.map((times) => {
    const median = medianSpacing(times);
    const resolved = median !== null && times.length - 1 >= options.minSpacings && median >= options.minPollRatio * pollSpacing;
    return { updateMs: resolved ? Math.round(median * 10) / 10 : null, changes: times.length, reads: rounds, spanMs: Math.round(spanMs) };
  });
}

/** The median of the spacings between successive times; null with fewer than two. */
export function medianSpacing(times: readonly number[]): number | null {
  if (times.length < 2) return null;
  const gaps = times.slice(1).map((t, i) => t - times[i]!).sort((a, b) => a - b);
  const mid = gaps.length >> 1;
  return gaps.length % 2 === 1 ? gaps[mid]! : (gaps[mid - 1]! + gaps[mid]!) / 2;
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Blocks the thread for `ms` (the probes run inside synchronous detection). */
export function sleepSync(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}
