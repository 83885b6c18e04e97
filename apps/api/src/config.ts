import path from 'node:path';
import { CAMPAIGN_LIMITS, DATABASE, LOGGING, MARK_LIMITS, parseEnv, QUEUE, SECRET_KEY } from '@erg/config';
import { z } from 'zod';

/** The API's whole environment, parsed once at start-up; nothing else reads process.env. */
export const ApiConfig = z.object({
  ...DATABASE,
  ...QUEUE,
  ...SECRET_KEY,
  ...LOGGING,
  /** Largest campaign (configurations × repetitions) the API accepts. */
  ...CAMPAIGN_LIMITS,
  /** Distinct phase names a run keeps (ERG_MAX_PHASE_NAMES): the marks of later names are not stored. */
  ...MARK_LIMITS,
  ERG_API_HOST: z.string().default('127.0.0.1'),
  ERG_API_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /**
   * A cancel request cancels up to this many pending runs before it answers; a campaign with more
   * has them cancelled right after the answer (about 50 µs a run here: 1,000 runs ≈ 50 ms).
   */
  ERG_CANCEL_INLINE_RUNS: z.coerce.number().int().min(0).default(1000),
  /** Largest request body, bytes, for routes without a limit of their own (see body-limits.ts). */
  ERG_BODY_LIMIT: z.coerce.number().int().min(1024).default(4 * 1024 * 1024),
  /** Mutating /v1 requests (POST, PUT, PATCH, DELETE) per minute per token; 0: no limit. */
  ERG_RATE_LIMIT_MUTATIONS: z.coerce.number().int().min(0).default(120),
  /** Telemetry batches (POST /v1/runs/:id/telemetry) per minute per token, a bucket of their own; 0: no limit. */
  ERG_RATE_LIMIT_TELEMETRY: z.coerce.number().int().min(0).default(6000),
  /**
   * The same per user, all of the user's tokens together (a new token does not reset them); 0: no
   * limit. Above the per-token limits by default, so that one user's laptop and CI tokens can both
   * work at their own limit at once.
   */
  ERG_RATE_LIMIT_USER_MUTATIONS: z.coerce.number().int().min(0).default(240),
  ERG_RATE_LIMIT_USER_TELEMETRY: z.coerce.number().int().min(0).default(12_000),
  /**
   * Expensive reads per minute per token, a bucket of their own (rate-limit.ts EXPENSIVE_READS:
   * campaign results, evidence bundles, run logs, telemetry series); 0: no limit. Room for a person's
   * live pages: the web app refetches a live campaign's results at most every 0.8 s and extends a
   * run's power chart once a second, `erg logs --follow` reads every 2 s.
   */
  ERG_RATE_LIMIT_EXPENSIVE_READS: z.coerce.number().int().min(0).default(300),
  /** The same per user, all of the user's tokens together; 0: no limit. */
  ERG_RATE_LIMIT_USER_EXPENSIVE_READS: z.coerce.number().int().min(0).default(600),
  /**
   * Campaign results computed and evidence bundles written at once per token (beyond: 429 with
   * Retry-After). A results read answered from the cache, or one that waits for the same results
   * another request is computing, takes no place.
   */
  ERG_EXPENSIVE_READS_PER_TOKEN: z.coerce.number().int().min(1).max(64).default(2),
  /**
   * Worker threads that compute campaigns' results (GET /v1/campaigns/{id}/results) off the event
   * loop, each with up to 4 database connections of its own; 0: on the event loop (not for
   * production: the results of 100,000 runs hold it for about a second).
   */
  ERG_RESULTS_WORKERS: z.coerce.number().int().min(0).max(16).default(1),
  /** How long one campaign's results may take in a worker before it is ended and the request refused (422). */
  ERG_RESULTS_TIMEOUT_MS: z.coerce.number().int().min(1000).default(60_000),
  /** Results computations waiting for a worker beyond which requests are refused with 503 (retry). */
  ERG_RESULTS_QUEUE: z.coerce.number().int().min(0).default(16),
  /** Heap of each results worker, MiB (the results of 100,000 runs raised the API's peak memory by about 400 MB); a campaign that needs more is refused (422). */
  ERG_RESULTS_HEAP_MB: z.coerce.number().int().min(64).default(2048),
  /**
   * Memory for computed results kept for the next read, MiB, the least recently read dropped first
   * (14 MB for 100,000 runs of 10,000 configurations); 0: nothing kept. A kept answer is served only
   * while nothing it was computed from has changed (packages/db results-stamp.ts).
   */
  ERG_RESULTS_CACHE_MB: z.coerce.number().int().min(0).default(256),
  /**
   * When set, GET /metrics requires `Authorization: Bearer <this>`; unset, it is open like /healthz.
   * Empty counts as unset (compose files pass unset variables as empty strings).
   */
  ERG_METRICS_TOKEN: z.preprocess((v) => (v === '' ? undefined : v), z.string().min(16, 'use at least 16 characters').optional()),
  /** The built web app served at `/` (index.html and assets/). */
  ERG_WEB_DIR: z.string().default(path.resolve(__dirname, '..', '..', 'web', 'dist')),
  /**
   * Worker threads that decode and validate large request bodies (campaign specs and suites over
   * 16 KiB, telemetry batches over 1 MiB) off the event loop; 0: on the event loop (not for
   * production: one large YAML spec then stalls every other request).
   */
  ERG_OFFLOAD_WORKERS: z.coerce.number().int().min(0).max(16).default(1),
  /** How long one offloaded body may take to validate before its worker is ended and the request refused (422). */
  ERG_OFFLOAD_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /** Large bodies waiting for a worker beyond which requests are refused with 503 (retry). */
  ERG_OFFLOAD_QUEUE: z.coerce.number().int().min(0).default(32),
  /** Heap of each worker thread, MiB: a body that needs more is refused (422). */
  ERG_OFFLOAD_HEAP_MB: z.coerce.number().int().min(32).default(256),
  /**
   * How often open event streams (GET /v1/events) re-check their token's access, whatever else
   * happens: the backstop for what sends no notice (a token expiring) and for notices lost while
   * the LISTEN connection was down. Revocations, deactivations and removals close streams at once.
   */
  ERG_EVENTS_ACCESS_CHECK_MS: z.coerce.number().int().min(100).max(600_000).default(5_000),
  /** GET /v1/runs/{id}/logs reads in flight at once per token, and per cluster (beyond: 429 with Retry-After). */
  ERG_LOG_READS_PER_TOKEN: z.coerce.number().int().min(1).max(64).default(2),
  ERG_LOG_READS_PER_CLUSTER: z.coerce.number().int().min(1).max(64).default(4),
  /** Deadline of reading one log file from a cluster, streaming included; the remote read is killed at it. */
  ERG_LOG_READ_TIMEOUT_MS: z.coerce.number().int().min(1000).max(600_000).default(60_000),
  /**
   * Evidence bundles (GET /v1/campaigns/{id}/export) written at once by this process (beyond: 429
   * with Retry-After). Each holds one run's samples in memory and a database connection at a time,
   * and writes its samples.parquet to ERG_EXPORT_TMP_DIR until it is sent.
   */
  ERG_EXPORTS_AT_ONCE: z.coerce.number().int().min(1).max(64).default(2),
  /** Where a bundle's samples.parquet is written before it joins the archive (it is removed then); default: the system's temporary folder. */
  ERG_EXPORT_TMP_DIR: z.string().optional(),
  /**
   * When a cluster's OpenSSH certificate starts to warn (cluster view `warnings`, /metrics
   * erg_cluster_certificate_warning): this many seconds before it expires, or once less than this
   * share of its validity is left, whichever comes later (a certificate valid 8 h warns 2 h before).
   */
  ERG_CERTIFICATE_WARNING_S: z.coerce.number().int().min(0).default(86_400),
  ERG_CERTIFICATE_WARNING_SHARE: z.coerce.number().min(0).max(1).default(0.25),
});
export type ApiConfig = z.infer<typeof ApiConfig>;

export function parseApiConfig(env: NodeJS.ProcessEnv): ApiConfig {
  return parseEnv(ApiConfig, env, 'API');
}
