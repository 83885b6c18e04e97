// The scheduler's webhook deliveries (issue 10 §3) against a real database: the project's policy
// as it is at delivery time decides, a name that resolves to 127.0.0.1 reaches nothing unless
// the policy allows it, and what is stored (and shown to the suite's viewers) is only
// "delivery failed (…)" while the log gets the detail. The resolver is the test's.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LookupAddress } from 'node:dns';
import { Writable } from 'node:stream';
import type { Job } from 'bullmq';
import pino from 'pino';
import {
  createCampaign, createDatabase, createSuite, findProjectByName, findSuiteRun, finishSuiteRun, insertSuiteRun, setProjectWebhookPolicy,
  type Database, type SuiteRecord,
} from '@erg/db';
import { SecretBox } from '@erg/secrets';
import { suiteRunView } from '@erg/suites';
import { createTestDatabase, TEST_SECRET_KEY, type TestDatabase } from '@erg/testkit';
import { SchedulerConfig } from '../src/config';
import type { SchedulerContext } from '../src/context';
import { createSchedulerMetrics } from '../src/metrics';
import { runWebhookDelivery } from '../src/suites';
import { testCampaignSpec } from '@erg/db/testing';

const HOOK_HOST = 'hooks.rebind.test';

describe('webhook delivery from the scheduler (Postgres)', () => {
  let tdb: TestDatabase;
  let db: Database;
  let receiver: http.Server;
  let port = 0;
  let answer = 200;
  const received: { host: string | undefined; body: string }[] = [];
  const lines: string[] = [];
  let ctx: SchedulerContext;
  let projectId = '';
  let suite: SuiteRecord;
  // No real DNS knows this name: anything that reached the receiver went to the address checked.
  const resolve = async (hostname: string): Promise<LookupAddress[]> => {
    if (hostname !== HOOK_HOST) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return [{ address: '127.0.0.1', family: 4 }];
  };

  /** A finished run of the suite whose webhook is pending. */
  async function finishedRun(): Promise<string> {
    let id = '';
    await createCampaign(db, {
      name: 'c', execution: 'import', clusterId: null, spec: testCampaignSpec(), specText: null, projectId, configurations: [{ key: 'n=1', parameters: { n: 1 } }], repetitions: 1,
      within: async (tx, campaignId) => {
        id = await insertSuiteRun(tx, campaignId, { suiteId: suite.id, trigger: 'manual', triggerKey: null, baselineCampaignId: null, webhook: true });
      },
    });
    expect(await finishSuiteRun(db, id, { status: 'pass', reasons: ['no_baseline'], verdict: null })).toBe(true);
    return id;
  }
  const job = (suiteRunId: string, attemptsMade = 0) => ({ data: { suiteRunId }, attemptsMade, opts: { attempts: 5 } }) as unknown as Job;

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ host: req.headers.host, body });
        res.statusCode = answer;
        res.end('stack trace from 10.9.8.7: password=hunter2');
      });
    });
    await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
    port = (receiver.address() as AddressInfo).port;
    tdb = await createTestDatabase();
    db = createDatabase(tdb.url);
    const secrets = new SecretBox(Buffer.from(TEST_SECRET_KEY, 'base64'));
    projectId = (await findProjectByName(db, 'default'))!.id;
    suite = await createSuite(db, {
      name: 'hooked', projectId, description: null, template: { name: 'c' }, templateText: null, cron: null, timezone: 'UTC',
      baselinePolicy: 'last-passing', baselineCampaignId: null, policy: { threshold: 0.05, alpha: 0.05, minRepetitions: 3, maxCv: 0.25 },
      webhookUrl: `http://${HOOK_HOST}:${port}/hook`, webhookSecret: null,
    }, secrets);
    const log = pino({ level: 'info' }, new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } }));
    ctx = { config: SchedulerConfig.parse({ ERG_WEBHOOK_TIMEOUT_MS: '5000' }), db, secrets, log, metrics: createSchedulerMetrics() } as unknown as SchedulerContext;
  });
  afterAll(async () => {
    await db.close();
    await tdb.drop();
    await new Promise((done) => receiver.close(done));
  });

  test('a name that resolves to 127.0.0.1 is refused at delivery: nothing sent, the viewer reads only the reason', async () => {
    await setProjectWebhookPolicy(db, 'default', { allowHttp: true, allowHosts: [] });
    const id = await finishedRun();
    const before = received.length;
    await expect(runWebhookDelivery(ctx, job(id), resolve)).rejects.toThrow('delivery failed (address not allowed)');
    expect(received.length).toBe(before);
    const run = (await findSuiteRun(db, id))!;
    expect(run).toMatchObject({ webhookStatus: 'failed', webhookError: 'delivery failed (address not allowed)', webhookAttempts: 1 });
    expect((await suiteRunView(db, run, suite.name)).webhook?.lastError).toBe('delivery failed (address not allowed)');
    // The operator's log says which address and why.
    const line = lines.find((l) => l.includes(id) && l.includes('webhook delivery failed'))!;
    expect(JSON.parse(line)).toMatchObject({ detail: expect.stringContaining(`${HOOK_HOST} → 127.0.0.1 is loopback`) });
  });

  test('with 127.0.0.1 in the project\'s allow-list the same URL is delivered, to the address checked', async () => {
    await setProjectWebhookPolicy(db, 'default', { allowHttp: true, allowHosts: ['127.0.0.1'] });
    answer = 200;
    const id = await finishedRun();
    await runWebhookDelivery(ctx, job(id), resolve);
    expect((await findSuiteRun(db, id))!).toMatchObject({ webhookStatus: 'delivered', webhookError: null });
    expect(received.at(-1)!.host).toBe(`${HOOK_HOST}:${port}`);
    expect(JSON.parse(received.at(-1)!.body).suiteRun.id).toBe(id);
  });

  test('a failing receiver: the status only, retried; its body and address stay out of the database', async () => {
    answer = 500;
    const id = await finishedRun();
    const err = await runWebhookDelivery(ctx, job(id), resolve).catch((e: Error) => e);
    expect((err as Error).message).toBe('delivery failed (status 500)');
    const run = (await findSuiteRun(db, id))!;
    expect(run).toMatchObject({ webhookStatus: 'pending', webhookError: 'delivery failed (status 500)' });
    expect(JSON.stringify(run)).not.toMatch(/10\.9\.8\.7|hunter2|127\.0\.0\.1/);
  });

  test('narrowing the policy stops deliveries of suites stored before', async () => {
    await setProjectWebhookPolicy(db, 'default', { allowHttp: false, allowHosts: ['127.0.0.1'] });
    const id = await finishedRun();
    await expect(runWebhookDelivery(ctx, job(id), resolve)).rejects.toThrow('delivery failed (http not allowed)');
    expect((await findSuiteRun(db, id))!.webhookStatus).toBe('failed');
  });
});
