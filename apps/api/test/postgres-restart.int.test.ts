import pg from 'pg';
import { EVENTS_LISTENER_NAME } from '@erg/db';
import { startDisposablePostgres, startDisposableRedis, uniqueName, waitFor, type DisposablePostgres, type DisposableRedis } from '@erg/testkit';
import { STOP_HOOK_MS, openEventStream, prepareDatabase, startApiProcess, type ApiProcess, type EventStream } from './api-process';

/**
 * The built API against a Postgres of this test's own, which it restarts. A restart ends every
 * session: the ones of clients the pool has checked out as well (a transaction of a campaign
 * POST, of a telemetry batch), and a pg client that emits 'error' with no listener ends the
 * process. The test makes that moment certain: a lock it holds keeps the API's transactions
 * waiting, with their clients checked out, while Postgres restarts.
 */

/** Import campaigns need no cluster: their runs stay pending and take telemetry. */
const spec = (name: string) => ({ name, execution: 'import', repetitions: 1, parameters: { n: [1, 2] } });

/** How long the API may take to be ready again once Postgres accepts connections. */
const RECOVERY_MS = 15_000;

describe('the API across Postgres restarts (built process, disposable Postgres and Redis)', () => {
  let pgServer: DisposablePostgres;
  let redis: DisposableRedis;
  let api: ApiProcess;
  let token: string;
  let runId: string;
  let campaignId: string;
  let seq = 0;
  const streams: EventStream[] = [];

  /** A short-lived connection of the test's own (the server restarts under it otherwise). */
  async function withClient<T>(work: (c: pg.Client) => Promise<T>): Promise<T> {
    const c = new pg.Client({ connectionString: pgServer.url('erg') });
    c.on('error', () => undefined);
    await c.connect();
    try {
      return await work(c);
    } finally {
      await c.end().catch(() => undefined);
    }
  }

  /**
   * Whether the process is up and answering, compared whole so that a failure shows how it ended
   * and what it printed (its last words are the stack of the crash).
   */
  async function liveness() {
    const healthz = await fetch(`${api.url}/healthz`).then(
      (r) => r.status,
      (err: Error & { cause?: Error }) => `no answer: ${err.cause?.message ?? err.message}`,
    );
    // A process that stopped answering has exited or is about to: wait for its exit to be seen.
    if (healthz !== 200) await waitFor(() => api.exit !== null, { timeoutMs: 5_000, what: 'the API process to exit' }).catch(() => undefined);
    return { healthz, exit: api.exit, output: api.exit ? api.output() : '' };
  }
  const ALIVE = { healthz: 200, exit: null, output: '' };

  function telemetryBatch() {
    const t = Date.now() - 60_000 + seq * 1000;
    return { node: 'n1', seq: seq++, samples: [{ sensor: 'cpu0.power', t: [t, t + 100], v: [100, 101] }], sensors: [{ sensor: 'cpu0.power', source: 'import', unit: 'W' }] };
  }

  /**
   * Holds SHARE locks on the tables a campaign POST and a telemetry batch insert into, so that
   * their transactions wait with their pooled clients checked out until the restart ends them.
   */
  async function lockWriters(): Promise<pg.Client> {
    const locker = new pg.Client({ connectionString: pgServer.url('erg') });
    locker.on('error', () => undefined); // the restart ends this session too
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE campaigns, telemetry_batches IN SHARE MODE');
    return locker;
  }

  async function writersWaiting(): Promise<number> {
    return withClient(async (c) =>
      Number((await c.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = 'erg' AND wait_event_type = 'Lock'`)).rows[0].n),
    );
  }

  async function listenerBack(): Promise<boolean> {
    return withClient(async (c) => {
      const r = await c.query(`SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND query ILIKE 'LISTEN%'`, [EVENTS_LISTENER_NAME]);
      return r.rowCount === 1;
    });
  }

  beforeAll(async () => {
    [pgServer, redis] = await Promise.all([startDisposablePostgres(), startDisposableRedis()]);
    token = await prepareDatabase(pgServer.url('erg'));
    api = await startApiProcess({ databaseUrl: pgServer.url('erg'), redisUrl: redis.url, queuePrefix: uniqueName('ergpgr'), token });
    const created = await api.call('POST', '/v1/campaigns', spec('before-restarts'));
    expect(created.status).toBe(201);
    runId = created.body.runs[0].id;
    campaignId = created.body.id;
  }, 60_000);

  afterAll(async () => {
    for (const s of streams) await s.close();
    await api?.stop();
    await redis?.stop();
    await pgServer?.destroy();
  }, STOP_HOOK_MS);

  test.each([[1, 'fast'], [2, 'fast'], [3, 'fast'], [4, 'immediate']] as const)(
    'restart %i (%s) while campaign and telemetry transactions hold pooled clients leaves the process up; its event stream and writes work again by themselves',
    async (nth, mode) => {
      const stream = await openEventStream(api.url, token);
      streams.push(stream);
      const locker = await lockWriters();
      const inFlight = [
        api.call('POST', '/v1/campaigns', spec(`during-${nth}-a`)),
        api.call('POST', '/v1/campaigns', spec(`during-${nth}-b`)),
        api.call('POST', `/v1/runs/${runId}/telemetry`, telemetryBatch()),
        api.call('POST', `/v1/runs/${runId}/telemetry`, telemetryBatch()),
      ].map((p) => p.then((r) => `${r.status} ${r.body?.error?.code ?? ''}`, (err: Error) => `no answer: ${err.message}`));
      await waitFor(async () => (await writersWaiting()) >= 4, { timeoutMs: 10_000, what: 'four API transactions waiting on the test\'s lock' });

      await pgServer.restart(mode);

      // Every request held over the restart is answered, none cut off by a dying process, and as
      // what it is: the database was away, retry (not a 500 that says "see the log").
      const answers = await Promise.all(inFlight);
      await locker.end().catch(() => undefined);
      expect(await liveness()).toEqual(ALIVE);
      expect(answers).toEqual(Array(4).fill('503 ERG_DATABASE_UNAVAILABLE'));

      await waitFor(async () => (await api.call('GET', '/readyz')).status === 200, { timeoutMs: RECOVERY_MS, what: 'GET /readyz to answer 200 again' });
      // The LISTEN connection is back: a campaign created now reaches the stream opened before the restart.
      await waitFor(listenerBack, { timeoutMs: RECOVERY_MS, what: 'the API to LISTEN again' });
      const after = await api.call('POST', '/v1/campaigns', spec(`after-${nth}`));
      expect(after.status).toBe(201);
      await stream.next((e) => e.event === 'run' && e.data.campaignId === after.body.id, 'a run event of the campaign created after the restart');
      expect(stream.ended).toBe(false);
      // Writes through the pool (a telemetry transaction) and reads through Prisma work again.
      const batch = telemetryBatch();
      const written = await api.call('POST', `/v1/runs/${runId}/telemetry`, batch);
      expect({ status: written.status, body: written.body }).toEqual({ status: 200, body: { accepted: 2, duplicate: false } });
      const runs = await api.call('GET', `/v1/campaigns/${after.body.id}/runs`);
      expect(runs.status).toBe(200);
      expect(runs.body.total).toBe(2);
      expect(await liveness()).toEqual(ALIVE);
    },
    40_000,
  );

  test('GET /readyz answers 503 naming Postgres while it is stopped, and 200 by itself once it is back', async () => {
    await pgServer.stop('fast');
    try {
      const down = await waitFor(
        async () => {
          const r = await api.call('GET', '/readyz');
          return r.status === 503 ? r.body : undefined;
        },
        { timeoutMs: 10_000, what: 'GET /readyz to answer 503' },
      );
      expect(down).toEqual({ ok: false, postgres: expect.stringMatching(/^error: .+/), redis: 'ok' });
      expect(await liveness()).toEqual(ALIVE);
      // Requests are refused while it is away, with an answer to retry rather than a hang or a crash.
      for (const [method, route, body] of [['POST', `/v1/runs/${runId}/telemetry`, telemetryBatch()], ['GET', `/v1/campaigns/${campaignId}/runs`, undefined]] as const) {
        const refused = await api.call(method, route, body);
        expect({ status: refused.status, code: refused.body?.error?.code, retryAfter: refused.headers.get('retry-after') }).toEqual({ status: 503, code: 'ERG_DATABASE_UNAVAILABLE', retryAfter: '5' });
      }
    } finally {
      await pgServer.start();
    }
    await waitFor(async () => (await api.call('GET', '/readyz')).status === 200, { timeoutMs: RECOVERY_MS, what: 'GET /readyz to answer 200 again' });
    expect((await api.call('GET', '/readyz')).body).toEqual({ ok: true, postgres: 'ok', redis: 'ok' });
    expect(await liveness()).toEqual(ALIVE);
  }, 40_000);
});
