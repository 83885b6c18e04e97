export interface WaitForOptions {
  /** Give up after this long (ms). Default 30 000. */
  timeoutMs?: number;
  /** Pause between attempts (ms). Default 100. */
  intervalMs?: number;
  /** Shown in the timeout error, so a failing test says what it was waiting for. */
  what?: string;
}

/**
 * Polls `probe` until it returns a value other than undefined/false, or throws when the deadline
 * passes. Tests wait on conditions with a deadline, never on bare sleeps.
 */
export async function waitFor<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  options: WaitForOptions = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const intervalMs = options.intervalMs ?? 100;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const suffix = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${options.what ?? 'condition'}${suffix}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
