// The global `performance` (not node:perf_hooks, whose module costs memory for nothing here).
/** Wall-clock Unix time in ms with sub-ms fractions, monotonic within the process. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

/** Rounds a timestamp to whole µs so its JSON form stays short. */
export function roundToMicros(t: number): number {
  return Math.round(t * 1000) / 1000;
}

export interface Ticker {
  stop(): void;
  /** Ticks that were due but skipped because a previous tick ran late. */
  readonly missed: number;
}

/**
 * Calls `onTick` at start + k × periodMs for k = 1, 2, … — a drift-free schedule: each timer is
 * set against the absolute target, so lateness of one tick does not shift the ones after it.
 * If the process falls behind by whole periods, the ticks it missed are skipped (and counted),
 * never run in a burst.
 */
export function startTicker(periodMs: number, onTick: () => void, now: () => number = nowMs): Ticker {
  const start = now();
  let k = 0;
  let missed = 0;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const schedule = () => {
    if (stopped) return;
    k += 1;
    const current = now();
    const behind = Math.floor((current - (start + k * periodMs)) / periodMs);
    if (behind > 0) {
      missed += behind;
      k += behind;
    }
    timer = setTimeout(run, Math.max(0, start + k * periodMs - current));
  };
  const run = () => {
    if (stopped) return;
    onTick();
    schedule();
  };
  schedule();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
    get missed() {
      return missed;
    },
  };
}
