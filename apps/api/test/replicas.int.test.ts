import { generateKeyPairSync } from 'node:crypto';
import { createTestDatabase, startDisposableRedis, uniqueName, waitFor, type DisposableRedis, type TestDatabase } from '@erg/testkit';
import { createDatabase } from '@erg/db';
import { STOP_HOOK_MS, openEventStream, prepareDatabase, startApiProcess, type ApiProcess, type EventStream } from './api-process';
import { computeDueEnergy } from './helpers';

/**
 * Two built API processes on one Postgres and one Redis, as replicas behind a load balancer: what
 * one writes, the other shows and streams. State lives in Postgres (tokens included) and events
 * travel by NOTIFY, so neither process may keep anything of its own that the other cannot see.
 */

// A key that is only stored, never used to connect: the cluster need not be reachable for campaigns to be created.
const PRIVATE_KEY = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const CLUSTER = {
  host: '127.0.0.1', port: 2222, user: 'root', privateKey: PRIVATE_KEY,
  hostKeySha256: `SHA256:${'A'.repeat(43)}`, defaultPartition: 'debug', workDir: '/var/lib/erg-replicas',
};
const SPEC = {
  name: 'replicated', cluster: 'shared', repetitions: 2,
  parameters: { n: [1, 2, 3] },
  resources: { nodes: 1, time: '00:05:00' },
  run: 'echo {{n}}',
};

const hasRunEvent = (s: EventStream, runId: string, to: string) => s.events.some((e) => e.event === 'run' && e.data.runId === runId && e.data.to === to);

describe('two API replicas on one Postgres and one Redis (built processes)', () => {
  let tdb: TestDatabase;
  let redis: DisposableRedis;
  let apis: ApiProcess[] = [];
  let token: string;
  const streams: EventStream[] = [];

  beforeAll(async () => {
    [tdb, redis] = await Promise.all([createTestDatabase(), startDisposableRedis()]);
    token = await prepareDatabase(tdb.url);
    const queuePrefix = uniqueName('ergrep');
    apis = await Promise.all([1, 2].map(() => startApiProcess({ databaseUrl: tdb.url, redisUrl: redis.url, queuePrefix, token })));
  }, 60_000);

  afterAll(async () => {
    for (const s of streams) await s.close();
    await Promise.all(apis.map((a) => a.stop()));
    await redis?.stop();
    await tdb?.drop();
  }, STOP_HOOK_MS);

  test('a stream on one replica carries the run events of a campaign created and cancelled through the other', async () => {
    const [one, two] = apis as [ApiProcess, ApiProcess];
    expect((await two.call('PUT', '/v1/clusters/shared', CLUSTER)).status).toBe(200);
    const onOne = await openEventStream(one.url, token);
    const onTwo = await openEventStream(two.url, token);
    streams.push(onOne, onTwo);

    const created = await two.call('POST', '/v1/campaigns', SPEC);
    expect(created.status).toBe(201);
    const runIds: string[] = created.body.runs.map((r: { id: string }) => r.id).sort();
    expect(runIds).toHaveLength(6);
    await waitFor(() => runIds.every((id) => hasRunEvent(onOne, id, 'pending')), { timeoutMs: 10_000, what: 'a `pending` run event of every run on the first replica\'s stream' });
    for (const e of onOne.events.filter((ev) => ev.event === 'run' && ev.data.campaignId === created.body.id && ev.data.to === 'pending')) {
      expect(e.data).toEqual({ runId: expect.any(String), campaignId: created.body.id, cluster: 'shared', from: null, to: 'pending', at: expect.any(String) });
    }

    // And the other way round: a cancel through the first reaches the stream of the second.
    expect((await one.call('POST', `/v1/campaigns/${created.body.id}/cancel`)).status).toBe(202);
    await waitFor(() => runIds.every((id) => hasRunEvent(onTwo, id, 'cancelled')), { timeoutMs: 10_000, what: 'a `cancelled` run event of every run on the second replica\'s stream' });
  });

  test('a campaign, its runs and its results read the same from both replicas, whichever wrote them', async () => {
    const [one, two] = apis as [ApiProcess, ApiProcess];
    // An import campaign: its runs take telemetry and finish through the API, so its results have figures.
    const created = await one.call('POST', '/v1/campaigns', { name: 'read-back', execution: 'import', repetitions: 2, parameters: { clock: [1000, 1980] } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    for (const [i, run] of (created.body.runs as { id: string; configurationKey: string }[]).entries()) {
      const writer = i % 2 === 0 ? two : one;
      const start = Date.now() - 600_000 + i * 30_000;
      const seconds = run.configurationKey === 'clock=1000' ? 12 : 8;
      const t = Array.from({ length: seconds * 10 + 21 }, (_, k) => start - 1000 + k * 100);
      const batch = { node: 'n1', seq: 0, samples: [{ sensor: 'cpu0.power', t, v: t.map(() => (seconds === 12 ? 80 : 150)) }] };
      expect((await writer.call('POST', `/v1/runs/${run.id}/telemetry`, batch)).status).toBe(200);
      const finish = { startedAt: new Date(start).toISOString(), endedAt: new Date(start + seconds * 1000 + i * 100).toISOString() };
      expect((await (writer === one ? two : one).call('POST', `/v1/runs/${run.id}/finish`, finish)).status).toBe(202);
    }
    // The scheduler computes the finished runs' energy (called here as its job would).
    const db = createDatabase(tdb.url);
    try {
      await computeDueEnergy(db);
    } finally {
      await db.close();
    }
    for (const route of [`/v1/campaigns/${id}`, `/v1/campaigns/${id}/runs`, `/v1/campaigns/${id}/results`]) {
      const [a, b] = await Promise.all([one.call('GET', route), two.call('GET', route)]);
      expect({ route, status: a.status }).toEqual({ route, status: 200 });
      expect({ route, body: b.body }).toEqual({ route, body: a.body });
    }
    const results = await two.call('GET', `/v1/campaigns/${id}/results`);
    expect(results.body.configurations.map((c: { key: string; n: number }) => [c.key, c.n]).sort()).toEqual([['clock=1000', 2], ['clock=1980', 2]]);
    expect((await one.call('GET', `/v1/campaigns/${id}`)).body.state).toBe('completed');
  });
});
