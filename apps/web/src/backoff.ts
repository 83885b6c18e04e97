// Reconnect delays for the event stream: exponential from `baseMs`, capped at `maxMs`, with
// "equal jitter" (half fixed, half random) so that many browsers do not reconnect in lockstep
// after an API restart. A connection that stayed up resets the attempt count.

export interface BackoffOptions {
  baseMs?: number;
  maxMs?: number;
  /** 0–1, the random share of each delay. */
  jitter?: number;
}

/** The delay before reconnect attempt `attempt` (0-based); `random` in [0, 1). */
export function backoffDelay(attempt: number, options: BackoffOptions = {}, random: () => number = Math.random): number {
  const base = options.baseMs ?? 500;
  const max = options.maxMs ?? 15_000;
  const jitter = options.jitter ?? 0.5;
  const full = Math.min(max, base * 2 ** Math.max(0, attempt));
  return Math.round(full * (1 - jitter) + full * jitter * random());
}

/** Counts attempts; `succeeded` resets them. */
export class Backoff {
  private attempt = 0;
  constructor(private readonly options: BackoffOptions = {}, private readonly random: () => number = Math.random) {}
  next(): number {
    return backoffDelay(this.attempt++, this.options, this.random);
  }
  succeeded(): void {
    this.attempt = 0;
  }
  get attempts(): number {
    return this.attempt;
  }
}
