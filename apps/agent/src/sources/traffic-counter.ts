import type { FileReader } from '../read-file';

// A network port's traffic counter read from one sysfs file each cycle and turned into B/s (the
// infiniband and net sources): the increase since the previous read, times the counter's unit,
// over the time between the two reads — the mean rate over the interval before the reading, as
// the energy math integrates it (exactly the counted bytes, however long the interval).
//
// What can go wrong, and what the reading is then:
// - the file cannot be read, or holds no number (the kernel's "N/A (no PMA)"): no reading this
//   cycle, and the next one has no increase to take either;
// - the counter went backwards: it was reset (an interface re-created, `perfquery -R`): that
//   interval's traffic is unknown, so no reading (a 64-bit count never wraps in a run's life);
// - a 32-bit InfiniBand data counter (PortCounters' PortXmitData/PortRcvData, not the extended
//   ones) stops at all ones, 2³² − 1, rather than wrap (IBTA spec, PortCounters): once there it
//   says nothing of the traffic that follows. The interval that reached it is not reported (part
//   of its traffic may be missing) and the counter is reported saturated, for good: the source
//   drops the sensor with that reason. A value above 2³² − 1 proves the counter is 64 bits wide
//   (the kernel gives no width; pma_group_noietf shows 64-bit counters under the same names).

/** The value at which a 32-bit PMA data counter stops. */
export const SATURATED_32 = 0xffffffff;

/** What `step` returns besides a rate (B/s, ≥ 0). */
export const NO_READING = -1;
export const SATURATED = -2;

export class TrafficCounter {
  private prev = Number.NaN;
  private prevMs = Number.NaN;
  /** Whether it was found stopped at SATURATED_32 (it is then never read as traffic again). */
  saturated = false;

  /**
   * @param file the counter's sysfs file
   * @param bytesPerUnit 4 for InfiniBand's data counters (they count 32-bit words: octets / 4), 1 for bytes
   * @param saturates whether it may be a 32-bit PMA counter that stops at SATURATED_32
   */
  constructor(
    readonly file: string,
    readonly bytesPerUnit: number,
    private saturates: boolean,
  ) {}

  /** Takes the first value (at detection); returns it, NaN when unreadable. Throws on I/O errors. */
  start(reader: FileReader): number {
    const v = reader.readNumber(this.file);
    this.take(v, Number.NaN);
    return v;
  }

  /** Reads the counter at `t` (Unix ms): its rate since the previous read, NO_READING, or SATURATED. Throws on I/O errors. */
  step(reader: FileReader, t: number): number {
    let v: number;
    try {
      v = reader.readNumber(this.file);
    } catch (err) {
      this.prev = Number.NaN;
      throw err;
    }
    return this.take(v, t);
  }

  /** Takes a value read elsewhere (/proc/net/dev holds every interface's): as `step`. NaN: unreadable. */
  take(v: number, t: number): number {
    if (!Number.isFinite(v) || v < 0) {
      this.prev = Number.NaN;
      return NO_READING;
    }
    if (this.saturates && v > SATURATED_32) this.saturates = false;
    if (this.saturated || (this.saturates && v === SATURATED_32)) {
      this.saturated = true;
      return SATURATED;
    }
    const d = v - this.prev;
    const seconds = (t - this.prevMs) / 1000;
    this.prev = v;
    this.prevMs = t;
    return d >= 0 && seconds > 0 ? (d * this.bytesPerUnit) / seconds : NO_READING;
  }
}
