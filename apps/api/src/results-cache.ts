/**
 * Computed campaign results kept for the next read, in this process's memory: per key (a campaign
 * and how its results were asked for), the answer's bytes and the results stamp they were computed
 * under (packages/db results-stamp.ts). `get` gives them only under the same stamp, so a change to
 * anything they were computed from makes them unreachable at once, whichever process or writer
 * made it. At most `maxBytes` in all, the least recently read dropped first; an answer larger
 * than that is not kept.
 */
export class ResultsCache {
  /** In order of last use, oldest first (a Map keeps insertion order; a read re-inserts). */
  private readonly entries = new Map<string, { stamp: string; body: Buffer }>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** The answer kept for `key` if it was computed under `stamp`; null otherwise. */
  get(key: string, stamp: string): Buffer | null {
    const entry = this.entries.get(key);
    if (!entry || entry.stamp !== stamp) return null;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.body;
  }

  /** Keeps `body` for `key` under `stamp`, replacing what was kept for the key. */
  set(key: string, stamp: string, body: Buffer): void {
    this.delete(key);
    if (body.byteLength > this.maxBytes) return;
    this.entries.set(key, { stamp, body });
    this.bytes += body.byteLength;
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= entry.body.byteLength;
    }
  }

  /** Bytes kept now. */
  get size(): number {
    return this.bytes;
  }

  private delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.body.byteLength;
  }
}
