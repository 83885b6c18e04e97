/**
 * Request body limits per kind of route, bytes. Each route passes its own as `bodyLimit`; routes
 * without one get ERG_BODY_LIMIT. Bodies over the limit are refused with 413 before they are
 * parsed (at once, when Content-Length says so), naming the limit.
 */
export const BODY_LIMITS = {
  /** Campaign specs and suites (which carry a campaign template): YAML or JSON with inline files. */
  spec: 1024 * 1024,
  /** A cluster's settings, private key included (at most 16 KiB of it). */
  cluster: 64 * 1024,
  /** Small action routes: cancel, trigger, finish, delete. */
  action: 16 * 1024,
  /**
   * A telemetry batch, after gzip is inflated (the limit applies to the inflated size, so a small
   * compressed body cannot expand without bound).
   */
  telemetry: 64 * 1024 * 1024,
} as const;

/** 1048576 → "1 MiB", 65536 → "64 KiB", 1000 → "1000 bytes". */
export function formatBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}
