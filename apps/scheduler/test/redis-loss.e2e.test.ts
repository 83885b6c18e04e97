// Redis is a cache of work, never the record: when it restarts with nothing in it, a running
// scheduler recreates its repeating tick and the suites' cron schedules by itself within a poll
// interval, and runs tracked before the loss end normally — no process restarted.
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { listCampaignRuns } from '@erg/db';
import { QUEUE_NAME, redisConnection } from '@erg/queue';
import { schedulerIdOf } from '@erg/suites';
import { startDisposableRedis, waitFor, type DisposableRedis } from '@erg/testkit';
import { Harness } from './harness';

jest.setTimeout(240_000);

describe('Redis losing all its data under a running scheduler', () => {
  const h = new Harness();
  let redis: DisposableRedis;
  let queue: Queue;

  beforeAll(async () => {
    redis = await startDisposableRedis();
    h.redisUrl = redis.url;
    await h.start();
    await h.registerCluster('local');
    queue = new Queue(QUEUE_NAME, { connection: redisConnection(redis.url), prefix: h.prefix });
    queue.on('error', () => undefined);
  });
  afterAll(async () => {
    await queue.close();
    await h.stop();
    await redis.stop();
  });

  test('runs queued before the wipe are finished and the suite schedule is back, without a restart', async () => {
    const suite = await h.call('POST', '/v1/suites', {
      name: 'nightly', schedule: { cron: '0 3 * * *', timezone: 'UTC' },
      campaign: { name: 'tiny', cluster: 'local', parameters: { secs: [1] }, run: 'sleep {{secs}}' },
    });
    expect(suite.status).toBe(201);
    const scheduler = h.spawnScheduler('redis-loss');
    try {
      const campaign = await h.submit({ name: 'across-the-wipe', cluster: 'local', parameters: { i: [1, 2] }, run: 'sleep 4' });
      await waitFor(
        async () => {
          const runs = (await listCampaignRuns(h.db, campaign.id)).items;
          return runs.every((r) => r.slurmJobId !== null);
        },
        { timeoutMs: 60_000, what: 'both runs to be submitted' },
      );
      await waitFor(async () => (await queue.getJobScheduler(schedulerIdOf(suite.body.id))) !== undefined, {
        timeoutMs: 30_000, what: "the suite's cron schedule in Redis",
      });

      const client = new Redis(redisConnection(redis.url) as object);
      client.on('error', () => undefined);
      await client.set(`${h.prefix}:test-sentinel`, '1');
      await redis.restartEmpty();
      // The wipe happened (the scheduler may already have recreated its tick: it checks every 500 ms).
      expect(await client.exists(`${h.prefix}:test-sentinel`)).toBe(0);
      client.disconnect();

      // Only ticks finish runs whose jobs end (nothing nudges the scheduler now): the campaign ending proves the tick is back.
      const runs = await h.waitForCampaignEnd(campaign.id, 90_000);
      expect(runs.map((r) => r.state)).toEqual(['completed', 'completed']);
      expect(await queue.getJobScheduler('tick')).toMatchObject({ every: 500 });
      expect(await queue.getJobScheduler(schedulerIdOf(suite.body.id))).toMatchObject({ pattern: '0 3 * * *' });
      expect(scheduler.exitCode).toBeNull();
    } finally {
      scheduler.kill('SIGTERM');
      await scheduler.exited;
    }
  });
});
