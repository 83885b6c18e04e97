/** Options of exponential backoff between failed connection attempts. */
export interface BackoffOptions {
  /** Delay after the first failure (ms). Default 250. */
  initialMs?: number;
  /** Upper bound of the delay (ms). Default 30 000. */
  maxMs?: number;
  /** Share of the delay that is randomised, 0..1. Default 0.2 (±20 %). */
  jitter?: number;
}

/**
 * Delay before attempt `failures + 1`: initialMs · 2^(failures-1), capped at maxMs, with jitter so
 * that schedulers restarted together do not reconnect in lockstep (and trip a login node's
 * fail2ban or MaxStartups). `random` is injectable for tests.
 */
export function backoffDelayMs(failures: number, options: BackoffOptions = {}, random: () => number = Math.random): number {
  if (failures <= 0) return 0;
  const initialMs = options.initialMs ?? 250;
  const maxMs = options.maxMs ?? 30_000;
  const jitter = options.jitter ?? 0.2;
  const base = Math.min(maxMs, initialMs * 2 ** Math.min(failures - 1, 30));
  const spread = base * jitter * (2 * random() - 1);
  return Math.max(0, Math.round(Math.min(maxMs, base + spread)));
}
