// @erg/queue — the scheduler's BullMQ job catalog (names, zod payloads, options), shared by the API (producer) and the scheduler (consumer).
import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import { z } from 'zod';
import { ErgError } from '@erg/spec/errors';

/**
 * Glossary
 * - cycle: one pass over one cluster: reconcile what Slurm says about tracked runs (which also
 *   settles runs left in doubt by a crash), send scancel for cancelled campaigns, then submit
 *   pending runs. Cycles of one cluster never overlap (the cluster's lease, a Postgres advisory
 *   lock: see @erg/db cluster-lease.ts; nothing of it lives in Redis).
 * - tick: a repeating job that starts a cycle for every cluster with unfinished runs, so nothing
 *   depends on a producer's job surviving: Postgres is the source of truth, Redis only wakes us.
 *   It also judges suite runs whose campaign has finished and re-enqueues undelivered webhooks.
 * - suite-trigger: made by a suite's cron job scheduler, one per slot; starts a run of the suite.
 * - webhook: POSTs a finished suite run's verdict to the suite's URL, retried with backoff.
 */
export const QUEUE_NAME = 'scheduler';

/** Delivery attempts of one suite webhook before it is marked failed. */
export const WEBHOOK_ATTEMPTS = 8;

export const jobs = {
  cycle: {
    payload: z.object({ clusterId: z.uuid(), reason: z.string().max(200).optional() }),
    // One waiting cycle per cluster is enough: a cycle picks up everything pending when it runs.
    options: (p: { clusterId: string }): JobsOptions => ({
      jobId: `cycle-${p.clusterId}`,
      removeOnComplete: true,
      removeOnFail: 100,
      attempts: 1,
    }),
  },
  tick: {
    payload: z.object({}),
    options: (): JobsOptions => ({ removeOnComplete: true, removeOnFail: 10 }),
  },
  'refresh-energy': {
    payload: z.object({}),
    // One waiting at a time: it recomputes every stale run it finds (refreshStaleRunEnergy); the
    // tick does the same, so a lost one costs at most one poll interval.
    options: (): JobsOptions => ({ jobId: 'refresh-energy', removeOnComplete: true, removeOnFail: 10, attempts: 1 }),
  },
  'suite-trigger': {
    payload: z.object({ suiteId: z.uuid() }),
    // Retried: the job id (one per cron slot) makes a second attempt find the first one's run.
    options: (): JobsOptions => ({ removeOnComplete: 100, removeOnFail: 100, attempts: 5, backoff: { type: 'exponential', delay: 5_000 } }),
  },
  webhook: {
    payload: z.object({ suiteRunId: z.uuid() }),
    // About 21 minutes of retries (5 s, 10 s, … 640 s); the receiver dedupes on X-Erg-Delivery.
    options: (p: { suiteRunId: string }): JobsOptions => ({
      jobId: `webhook-${p.suiteRunId}`,
      removeOnComplete: true,
      removeOnFail: 1000,
      attempts: WEBHOOK_ATTEMPTS,
      backoff: { type: 'exponential', delay: 5_000 },
    }),
  },
} as const;

export type JobName = keyof typeof jobs;
export type JobPayload<N extends JobName> = z.infer<(typeof jobs)[N]['payload']>;

/** ioredis options from a redis:// URL. BullMQ requires maxRetriesPerRequest: null for workers. */
export function redisConnection(url: string): ConnectionOptions {
  const u = new URL(url);
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') throw new Error(`REDIS_URL must start with redis:// (got ${u.protocol})`);
  return {
    host: u.hostname || '127.0.0.1',
    port: u.port ? Number(u.port) : 6379,
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(u.pathname.length > 1 ? { db: Number(u.pathname.slice(1)) } : {}),
    ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
    maxRetriesPerRequest: null,
  };
}

export function createSchedulerQueue(redisUrl: string, prefix: string): Queue {
  return new Queue(QUEUE_NAME, { connection: redisConnection(redisUrl), prefix });
}

/** Adds a job after validating its payload against the catalog, so producers cannot drift. */
export async function enqueue<N extends JobName>(queue: Queue, name: N, payload: JobPayload<N>): Promise<void> {
  const data = jobs[name].payload.parse(payload);
  await queue.add(name, data, jobs[name].options(data as never));
}

/** How long a producer waits for Redis on an operation that is only a hint (see withinDeadline). */
export const HINT_DEADLINE_MS = 2_000;

/** Redis did not answer within the deadline of an operation that is only a hint. */
export class RedisUnavailableError extends ErgError<'ERG_REDIS_UNAVAILABLE'> {
  constructor(ms: number) {
    super('ERG_REDIS_UNAVAILABLE', `Redis did not answer within ${ms} ms`);
  }
}

/**
 * Bounds a Redis operation that is only a hint — a `cycle` nudge, a suite's cron schedule (the
 * scheduler re-applies every schedule from Postgres), a metrics read. Queue connections retry
 * forever (maxRetriesPerRequest: null), so without a bound a request would wait as long as Redis
 * is away; Redis is a cache of work, and the API must keep answering from Postgres meanwhile.
 * The operation itself is not cancelled: ioredis sends it once Redis is back, harmlessly.
 */
export async function withinDeadline<T>(work: Promise<T>, ms = HINT_DEADLINE_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RedisUnavailableError(ms)), ms);
    timer.unref();
  });
  work.catch(() => undefined); // a late failure of the abandoned operation is not an unhandled rejection
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** One answer for a readiness probe: 'ok' when Redis answered PING within `timeoutMs`, else `error: <why>`. */
export async function checkRedis(redis: { ping(): Promise<unknown> }, timeoutMs = HINT_DEADLINE_MS): Promise<string> {
  try {
    await withinDeadline(redis.ping(), timeoutMs);
    return 'ok';
  } catch (err) {
    return `error: ${(err as Error).message}`;
  }
}
