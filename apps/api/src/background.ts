/**
 * Work a request starts but does not wait for (the bulk of a large cancel): kept track of, so
 * that closing the app waits for it instead of pulling the database from under it. A failure is
 * handed to `onError` (the request's logger); nothing is retried here — the work must be safe to
 * start again by repeating the request.
 */
export class BackgroundWork {
  private readonly running = new Set<Promise<void>>();

  start(work: () => Promise<unknown>, onError: (err: unknown) => void): void {
    const done: Promise<void> = work().then(
      () => undefined,
      (err: unknown) => onError(err),
    );
    this.running.add(done);
    void done.finally(() => this.running.delete(done));
  }

  /** Resolves once everything started so far has ended. */
  async drain(): Promise<void> {
    await Promise.all([...this.running]);
  }
}
