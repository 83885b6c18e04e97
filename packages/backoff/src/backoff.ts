// The one backoff rule: the delay doubles from `initialMs` per failure in a row, up to `maxMs`,
// and a share `jitter` of it is random, always taken off, never added:
//
//   exact = min(maxMs, initialMs · 2^(failures − 1))
//   delay = exact · (1 − jitter) + exact · jitter · random(),  random() in [0, 1)
//
// Why this rule ("equal jitter" at the default 0.5):
// - Clients that failed together (every browser after an API restart, every scheduler after a
//   login node came back) would otherwise retry together and fail together again; a random share
//   spreads them over a window as wide as half the delay.
// - The fixed share keeps the backoff growing: unlike "full jitter" (random · exact) a client never
//   retries at once after its tenth failure.
// - Taking the random share off, never adding it, keeps `maxMs` a true bound: the longest wait is
//   the one the caller configured.
// - `jitter: 0` is exact doubling, for a caller that retries alone (one agent per node and run).

/** How a caller backs off. */
export interface BackoffOptions {
  /** Delay after the first failure (ms). */
  initialMs: number;
  /** Longest delay (ms): doubling stops here, and jitter never goes above it. Below `initialMs`, it caps the first delay too. */
  maxMs: number;
  /** Random share of each delay, 0–1: the delay lies in [(1 − jitter) · exact, exact]. Default 0.5; 0 is exact doubling. */
  jitter?: number;
}

/** Half fixed, half random: see the rule above. */
export const DEFAULT_JITTER = 0.5;

/** Keeps 2^(failures − 1) finite (and initialMs · it meaningful) for any count of failures. */
const MAX_DOUBLINGS = 30;

/**
 * How long to wait (ms) after `failures` failures in a row before trying again; 0 when nothing
 * failed. `random` returns a number in [0, 1) and is injectable for tests.
 */
export function backoffDelay(failures: number, options: BackoffOptions, random: () => number = Math.random): number {
  checkOptions(options);
  if (failures <= 0) return 0;
  const jitter = options.jitter ?? DEFAULT_JITTER;
  const exact = Math.min(options.maxMs, options.initialMs * 2 ** Math.min(failures - 1, MAX_DOUBLINGS));
  return Math.round(exact * (1 - jitter) + exact * jitter * random());
}

/** Counts failures in a row: `next()` after each failure, `succeeded()` after a success. */
export class Backoff {
  private failed = 0;

  constructor(
    private readonly options: BackoffOptions,
    private readonly random: () => number = Math.random,
  ) {
    checkOptions(options);
  }

  /** Records one more failure and returns how long to wait (ms) before the next attempt. */
  next(): number {
    this.failed += 1;
    return backoffDelay(this.failed, this.options, this.random);
  }

  /** An attempt succeeded: the next failure waits `initialMs` again. */
  succeeded(): void {
    this.failed = 0;
  }

  /** Failures in a row since the last success (or since the start). */
  get failures(): number {
    return this.failed;
  }
}

function checkOptions({ initialMs, maxMs, jitter }: BackoffOptions): void {
  if (!(initialMs >= 0)) throw new RangeError(`backoff initialMs must be ≥ 0, got ${initialMs}`);
  if (!(maxMs >= 0)) throw new RangeError(`backoff maxMs must be ≥ 0, got ${maxMs}`);
  if (jitter !== undefined && !(jitter >= 0 && jitter <= 1)) throw new RangeError(`backoff jitter must be within 0–1, got ${jitter}`);
}
