// What the rate limits keep beyond the 429s: where they count (Redis keys under the instance's
// prefix, one per bucket), that every request counts in both of its buckets, that a limit of 0 is
// no limit, that run tokens count per run, and that a Redis away lets requests through uncounted.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { createApiToken, createDatabase, createUser, issueRunToken } from '@erg/db';
import { createSchedulerQueue, redisConnection } from '@erg/queue';
import { secretBoxFrom } from '@erg/secrets';
import { createTestDatabase, TEST_SECRET_KEY, uniqueName } from '@erg/testkit';
import { buildApp } from '../src/app';
import { ClusterFiles } from '../src/cluster-files';
import { ApiConfig } from '../src/config';
import { startTestApi, type TestApi } from './helpers';

const cancel = () => `/v1/campaigns/${randomUUID()}/cancel`;

describe('rate limit buckets (Postgres + Redis)', () => {
  const apis: TestApi[] = [];
  let redis: Redis | undefined;
  const start = async (env: Record<string, string>) => {
    const t = await startTestApi(env);
    apis.push(t);
    redis ??= new Redis(redisConnection(t.config.REDIS_URL) as object);
    return { t, redis };
  };
  const post = (t: TestApi, token: string, url: string, payload?: unknown) =>
    t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${token}` }, ...(payload === undefined ? {} : { payload: payload as object }) });

  afterAll(async () => {
    for (const t of apis) await t.close();
    redis?.disconnect();
  });

  test('each request counts once in its token\'s and once in its user\'s key, under the instance\'s prefix, refused ones included', async () => {
    const { t, redis } = await start({ ERG_RATE_LIMIT_MUTATIONS: '2', ERG_RATE_LIMIT_USER_MUTATIONS: '10' });
    const userId = (await createUser(t.db, { name: 'cleo' })).id;
    const { id, token } = await createApiToken(t.db, 'cleo', { userId });
    for (let i = 0; i < 3; i++) await post(t, token, cancel());
    expect((await post(t, token, cancel())).statusCode).toBe(429);
    const base = `${t.config.ERG_QUEUE_PREFIX}:ratelimit:mutations`;
    expect(await redis.get(`${base}:token:${id}`)).toBe('4');
    expect(await redis.get(`${base}:user:${userId}`)).toBe('4');
    const ttl = await redis.pttl(`${base}:user:${userId}`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
    // Nothing of this instance's counting lies outside its prefix.
    const keys = await redis.keys(`*${id}*`);
    expect(keys).toEqual([`${base}:token:${id}`]);
  });

  test('a limit of 0 is no limit: with both at 0 nothing is counted or sent; with the token\'s at 0 the user\'s alone binds', async () => {
    const { t: open, redis } = await start({ ERG_RATE_LIMIT_MUTATIONS: '0', ERG_RATE_LIMIT_USER_MUTATIONS: '0' });
    for (let i = 0; i < 5; i++) {
      const res = await post(open, open.token, cancel());
      expect(res.statusCode).toBe(404);
      expect(res.headers['ratelimit-limit']).toBeUndefined();
    }
    expect(await redis.keys(`${open.config.ERG_QUEUE_PREFIX}:ratelimit:*`)).toEqual([]);

    const { t: perUser } = await start({ ERG_RATE_LIMIT_MUTATIONS: '0', ERG_RATE_LIMIT_USER_MUTATIONS: '2' });
    for (let i = 0; i < 2; i++) {
      const res = await post(perUser, perUser.token, cancel());
      expect(res.statusCode).toBe(404);
      expect(res.headers['ratelimit-limit']).toBe('2');
      expect(res.headers['ratelimit-remaining']).toBe(String(1 - i));
    }
    const refused = await post(perUser, perUser.token, cancel());
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.message).toMatch(/by user "[^"]+" \(all of their tokens together\): the limit is 2 a minute/);
  });

  test('a run token counts against its run\'s telemetry bucket, and against no user\'s', async () => {
    const { t, redis } = await start({ ERG_RATE_LIMIT_TELEMETRY: '2', ERG_RATE_LIMIT_USER_TELEMETRY: '1' });
    const created = await post(t, t.token, '/v1/campaigns', { name: 'imported', execution: 'import', parameters: { n: [1] } });
    expect(created.statusCode).toBe(201);
    const runId = created.json().runs[0].id as string;
    const runToken = await issueRunToken(t.db, runId);
    const batch = { node: 'n1', seq: 0, samples: [{ sensor: 'cpu0.power', t: [Date.now() - 1000], v: [10] }] };
    for (let i = 0; i < 2; i++) {
      const res = await post(t, runToken, `/v1/runs/${runId}/telemetry`, { ...batch, seq: i });
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-limit']).toBe('2');
    }
    const refused = await post(t, runToken, `/v1/runs/${runId}/telemetry`, { ...batch, seq: 2 });
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.message).toMatch(/too many telemetry batches with this token: the limit is 2 a minute/);
    expect(await redis.get(`${t.config.ERG_QUEUE_PREFIX}:ratelimit:telemetry:run:${runId}`)).toBe('3');
    expect(await redis.keys(`${t.config.ERG_QUEUE_PREFIX}:ratelimit:telemetry:user:*`)).toEqual([]);
  });

  test('expensive reads (results, bundles, logs, telemetry series) count in a bucket of their own, per token and per user; other reads in none', async () => {
    const { t, redis } = await start({ ERG_RATE_LIMIT_EXPENSIVE_READS: '3', ERG_RATE_LIMIT_USER_EXPENSIVE_READS: '4', ERG_RATE_LIMIT_MUTATIONS: '100' });
    const userId = (await createUser(t.db, { name: 'dora', isAdmin: true })).id;
    const { id, token } = await createApiToken(t.db, 'dora', { userId });
    const get = (url: string, as = token) => t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${as}` } });
    const created = await post(t, t.token, '/v1/campaigns?project=default', { name: 'reads', execution: 'import', parameters: { n: [1] } });
    const campaignId = created.json().id as string;
    const runId = created.json().runs[0].id as string;
    const reads = [`/v1/campaigns/${campaignId}/results`, `/v1/runs/${runId}/telemetry`, `/v1/campaigns/${campaignId}/results`];
    for (const [i, url] of reads.entries()) {
      const res = await get(url);
      expect(res.statusCode).not.toBe(429);
      expect([res.headers['ratelimit-limit'], res.headers['ratelimit-remaining']]).toEqual(['3', String(2 - i)]);
    }
    const refused = await get(`/v1/campaigns/${campaignId}/export`);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(refused.json().error).toMatchObject({ code: 'ERG_RATE_LIMITED', message: expect.stringMatching(/^too many expensive reads \(campaign results, evidence bundles, run logs, telemetry series\) with this token: the limit is 3 a minute/) });
    // Cheap reads and mutations are not in this bucket.
    const cheap = await get(`/v1/campaigns/${campaignId}`);
    expect(cheap.statusCode).toBe(200);
    expect(cheap.headers['ratelimit-limit']).toBeUndefined();
    expect((await post(t, token, cancel())).statusCode).toBe(404);
    const base = `${t.config.ERG_QUEUE_PREFIX}:ratelimit:reads`;
    expect(await redis.get(`${base}:token:${id}`)).toBe('4');
    // A second token of the same user: its own token bucket is fresh, the user's is spent.
    const second = (await createApiToken(t.db, 'dora-2', { userId })).token;
    const byUser = await get(`/v1/campaigns/${campaignId}/results`, second);
    expect(byUser.statusCode).toBe(429);
    expect(byUser.json().error.message).toMatch(/^too many expensive reads .* by user "dora" \(all of their tokens together\): the limit is 4 a minute/);
  });

  test('while the API\'s Redis connection is not ready, mutations are let through at once, without RateLimit headers', async () => {
    const tdb = await createTestDatabase();
    const config = ApiConfig.parse({ DATABASE_URL: tdb.url, ERG_QUEUE_PREFIX: uniqueName('ergtest'), LOG_LEVEL: 'silent', ERG_SECRET_KEY: TEST_SECRET_KEY, ERG_RATE_LIMIT_MUTATIONS: '1' });
    const secrets = secretBoxFrom(config);
    const db = createDatabase(config.DATABASE_URL);
    // Never connected: the rate limits' connection is away, the queue's is not.
    const away = new Redis({ ...(redisConnection(config.REDIS_URL) as object), lazyConnect: true });
    const queue = createSchedulerQueue(config.REDIS_URL, config.ERG_QUEUE_PREFIX);
    const clusterFiles = new ClusterFiles(secrets);
    const app = await buildApp({ config, db, queue, redis: away, clusterFiles, secrets });
    try {
      const { token } = await createApiToken(db, 'test');
      const started = Date.now();
      for (let i = 0; i < 3; i++) {
        const res = await app.inject({ method: 'POST', url: cancel(), headers: { authorization: `Bearer ${token}` } });
        expect(res.statusCode).toBe(404);
        expect(res.headers['ratelimit-limit']).toBeUndefined();
      }
      // Not a speed assertion: waiting for Redis, each would have taken the 1 s deadline.
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      await app.close();
      await clusterFiles.close();
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      away.disconnect();
      await db.close();
      await tdb.drop();
    }
  });
});
