import { Worker, type Job } from 'bullmq';
import { clustersWithWork } from '@erg/db';
import { createSchedulerQueue, enqueue, jobs, QUEUE_NAME, redisConnection } from '@erg/queue';
import type { SchedulerContext } from './context';
import { runCycle } from './cycle';
import { runScheduledTrigger, runWebhookDelivery, ScheduleSync, suiteHousekeeping } from './suites';

export interface SchedulerHandle {
  close(): Promise<void>;
}

/**
 * Starts the BullMQ worker and the repeating tick. The tick is what makes the scheduler
 * self-healing: every poll interval it runs a cycle for each cluster with unfinished runs, so a
 * lost `cycle` job (Redis keeps nothing on disk here) costs at most one interval. `cycle` jobs
 * (from the API) only make a new campaign start sooner.
 */
export async function startScheduler(ctx: SchedulerContext): Promise<SchedulerHandle> {
  const { config } = ctx;
  const queue = createSchedulerQueue(config.REDIS_URL, config.ERG_QUEUE_PREFIX);
  const schedules = new ScheduleSync(ctx, queue);
  const worker = new Worker(
    QUEUE_NAME,
    async (job: Job) => {
      switch (job.name) {
        case 'cycle': {
          const { clusterId } = jobs.cycle.payload.parse(job.data);
          await runCycle(ctx, clusterId);
          return;
        }
        case 'tick': {
          // Cycles run right here rather than as `cycle` jobs: a `cycle` job left active by a
          // crashed process blocks its job id until BullMQ declares it stalled, a tick never does.
          const clusterIds = await clustersWithWork(ctx.db);
          const results = await Promise.allSettled(clusterIds.map((clusterId) => runCycle(ctx, clusterId)));
          // After the cycles, so that a campaign they just finished is judged in this same tick.
          const housekeeping = await Promise.allSettled([suiteHousekeeping(ctx, queue), schedules.maybeSync()]);
          const failed = [...results, ...housekeeping].filter((r) => r.status === 'rejected');
          if (failed.length > 0) throw (failed[0] as PromiseRejectedResult).reason;
          return;
        }
        case 'suite-trigger':
          await runScheduledTrigger(ctx, queue, job);
          return;
        case 'webhook':
          await runWebhookDelivery(ctx, job);
          return;
        default:
          throw new Error(`unknown job ${job.name}`);
      }
    },
    { connection: redisConnection(config.REDIS_URL), prefix: config.ERG_QUEUE_PREFIX, concurrency: config.ERG_SCHEDULER_CONCURRENCY },
  );
  worker.on('failed', (job, err) => ctx.log.error({ job: job?.name, data: job?.data, err: err.message }, 'scheduler job failed'));
  worker.on('error', (err) => ctx.log.error({ err: err.message }, 'worker error'));
  await worker.waitUntilReady();
  await queue.upsertJobScheduler('tick', { every: config.ERG_POLL_INTERVAL_MS }, { name: 'tick', data: {}, opts: jobs.tick.options() });
  // Settle whatever a previous process left behind right away, not one interval later.
  await enqueue(queue, 'tick', {});
  ctx.log.info({ pollIntervalMs: config.ERG_POLL_INTERVAL_MS }, 'scheduler started');
  return {
    async close() {
      await worker.close();
      await queue.close();
    },
  };
}
