/**
 * How many expensive reads — campaign results being computed, evidence bundles being written —
 * each token has in flight in this process, and at most how many (ERG_EXPENSIVE_READS_PER_TOKEN).
 * Beyond, the read is refused at once (429 with Retry-After: errors.expensiveReadsBusy) instead of
 * queued: one token must not fill the results workers, or the database's connections, for everyone.
 * A holder is a token's id (or a run's, for a run token).
 */
export class ExpensiveReads {
  private readonly inFlight = new Map<string, number>();

  constructor(readonly perHolder: number) {}

  /** One place for `holder`, or null when it has `perHolder` already. Call the returned function exactly once, when the read is over. */
  tryAcquire(holder: string): (() => void) | null {
    const now = this.inFlight.get(holder) ?? 0;
    if (now >= this.perHolder) return null;
    this.inFlight.set(holder, now + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.inFlight.get(holder) ?? 1) - 1;
      if (left > 0) this.inFlight.set(holder, left);
      else this.inFlight.delete(holder);
    };
  }
}
