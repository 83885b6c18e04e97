import { CAMPAIGN_LIMITS, DATABASE, LOGGING, MARK_LIMITS, parseEnv, QUEUE, SECRET_KEY } from '@erg/config';
import { z } from 'zod';

/** The scheduler's whole environment, parsed once at start-up; nothing else reads process.env. */
export const SchedulerConfig = z.object({
  ...DATABASE,
  ...QUEUE,
  ...SECRET_KEY,
  ...LOGGING,
  /** Largest campaign a suite may start, in runs (the API's ERG_MAX_RUNS, read the same way). */
  ...CAMPAIGN_LIMITS,
  /** Distinct phase names a run keeps (ERG_MAX_PHASE_NAMES): the marks of later names are not stored. */
  ...MARK_LIMITS,
  /** How often every cluster with unfinished runs is polled (one squeue + one sacct each). */
  ERG_POLL_INTERVAL_MS: z.coerce.number().int().min(200).default(2000),
  /** Runs claimed and submitted per batch. */
  ERG_SUBMIT_BATCH: z.coerce.number().int().min(1).max(5000).default(1000),
  /**
   * Runs of a campaign that ask for the same resources are submitted as array jobs of at most the
   * cluster's MaxArraySize tasks (`on`), or each as a job of its own (`off`: for sites whose
   * policies or tools do not want arrays).
   */
  ERG_SUBMIT_ARRAYS: z.enum(['on', 'off']).default('on'),
  /** Parallel sbatch loops per batch (each one SSH channel). */
  ERG_SUBMIT_LOOPS: z.coerce.number().int().min(1).max(8).default(4),
  /** Channels open at once on a cluster's connection; sshd allows 10 by default. */
  ERG_SSH_MAX_SESSIONS: z.coerce.number().int().min(1).max(10).default(8),
  /**
   * Job output budgets (docs/security.md § Budgets, "Job output"). Every pass of metric extraction
   * over a run's stdout.log or stderr.log reads at most this many bytes; a larger log is read from
   * its end (its start for `first` metrics) and the run gets a warning saying so.
   */
  ERG_METRIC_SCAN_BYTES: z.coerce.number().int().min(1024 * 1024).default(256 * 1024 * 1024),
  /**
   * Worker time each metric's regex may take over one run's logs (the phase regexes share one such
   * budget); past it that metric alone is stopped and null, and the run's warning names it.
   */
  ERG_METRIC_REGEX_BUDGET_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  /**
   * Heap of the worker thread that computes runs' energy figures (energy-runner.ts), MiB: a run
   * whose figures need more fails alone (logged, tried again), the scheduler's own memory untouched.
   */
  ERG_ENERGY_HEAP_MB: z.coerce.number().int().min(64).max(65_536).default(1024),
  /** Worker threads that run user regexes, RE2 (shared by every cluster's finalizing). */
  ERG_REGEX_WORKERS: z.coerce.number().int().min(1).max(16).default(2),
  /** Deadline of one read of a run-directory file over SSH, streaming included; the remote read is killed at it. */
  ERG_RUN_FILE_TIMEOUT_MS: z.coerce.number().int().min(1000).max(3_600_000).default(120_000),
  /** Telemetry spool files (one per node) ingested per run at most. */
  ERG_SPOOL_MAX_FILES: z.coerce.number().int().min(1).max(100_000).default(1024),
  /** Bytes read from the end of each telemetry spool file. */
  ERG_SPOOL_MAX_BYTES: z.coerce.number().int().min(1024 * 1024).default(512 * 1024 * 1024),
  /**
   * The umask of everything erg creates on the clusters — run directories, staged files, job
   * scripts, the jobs' logs, spools and the workload's own files: octal, the owner's bits left
   * alone (000-077). Default 077: only the cluster user reads them (0700 folders, 0600 files);
   * 027 lets the user's group read them.
   */
  ERG_RUN_UMASK: z
    .string()
    .regex(/^0?0?[0-7]{1,2}$/, { error: 'an octal umask that leaves the owner its own bits, 000 to 077 (e.g. 077, 027)' })
    .default('077')
    .transform((text) => Number.parseInt(text, 8)),
  /** Clusters cycled at once. */
  ERG_SCHEDULER_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  /** Start a telemetry agent beside every job (`off`: jobs run unmeasured). */
  ERG_TELEMETRY: z.enum(['on', 'off']).default('on'),
  /** How long one webhook delivery may take before it counts as failed (and is retried). */
  ERG_WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  /** How often suites' cron schedules are re-applied to Redis (which may have lost them). */
  ERG_SUITE_SYNC_INTERVAL_MS: z.coerce.number().int().min(1000).default(60_000),
  /**
   * Test hook for the crash tests: exit abruptly (as kill -9 would) at a chosen point of the
   * submission path. Never set it in production.
   */
  ERG_FAULT: z.enum(['none', 'exit-after-staging', 'exit-after-sbatch']).default('none'),
  /** Port of the scheduler's GET /metrics (Prometheus text); 0 turns the server off. */
  ERG_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9465),
  /** Address the metrics server listens on; loopback by default, as the metrics are unauthenticated. */
  ERG_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
});
export type SchedulerConfig = z.infer<typeof SchedulerConfig>;

export function parseSchedulerConfig(env: NodeJS.ProcessEnv): SchedulerConfig {
  return parseEnv(SchedulerConfig, env, 'scheduler');
}
