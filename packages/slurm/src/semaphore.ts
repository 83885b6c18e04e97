/**
 * A counting semaphore with a FIFO wait queue. ClusterConnection holds one per SSH connection to
 * keep the number of open channels under sshd's MaxSessions: a caller beyond the cap waits for a
 * permit instead of having its channel refused. `abort` fails every waiter at once, for when the
 * connection under the permits is gone.
 */
export class Semaphore {
  private available: number;
  private readonly waiters: Array<{ resolve: (release: () => void) => void; reject: (err: Error) => void }> = [];
  private aborted: Error | null = null;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`semaphore capacity must be a positive integer, got ${capacity}`);
    this.available = capacity;
  }

  /** Permits currently held. */
  get inUse(): number {
    return this.capacity - this.available;
  }

  /** Callers waiting for a permit. */
  get waiting(): number {
    return this.waiters.length;
  }

  /** Resolves with a release function once a permit is free. Release exactly once. */
  acquire(): Promise<() => void> {
    if (this.aborted) return Promise.reject(this.aborted);
    if (this.available > 0) {
      this.available--;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /** Rejects all current and future waiters with `err`. Held permits stay held until released. */
  abort(err: Error): void {
    this.aborted = err;
    for (const waiter of this.waiters.splice(0)) waiter.reject(err);
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      // Hand the permit straight to the next waiter so a newcomer cannot overtake the queue.
      if (next) next.resolve(this.releaser());
      else this.available++;
    };
  }
}
