import { z } from 'zod';

/** The scheduler's whole environment, parsed once at start-up; nothing else reads process.env. */
export const SchedulerConfig = z.object({
  DATABASE_URL: z.string().default('postgresql://postgres@127.0.0.1:5432/erg'),
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
  ERG_QUEUE_PREFIX: z.string().regex(/^[A-Za-z0-9_:-]+$/).default('erg'),
  /** How often every cluster with unfinished runs is polled (one squeue + one sacct each). */
  ERG_POLL_INTERVAL_MS: z.coerce.number().int().min(200).default(2000),
  /** Runs claimed and submitted per batch. */
  ERG_SUBMIT_BATCH: z.coerce.number().int().min(1).max(5000).default(1000),
  /** Parallel sbatch loops per batch (each one SSH channel). */
  ERG_SUBMIT_LOOPS: z.coerce.number().int().min(1).max(8).default(4),
  /** Channels open at once on a cluster's connection; sshd allows 10 by default. */
  ERG_SSH_MAX_SESSIONS: z.coerce.number().int().min(1).max(10).default(8),
  /** Clusters cycled at once. */
  ERG_SCHEDULER_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  /**
   * Test hook for the crash tests: exit abruptly (as kill -9 would) at a chosen point of the
   * submission path. Never set it in production.
   */
  /** Start a telemetry agent beside every job (`off`: jobs run unmeasured). */
  ERG_TELEMETRY: z.enum(['on', 'off']).default('on'),
  ERG_FAULT: z.enum(['none', 'exit-after-staging', 'exit-after-sbatch']).default('none'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});
export type SchedulerConfig = z.infer<typeof SchedulerConfig>;

export function parseSchedulerConfig(env: NodeJS.ProcessEnv): SchedulerConfig {
  const result = SchedulerConfig.safeParse(env);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`invalid scheduler configuration:\n${lines.join('\n')}`);
  }
  return result.data;
}
