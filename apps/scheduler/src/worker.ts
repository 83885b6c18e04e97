import { Worker, type Job, type Queue } from 'bullmq';
import { clustersWithWork, listIdleAdaptiveCampaigns } from '@erg/db';
import { refreshStaleRunEnergy, STALE_REFRESH_LIMIT } from '@erg/results';
import { adaptCampaign } from '@erg/strategy';
import { offloadedSearchStep } from './search-offload';
import { createSchedulerQueue, enqueue, jobs, QUEUE_NAME, redisConnection } from '@erg/queue';
import type { SchedulerContext } from './context';
import { runCycle } from './cycle';
import { ResultsChangesPruning } from './results-changes';
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
  const resultsChanges = new ResultsChangesPruning(ctx.db, ctx.log);
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
          // After the cycles, so that a campaign they just finished is judged in this same tick;
          // the energy the API leaves here too (finished imports, late telemetry: out of its requests);
          // and the results change rows of campaigns nobody reads, folded.
          const housekeeping = await Promise.allSettled([
            suiteHousekeeping(ctx, queue), schedules.maybeSync(), refreshStale(ctx), adaptIdle(ctx), resultsChanges.maybeRun(),
          ]);
          const failed = [...results, ...housekeeping].filter((r) => r.status === 'rejected');
          if (failed.length > 0) throw (failed[0] as PromiseRejectedResult).reason;
          return;
        }
        case 'refresh-energy':
          await refreshStale(ctx);
          return;
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
  // Redis going away is reported by the watchdog below and by these; the connections reconnect by themselves.
  worker.on('error', (err) => ctx.log.error({ err: err.message }, 'worker error'));
  queue.on('error', (err) => ctx.log.warn({ err: err.message }, 'queue connection error'));
  await worker.waitUntilReady();
  const watchdog = new RedisWatchdog(ctx, queue, schedules);
  // Settle whatever a previous process left behind right away, not one interval later.
  await watchdog.restore('start');
  ctx.log.info({ pollIntervalMs: config.ERG_POLL_INTERVAL_MS }, 'scheduler started');
  return {
    async close() {
      watchdog.stop();
      await worker.close();
      await queue.close();
    },
  };
}

/** Stale runs recomputed at once (each holds one of the energy worker's database connections). */
const REFRESH_CONCURRENCY = 2;
/** Pages of STALE_REFRESH_LIMIT runs one call recomputes at most: a steady stream of late batches cannot hold the job for ever. */
const MAX_REFRESH_PAGES = 20;

/**
 * Recomputes the runs that owe their energy figures — an imported run just finished, a batch
 * that came after a run's figures (the API marks them and leaves the work here) — in the energy
 * worker (off this event loop), page after page until none is left, so that a burst of finishes
 * is done in one job rather than one page a tick. A run that fails is logged and stays due: the
 * next tick tries it again.
 */
async function refreshStale(ctx: SchedulerContext): Promise<void> {
  let total = 0;
  for (let page = 0; page < MAX_REFRESH_PAGES; page++) {
    let failed = 0;
    const done = await refreshStaleRunEnergy(ctx.db, {
      concurrency: REFRESH_CONCURRENCY,
      refresh: (runId) => ctx.energy.refresh(runId),
      onError: (runId, err) => {
        failed++;
        ctx.log.error({ runId, code: (err as { code?: string }).code, err: (err as Error).message }, 'computing a run\'s energy failed; will retry');
      },
    });
    total += done.length;
    // A full page all done: there may be more. Any failure: the rest wait for the next tick (no loop on a run that keeps failing).
    if (failed > 0 || done.length < STALE_REFRESH_LIMIT) break;
  }
  if (total > 0) ctx.log.info({ runs: total }, 'computed runs\' energy (finished, or late telemetry)');
}

/**
 * Adaptive campaigns with nothing in flight take a step: the safety net behind the step each
 * finalized run triggers (a crash between a run's end and its step, a cancel to close). A step
 * that fails (a stored spec that no longer parses, ERG_STORED_SPEC_INVALID) is logged with its
 * campaign and rolled back; the other campaigns still take theirs, and the next tick tries again.
 */
async function adaptIdle(ctx: SchedulerContext): Promise<void> {
  for (const campaignId of await listIdleAdaptiveCampaigns(ctx.db)) {
    try {
      const step = await adaptCampaign(ctx.db, campaignId, { searchStep: offloadedSearchStep(ctx.regexes) });
      if (step) ctx.log.info({ campaignId, added: step.added, kind: step.kind, stop: step.stop?.reason ?? null }, 'campaign strategy step (tick)');
    } catch (err) {
      ctx.log.error({ campaignId, code: (err as { code?: string }).code, err: (err as Error).message }, 'campaign strategy step failed; will retry');
    }
  }
}

/**
 * Redis is a cache of work, never the record. Once per poll interval every scheduler process
 * checks that Redis still holds erg's marker key and the repeating tick; when either is missing
 * (Redis restarted empty, FLUSHALL, a failover to an empty replica) it recreates what lives only
 * in Redis — the tick and the suites' cron schedules — and starts a tick at once. So a wipe costs
 * at most one poll interval, with no restart. Several processes may restore at once: every step
 * is idempotent. Cycle locks are not in Redis at all (see cycle-lease.ts).
 */
class RedisWatchdog {
  private readonly marker: string;
  private readonly timer: NodeJS.Timeout;
  private checking = false;

  constructor(
    private readonly ctx: SchedulerContext,
    private readonly queue: Queue,
    private readonly schedules: ScheduleSync,
  ) {
    this.marker = `${ctx.config.ERG_QUEUE_PREFIX}:erg-marker`;
    this.timer = setInterval(() => void this.check(), ctx.config.ERG_POLL_INTERVAL_MS);
    this.timer.unref();
  }

  /** Recreates the tick, the suite schedules and the marker, and starts a tick now. */
  async restore(why: 'start' | 'redis-emptied'): Promise<void> {
    await this.queue.upsertJobScheduler('tick', { every: this.ctx.config.ERG_POLL_INTERVAL_MS }, { name: 'tick', data: {}, opts: jobs.tick.options() });
    await this.schedules.syncNow();
    await enqueue(this.queue, 'tick', {});
    await this.ctx.redis.set(this.marker, new Date().toISOString());
    if (why === 'redis-emptied') this.ctx.log.warn('Redis had lost erg\'s repeating jobs (restarted empty?); recreated the tick and the suite schedules');
  }

  private async check(): Promise<void> {
    // Commands wait while Redis is away (maxRetriesPerRequest: null): one check at a time.
    if (this.checking) return;
    this.checking = true;
    try {
      const [marker, tick] = await Promise.all([this.ctx.redis.exists(this.marker), this.queue.getJobScheduler('tick')]);
      if (marker === 0 || !tick) await this.restore('redis-emptied');
    } catch (err) {
      this.ctx.log.warn({ err: (err as Error).message }, 'checking Redis for erg\'s repeating jobs failed; will retry');
    } finally {
      this.checking = false;
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
