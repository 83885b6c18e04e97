import { generateKeyPairSync } from 'node:crypto';
import { createTestDatabase, startDisposableRedis, uniqueName, waitFor, type DisposableRedis, type TestDatabase } from '@erg/testkit';
import { STOP_HOOK_MS, prepareDatabase, startApiProcess, type ApiProcess } from './api-process';

/**
 * Redis is a cache of work, never the record: while it is away the API keeps taking campaigns
 * and cancels (they are stored in Postgres; the scheduler's tick finds them once Redis is back),
 * it only loses the nudge that would have started them a little sooner. Readiness says Redis is down.
 */

const PRIVATE_KEY = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const CLUSTER = {
  host: '127.0.0.1', port: 2222, user: 'root', privateKey: PRIVATE_KEY,
  hostKeySha256: `SHA256:${'A'.repeat(43)}`, defaultPartition: 'debug', workDir: '/var/lib/erg-redis-down',
};

jest.setTimeout(60_000);

describe('the API while Redis is down (built process)', () => {
  let tdb: TestDatabase;
  let redis: DisposableRedis;
  let api: ApiProcess;

  beforeAll(async () => {
    [tdb, redis] = await Promise.all([createTestDatabase(), startDisposableRedis()]);
    const token = await prepareDatabase(tdb.url);
    api = await startApiProcess({ databaseUrl: tdb.url, redisUrl: redis.url, queuePrefix: uniqueName('ergrd'), token });
    expect((await api.call('PUT', '/v1/clusters/c1', CLUSTER)).status).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await api?.stop();
    await redis?.stop();
    await tdb?.drop();
  }, STOP_HOOK_MS);

  test('campaigns and suites are created, cancelled and deleted without waiting for Redis, metrics are scraped, and readiness says what is missing', async () => {
    await redis.stop();
    const started = Date.now();
    const created = await api.call('POST', '/v1/campaigns', { name: 'no-redis', cluster: 'c1', parameters: { n: [1, 2] }, run: 'echo {{n}}' });
    expect(created.status).toBe(201);
    expect((await api.call('POST', `/v1/campaigns/${created.body.id}/cancel`)).status).toBe(202);
    // A suite's cron schedule waits for the scheduler's sync from Postgres; the suite itself is stored.
    const suite = await api.call('POST', '/v1/suites', {
      name: 'nightly', schedule: { cron: '0 3 * * *', timezone: 'UTC' },
      campaign: { name: 'tiny', cluster: 'c1', parameters: { n: [1] }, run: 'echo {{n}}' },
    });
    expect(suite.status).toBe(201);
    expect((await api.call('DELETE', '/v1/suites/nightly')).status).toBe(204);
    // The queue gauge is left out of the scrape; the scrape itself answers.
    const scrape = await fetch(`${api.url}/metrics`);
    expect(scrape.status).toBe(200);
    expect(await scrape.text()).toContain('erg_http_request_duration_seconds');
    // Not a timing assertion on speed: a request that waited for Redis would still be waiting.
    expect(Date.now() - started).toBeLessThan(20_000);
    const ready = await api.call('GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ ok: false, postgres: 'ok', redis: expect.stringMatching(/^error: /) });

    await redis.start();
    await waitFor(async () => (await api.call('GET', '/readyz')).status === 200, { timeoutMs: 20_000, what: 'readiness to recover once Redis is back' });
    expect(api.exit).toBeNull();
  });
});
