import type { Quantity } from '../wire';

// The state the hardware is in — power limit, application clocks, temperature, clock-event
// (throttle) reasons — is read at most once a second, not every sampling cycle.
//
// Why: at 10 Hz on an 8-GPU node, four or five more NVML calls per GPU per cycle are 400 calls a
// second on top of the ~500 of the power and energy sensors, each an ioctl into the driver (tens of
// µs), which would about double the NVML share of the agent's budget (< 1 % of one core); the
// nvidia-smi source gets the values for free but would still spool and push them 10 times a
// second. And the state moves slowly or is read as a share: a limit and application clocks change
// when someone sets them, temperature with thermal time constants of seconds, and what matters of
// the reasons bitmask is the share of a run the GPU was held down — sampled once a second, that
// share is resolved to 1 s, finer than the ≥ 10 s windows energy figures need. At 1 s or slower
// sampling every cycle reads the state.

/** The quantities read at most once a second. */
export const STATE_QUANTITIES: ReadonlySet<Quantity> = new Set<Quantity>(['power_limit', 'clock_app', 'temp', 'clock_events']);

/** Period of the state reads (ms). */
export const STATE_PERIOD_MS = 1000;

/** Decides, cycle by cycle, whether this one reads the state sensors: once per STATE_PERIOD_MS, on a drift-free schedule. */
export class StateCadence {
  private next = Number.NEGATIVE_INFINITY;
  /** A cycle up to half a sampling interval early still counts (timers fire up to ~1 ms early; cycles land on the schedule's grid). */
  private readonly slack: number;

  constructor(intervalMs: number) {
    this.slack = Math.min(intervalMs, STATE_PERIOD_MS) / 2;
  }

  /** Whether the cycle at `t` (ms) reads the state sensors; call once per cycle. */
  due(t: number): boolean {
    if (t < this.next - this.slack) return false;
    this.next = this.next === Number.NEGATIVE_INFINITY ? t + STATE_PERIOD_MS : this.next + STATE_PERIOD_MS;
    // Far behind (a long pause): start the schedule again from this cycle rather than catch up.
    if (this.next <= t) this.next = t + STATE_PERIOD_MS;
    return true;
  }
}
