import { generateKeyPairSync } from 'node:crypto';
import { findSuiteByName, listCampaignRuns, listSuiteRuns, listSuites, storeRunEnergy } from '@erg/db';
import { forceRunEnd } from '@erg/db/testing';
import { judgeFinishedSuiteRuns, schedulerIdOf, syncSchedules } from '@erg/suites';
import { seededRandom } from '@erg/testkit';
import { startTestApi, type TestApi } from './helpers';

const PRIVATE_KEY = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const CLUSTER = {
  name: 'alpha', host: '127.0.0.1', port: 2222, user: 'root', privateKey: PRIVATE_KEY,
  hostKeySha256: 'SHA256:' + 'A'.repeat(43), defaultPartition: 'gh200', workDir: '/var/lib/erg-test',
};

const template = (command = 'gemm --n {{n}}') => ({
  name: 'nightly-gemm', cluster: 'alpha', repetitions: 5, parameters: { n: [1024, 2048] }, run: command,
});

// No Slurm here: the scheduler is not running, so the test plays its part — it finishes the
// suite's runs in the database with known time and energy — and then calls the same judging
// function the scheduler's tick calls.
describe('suites: /v1/suites, triggers and verdicts (Postgres + Redis)', () => {
  let t: TestApi;
  const random = seededRandom(7);
  const noise = (cv: number) => 1 + cv * (random() * 2 - 1) * Math.sqrt(3);

  async function call(method: string, url: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await t.app.inject({
      method: method as 'GET', url, headers: { authorization: `Bearer ${t.token}`, ...headers },
      ...(body === undefined ? {} : { payload: body as string }),
    });
    return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : null };
  }

  /** Marks every run of a campaign completed with time ≈ 10 s and energy ≈ 1000 J (× scale for n=2048). */
  async function finishCampaign(campaignId: string, opts: { energyScale?: number; failOne?: boolean } = {}) {
    const runs = (await listCampaignRuns(t.db, campaignId)).items;
    for (const [i, run] of runs.entries()) {
      const failed = opts.failOne && i === 0;
      await forceRunEnd(t.db, run.id, failed ? 'failed' : 'completed');
      if (failed) continue;
      const timeS = 10 * noise(0.01);
      const energyJ = 1000 * noise(0.02) * (run.configurationKey === 'n=2048' ? (opts.energyScale ?? 1) : 1);
      // The stored record as refreshRunEnergy writes it, as far as results and verdicts read it.
      await storeRunEnergy(t.db, run.id, { timeS, energyJ, method: 'integrated', coverage: 1, result: { timeS, energyJ, edpJs: energyJ * timeS, ed2pJs2: energyJ * timeS ** 2, avgPowerW: energyJ / timeS, coverage: 1 } }, 0);
    }
  }

  async function triggerAndFinish(suite: string, opts: { energyScale?: number; failOne?: boolean } = {}) {
    const triggered = await call('POST', `/v1/suites/${suite}/trigger`);
    expect(triggered.status).toBe(201);
    // A suite's campaigns are owned by the suite, not by the token that triggered it.
    expect((await call('GET', `/v1/campaigns/${triggered.body.campaignId}`)).body.owner).toBe(`suite:${suite}`);
    await finishCampaign(triggered.body.campaignId, opts);
    await judgeFinishedSuiteRuns(t.db);
    return (await call('GET', `/v1/suites/${suite}/runs/${triggered.body.id}`)).body;
  }

  beforeAll(async () => {
    t = await startTestApi();
    expect((await call('POST', '/v1/clusters', CLUSTER)).status).toBe(201);
  });
  afterAll(async () => {
    await t.close();
  });

  test('a suite is created from YAML, listed, and its schedule is a BullMQ job scheduler in its time zone', async () => {
    const yaml = [
      'name: nightly',
      'schedule: { cron: "0 2 * * *", timezone: Europe/Berlin }',
      'regression: { threshold: 0.05, alpha: 0.05 }',
      'webhook: { url: "https://ci.example/hook", secret: "0123456789abcdef" }',
      'campaign:',
      '  name: nightly-gemm',
      '  cluster: alpha',
      '  repetitions: 5',
      '  parameters: { n: [1024, 2048] }',
      '  run: gemm --n {{n}}',
    ].join('\n');
    const created = await call('POST', '/v1/suites', yaml, { 'content-type': 'application/yaml' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'nightly', cluster: 'alpha',
      schedule: { cron: '0 2 * * *', timezone: 'Europe/Berlin' },
      baseline: { policy: 'last-passing', campaignId: null },
      regression: { threshold: 0.05, alpha: 0.05, minRepetitions: 3, maxCv: 0.25 },
      webhook: { url: 'https://ci.example/hook', signed: true },
    });
    // 02:00 in Berlin is 01:00 UTC in winter.
    expect(created.body.schedule.nextRunAt).toMatch(/T01:00:00\.000Z$/);
    expect(JSON.stringify(created.body)).not.toContain('0123456789abcdef');

    const schedulers = await t.queue.getJobSchedulers(0, -1);
    const mine = schedulers.find((s) => s.key === schedulerIdOf(created.body.id));
    expect(mine).toMatchObject({ pattern: '0 2 * * *', tz: 'Europe/Berlin', name: 'suite-trigger' });

    expect((await call('POST', '/v1/suites', yaml, { 'content-type': 'application/yaml' })).status).toBe(409);
    const list = await call('GET', '/v1/suites');
    expect(list.body.items.map((s: { name: string }) => s.name)).toContain('nightly');
  });

  test('every problem of a suite comes back at once, with its path', async () => {
    const res = await call('POST', '/v1/suites', {
      name: 'Bad Name',
      schedule: { cron: '0 2 * *', timezone: 'Mars/Olympus' },
      baseline: { policy: 'pinned' },
      regression: { threshold: -1 },
      campaign: { name: 'x', cluster: 'alpha', repetitions: 0, run: 'true' },
    });
    expect(res.status).toBe(400);
    const paths = res.body.error.issues.map((i: { path: string }) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['name', 'baseline.campaignId', 'regression.threshold', 'campaign.repetitions']));
    // The schedule is checked once the fields parse; a bad zone is named as such.
    const tz = await call('POST', '/v1/suites', { name: 'tz', schedule: { cron: '0 2 * *', timezone: 'Mars/Olympus' }, campaign: template() });
    expect(tz.body.error.issues).toEqual([expect.objectContaining({ path: 'schedule.timezone', message: expect.stringContaining('IANA') })]);
    const cron = await call('POST', '/v1/suites', { name: 'cron', schedule: { cron: '0 2 * *' }, campaign: template() });
    expect(cron.body.error.issues).toEqual([expect.objectContaining({ path: 'schedule.cron', message: expect.stringContaining('expected 5 fields') })]);
    const imp = await call('POST', '/v1/suites', { name: 'imp', campaign: { name: 'x', execution: 'import', parameters: { a: [1] } } });
    expect(imp.body.error.issues).toEqual([expect.objectContaining({ path: 'campaign.execution' })]);
    const unknown = await call('POST', '/v1/suites', { name: 'elsewhere', campaign: { ...template(), cluster: 'nowhere' } });
    expect(unknown.status).toBe(422);
    expect(unknown.body.error.issues[0].path).toBe('campaign.cluster');
    const pinned = await call('POST', '/v1/suites', { name: 'pinned', baseline: { policy: 'pinned', campaignId: '00000000-0000-4000-8000-000000000000' }, campaign: template() });
    expect(pinned.status).toBe(422);
    expect(pinned.body.error.issues[0].path).toBe('baseline.campaignId');
  });

  test('first run passes without a baseline and becomes it; no change passes; a planted +10 % energy regresses', async () => {
    expect((await call('PUT', '/v1/suites/gemm', { name: 'gemm', campaign: template() })).status).toBe(201);
    const first = await triggerAndFinish('gemm');
    expect(first).toMatchObject({ status: 'pass', reasons: ['no_baseline'], baselineId: null, verdict: null, trigger: 'manual' });

    const second = await triggerAndFinish('gemm');
    expect(second.baselineId).toBe(first.campaignId);
    expect(second.status).toBe('pass');
    expect(second.verdict.configurations).toHaveLength(2);

    // The last passing run (the second) is the baseline of the third.
    const third = await triggerAndFinish('gemm', { energyScale: 1.1 });
    expect(third.baselineId).toBe(second.campaignId);
    expect(third.status).toBe('regressed');
    // Each run of the suite is a campaign of its own with a seed drawn for it (the template gives none), stored with its spec.
    const designs = await Promise.all([first, second, third].map(async (r) => (await call('GET', `/v1/campaigns/${r.campaignId}`)).body));
    for (const c of designs) {
      expect(c.design).toEqual({ order: 'randomized-blocks', seed: expect.any(Number) });
      expect(c.spec.design.seed).toBe(c.design.seed);
    }
    expect(third.verdict.worst[0]).toMatchObject({ key: 'n=2048', verdict: { metric: 'energy', status: 'regressed' } });

    // GET /v1/campaigns/:id/verdict of a suite's campaign defaults to its baseline and the suite's policy.
    const direct = await call('GET', `/v1/campaigns/${third.campaignId}/verdict`);
    expect(direct.status).toBe(200);
    expect(direct.body).toMatchObject({ baselineId: second.campaignId, status: 'regressed', policy: { threshold: 0.05 } });
    const stricter = await call('GET', `/v1/campaigns/${third.campaignId}/verdict?threshold=0.5`);
    expect(stricter.body).toMatchObject({ status: 'pass', policy: { threshold: 0.5, alpha: 0.05, minRepetitions: 3 } });

    // A regressed run never becomes the baseline.
    const fourth = await call('POST', '/v1/suites/gemm/trigger');
    expect(fourth.body.baselineId).toBe(second.campaignId);
    const suite = await call('GET', '/v1/suites/gemm');
    expect(suite.body.lastRun).toMatchObject({ id: fourth.body.id, status: 'running' });
  });

  test('a run with a failed repetition cannot pass: inconclusive, runs_failed', async () => {
    expect((await call('PUT', '/v1/suites/flaky', { name: 'flaky', campaign: template() })).status).toBe(201);
    await triggerAndFinish('flaky');
    const second = await triggerAndFinish('flaky', { failOne: true });
    expect(second.status).toBe('inconclusive');
    expect(second.reasons[0]).toBe('runs_failed');
  });

  test('a pinned baseline is used for every run; PUT replaces the suite', async () => {
    expect((await call('PUT', '/v1/suites/pin', { name: 'pin', campaign: template() })).status).toBe(201);
    const base = await triggerAndFinish('pin');
    const put = await call('PUT', '/v1/suites/pin', { name: 'pin', campaign: template(), baseline: { policy: 'pinned', campaignId: base.campaignId } });
    expect(put.status).toBe(200);
    expect(put.body.baseline).toEqual({ policy: 'pinned', campaignId: base.campaignId });
    const a = await triggerAndFinish('pin', { energyScale: 0.8 });
    expect(a.baselineId).toBe(base.campaignId);
    expect(a.status).toBe('improved');
    const b = await triggerAndFinish('pin');
    expect(b.baselineId).toBe(base.campaignId);
    const mismatch = await call('PUT', '/v1/suites/pin', { name: 'other', campaign: template() });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error.issues[0].path).toBe('name');
  });

  test('a trigger with an Idempotency-Key starts one run however often it is retried', async () => {
    expect((await call('PUT', '/v1/suites/idem', { name: 'idem', campaign: template() })).status).toBe(201);
    const headers = { 'idempotency-key': 'ci-pipeline-4711' };
    const results = await Promise.all([1, 2, 3].map(() => call('POST', '/v1/suites/idem/trigger', undefined, headers)));
    const ids = new Set(results.map((r) => r.body.id));
    expect(ids.size).toBe(1);
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 201]);
    const idem = (await findSuiteByName(t.db, 'idem'))!;
    expect((await listSuiteRuns(t.db, idem.id, { limit: 10, offset: 0 })).total).toBe(1);
    const other = await call('POST', '/v1/suites/idem/trigger', undefined, { 'idempotency-key': 'ci-pipeline-4712' });
    expect(other.status).toBe(201);
    expect(other.body.id).not.toBe(results[0]!.body.id);
  });

  test('deleting a suite removes its schedule; schedule sync restores lost ones and drops strays', async () => {
    const created = await call('PUT', '/v1/suites/hourly', { name: 'hourly', schedule: { cron: '0 * * * *' }, campaign: template() });
    expect(created.status).toBe(201);
    const id = schedulerIdOf(created.body.id);
    // Redis lost it (it keeps nothing on disk here): the sync puts it back.
    await t.queue.removeJobScheduler(id);
    await syncSchedules(t.queue, await listSuites(t.db));
    expect((await t.queue.getJobSchedulers(0, -1)).map((s) => s.key)).toContain(id);
    // A scheduler for a suite that no longer exists is removed.
    await t.queue.upsertJobScheduler(schedulerIdOf('00000000-0000-4000-8000-000000000000'), { pattern: '0 3 * * *' }, { name: 'suite-trigger', data: {} });
    const result = await syncSchedules(t.queue, await listSuites(t.db));
    expect(result.removed).toBe(1);

    expect((await call('DELETE', '/v1/suites/hourly')).status).toBe(204);
    expect((await t.queue.getJobSchedulers(0, -1)).map((s) => s.key)).not.toContain(id);
    expect((await call('GET', '/v1/suites/hourly')).status).toBe(404);
    expect((await call('POST', '/v1/suites/hourly/trigger')).status).toBe(404);
  });
});
