import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import { z } from 'zod';

/**
 * Glossary
 * - cycle: one pass over one cluster: reconcile what Slurm says about tracked runs (which also
 *   settles runs left in doubt by a crash), send scancel for cancelled campaigns, then submit
 *   pending runs. Cycles of one cluster never overlap (a per-cluster Redis lock).
 * - tick: a repeating job that starts a cycle for every cluster with unfinished runs, so nothing
 *   depends on a producer's job surviving: Postgres is the source of truth, Redis only wakes us.
 */
export const QUEUE_NAME = 'scheduler';

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
