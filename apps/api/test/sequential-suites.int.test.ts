import { generateKeyPairSync } from 'node:crypto';
import { findSuiteRun, listCampaignRuns, storeRunEnergy } from '@erg/db';
import { forceRunEnd } from '@erg/db/testing';
import { judgeFinishedSuiteRuns, lookAtSuiteRun } from '@erg/suites';
import { RegressionPolicy } from '@erg/spec';
import { seededRandom } from '@erg/testkit';
import { startTestApi, type TestApi } from './helpers';

const PRIVATE_KEY = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const CLUSTER = {
  name: 'seq', host: '127.0.0.1', port: 2222, user: 'root', privateKey: PRIVATE_KEY,
  hostKeySha256: 'SHA256:' + 'B'.repeat(43), defaultPartition: 'gh200', workDir: '/var/lib/erg-test',
};
const template = { name: 'seq-gemm', cluster: 'seq', parameters: { n: [1024, 2048] }, run: 'gemm --n {{n}}' };
const regression = { minRepetitions: 3, sequential: { maxRepetitions: 6 } };

// No Slurm here, as in suites.int.test.ts: the test ends the pending runs in the database with
// known time and energy, then calls the judging function the scheduler's tick calls. Each look
// that is undecided adds pending runs, which the test ends in turn.
describe('sequential suites: repetitions added while the verdict is undecided (Postgres + Redis)', () => {
  let t: TestApi;
  const random = seededRandom(16);
  const noise = (cv: number) => 1 + cv * (random() * 2 - 1) * Math.sqrt(3);

  async function call(method: string, url: string, body?: unknown) {
    const res = await t.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${t.token}` }, ...(body === undefined ? {} : { payload: body as string }) });
    return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : null };
  }

  /** Ends every pending run of the campaign: completed, time ≈ 10 s, energy ≈ 1000 J × scale at the given CV. */
  async function endPendingRuns(campaignId: string, opts: { energyScale?: number; energyCv?: number } = {}) {
    const runs = (await listCampaignRuns(t.db, campaignId, { state: 'pending' })).items;
    for (const run of runs) {
      await forceRunEnd(t.db, run.id, 'completed');
      const timeS = 10 * noise(0.01);
      const energyJ = 1000 * noise(opts.energyCv ?? 0.02) * (opts.energyScale ?? 1);
      await storeRunEnergy(t.db, run.id, { timeS, energyJ, method: 'integrated', coverage: 1, result: { timeS, energyJ, edpJs: energyJ * timeS, ed2pJs2: energyJ * timeS ** 2, avgPowerW: energyJ / timeS, coverage: 1 } }, 0);
    }
    return runs.length;
  }

  async function trigger(suite: string) {
    const res = await call('POST', `/v1/suites/${suite}/trigger`);
    expect(res.status).toBe(201);
    return res.body as { id: string; campaignId: string };
  }
  const view = async (suite: string, id: string) => (await call('GET', `/v1/suites/${suite}/runs/${id}`)).body;

  beforeAll(async () => {
    t = await startTestApi();
    expect((await call('POST', '/v1/clusters', CLUSTER)).status).toBe(201);
  });
  afterAll(async () => {
    await t.close();
  });

  test('a sequential policy is checked with field paths; the template runs the maximum', async () => {
    const low = await call('POST', '/v1/suites', { name: 'low', regression: { minRepetitions: 3, sequential: { maxRepetitions: 3 } }, campaign: template });
    expect(low.status).toBe(400);
    expect(low.body.error.issues).toEqual([expect.objectContaining({ path: 'regression.sequential.maxRepetitions', message: expect.stringContaining('more than minRepetitions (3)') })]);
    const clash = await call('POST', '/v1/suites', { name: 'clash', regression, campaign: { ...template, repetitions: 5 } });
    expect(clash.body.error.issues).toEqual([expect.objectContaining({ path: 'campaign.repetitions', message: expect.stringContaining('set repetitions to 6 or leave it out') })]);
    const detect = await call('POST', '/v1/suites', { name: 'detect', regression: { threshold: 0.05, sequential: { maxRepetitions: 6, detect: 0.05 } }, campaign: template });
    expect(detect.body.error.issues).toEqual([expect.objectContaining({ path: 'regression.sequential.detect' })]);

    const created = await call('PUT', '/v1/suites/seq', { name: 'seq', regression, campaign: template });
    expect(created.status).toBe(201);
    expect(created.body.regression).toEqual({ threshold: 0.05, alpha: 0.05, minRepetitions: 3, maxCv: 0.25, sequential: { maxRepetitions: 6, spending: 'obrien-fleming', beta: 0.1 } });
    expect(created.body.campaign.repetitions).toBe(6);
  });

  test('the first run runs the maximum and becomes the baseline; a quiet run then passes at its first look with half the runs', async () => {
    const first = await trigger('seq');
    expect(await endPendingRuns(first.campaignId)).toBe(12);
    expect((await judgeFinishedSuiteRuns(t.db)).map((r) => r.id)).toEqual([first.id]);
    expect(await view('seq', first.id)).toMatchObject({
      status: 'pass', reasons: ['no_baseline'],
      sequential: { look: 1, maxRepetitions: 6, spending: 'obrien-fleming', runsUsed: 12, runsFixed: 12, stop: 'no_baseline' },
    });

    const second = await trigger('seq');
    expect((await view('seq', second.id)).sequential).toMatchObject({ look: 0, runsUsed: 6, runsFixed: 12, stop: null });
    expect(await endPendingRuns(second.campaignId)).toBe(6);
    expect((await judgeFinishedSuiteRuns(t.db)).map((r) => r.id)).toEqual([second.id]);
    const judged = await view('seq', second.id);
    expect(judged).toMatchObject({ status: 'pass', baselineId: first.campaignId, sequential: { look: 1, runsUsed: 6, runsFixed: 12, stop: 'decided' } });
    expect(judged.sequential.configurations).toEqual([
      expect.objectContaining({ key: 'n=1024', repetitions: 3, stop: 'regression_ruled_out' }),
      expect.objectContaining({ key: 'n=2048', repetitions: 3, stop: 'regression_ruled_out' }),
    ]);
  });

  test('an undecided look adds one repetition per undecided configuration, once, however many judge it at once', async () => {
    const run = await trigger('seq');
    // Noisy energy: a 10 % regression cannot be ruled out from 3 repetitions.
    await endPendingRuns(run.campaignId, { energyCv: 0.15 });
    const stale = (await findSuiteRun(t.db, run.id))!;
    const judged = await Promise.all([judgeFinishedSuiteRuns(t.db), judgeFinishedSuiteRuns(t.db)]);
    expect(judged.flat()).toEqual([]);
    const pending = (await listCampaignRuns(t.db, run.campaignId, { state: 'pending' })).items;
    expect(pending.length).toBeGreaterThanOrEqual(1);
    expect(pending.length).toBeLessThanOrEqual(2);
    expect(pending.every((r) => r.repetition === 4)).toBe(true);
    const afterLook = await view('seq', run.id);
    expect(afterLook).toMatchObject({ status: 'running', sequential: { look: 1, runsUsed: 6 + pending.length, stop: null } });
    // A process that read the run before that look cannot take the look again.
    const policy = { ...RegressionPolicy.parse(regression), sequential: RegressionPolicy.parse(regression).sequential! };
    expect(await lookAtSuiteRun(t.db, stale, policy)).toBe(false);
    expect((await listCampaignRuns(t.db, run.campaignId)).total).toBe(6 + pending.length);
    // Not judged while its added runs are in flight.
    expect(await judgeFinishedSuiteRuns(t.db)).toEqual([]);

    // Each look's runs end; the run stops by the maximum (6) at the latest.
    for (let look = 2; look <= 4 && (await view('seq', run.id)).status === 'running'; look++) {
      await endPendingRuns(run.campaignId, { energyCv: 0.15 });
      await judgeFinishedSuiteRuns(t.db);
    }
    const final = await view('seq', run.id);
    expect(final.status).not.toBe('running');
    expect(final.sequential.look).toBeGreaterThanOrEqual(2);
    expect(final.sequential.runsUsed).toBeLessThanOrEqual(12);
    expect(['decided', 'max_repetitions', 'regressed']).toContain(final.sequential.stop);
    expect(final.sequential.configurations.every((c: { repetitions: number }) => c.repetitions >= 3 && c.repetitions <= 6)).toBe(true);
  });

  test('a planted +30 % energy regression stops the run at its first look: regressed', async () => {
    const run = await trigger('seq');
    await endPendingRuns(run.campaignId, { energyScale: 1.3 });
    await judgeFinishedSuiteRuns(t.db);
    const judged = await view('seq', run.id);
    expect(judged).toMatchObject({ status: 'regressed', sequential: { look: 1, runsUsed: 6, stop: 'regressed' } });
    expect(judged.sequential.configurations).toEqual(expect.arrayContaining([expect.objectContaining({ stop: 'boundary' })]));
    // Only runs that ran the maximum become a sequential suite's baseline: the first run still is.
    const next = await trigger('seq');
    expect((await view('seq', next.id)).baselineId).toBe((await view('seq', (await call('GET', '/v1/suites/seq/runs?limit=100')).body.items.at(-1).id)).campaignId);
  });
});
