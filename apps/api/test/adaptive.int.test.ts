// Adaptive campaigns (issue 16 §1) without Slurm: created with their first runs only; each step
// of the strategy (what the scheduler calls when a run's figures land) stores decisions with
// reasons and adds runs exactly once, even when steps race; a budget stops it; a cancel closes
// it; the campaign is not finished while its strategy may add runs. GET /v1/campaigns/:id/decisions.
import { generateKeyPairSync } from 'node:crypto';
import { decideConfiguration } from '@erg/db/testing';
import { adaptCampaign } from '@erg/strategy';
import { apiRequests, completeRun, startTestApi, type TestApi } from './helpers';

const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'sec1', format: 'pem' }).toString();
const CLUSTER = { name: 'nowhere', host: '127.0.0.1', port: 2222, user: 'root', privateKey: key, hostKeySha256: 'SHA256:' + 'A'.repeat(43), workDir: '/var/lib/erg-test' };

describe('adaptive campaigns (Postgres + Redis, no Slurm)', () => {
  let t: TestApi;
  const { call, ok } = apiRequests(() => t);
  const runsOf = async (id: string) => (await ok('GET', `/v1/campaigns/${id}/runs?limit=1000`)).items as { id: string; configurationKey: string; repetition: number; state: string }[];
  const complete = (runId: string, timeS: number, energyJ: number) => completeRun(t.db, runId, timeS, energyJ);
  /**
   * Figures by configuration: `slow` 4× the others in time and energy; `a` and `b` 1 % apart, with
   * 3 % noise. The noise is a run's own — by its configuration and repetition, not by when it is
   * completed — so that the figures do not depend on the campaign's (seeded, random) run order.
   */
  const WOBBLE = [1, 1.03, 0.97, 1.02, 0.98];
  const OFFSET: Record<string, number> = { 'x=a': 0, 'x=b': 2, 'x=slow': 4 };
  const truth = (c: string): [number, number] => (c === 'x=slow' ? [400, 40_000] : c === 'x=a' ? [100, 10_000] : [101, 10_100]);
  const noisy = (r: { configurationKey: string; repetition: number }): [number, number] => {
    const wobble = WOBBLE[((OFFSET[r.configurationKey] ?? 0) + r.repetition - 1) % WOBBLE.length]!;
    const [time, energy] = truth(r.configurationKey);
    return [time * wobble, energy / wobble];
  };
  const spec = (extra: object = {}) => ({ name: 'adaptive', cluster: 'nowhere', run: 'true', parameters: { x: ['a', 'b', 'slow'] }, strategy: { kind: 'adaptive', minRepetitions: 2, maxRepetitions: 4 }, ...extra });

  beforeAll(async () => {
    t = await startTestApi();
    await ok('POST', '/v1/clusters', CLUSTER);
  });
  afterAll(async () => {
    await t.close();
  });

  test('first runs only; steps drop the dominated configuration and repeat the close call; exactly once under racing steps; then decided', async () => {
    const created = await ok('POST', '/v1/campaigns', spec());
    expect(created.runs).toHaveLength(6);
    const before = await ok('GET', `/v1/campaigns/${created.id}/decisions`);
    expect(before).toMatchObject({ open: true, stop: null, runsUsed: 6, gridRuns: 12, decisions: [] });

    for (const r of await runsOf(created.id)) await complete(r.id, ...noisy(r));
    // Every run so far has ended, yet the strategy may add more: the campaign is not finished.
    expect((await ok('GET', `/v1/campaigns/${created.id}`)).state).toBe('running');
    // Five steps at once (five runs' figures landing in five scheduler processes): runs are added once.
    const steps = await Promise.all(Array.from({ length: 5 }, () => adaptCampaign(t.db, created.id)));
    expect(steps.reduce((n, s) => n + (s?.added ?? 0), 0)).toBe(2);
    const decisions = await ok('GET', `/v1/campaigns/${created.id}/decisions`);
    const slow = decisions.decisions.find((d: { key: string }) => d.key === 'x=slow');
    expect(slow).toMatchObject({ status: 'dropped', n: 2, by: expect.stringMatching(/^x=[ab]$/) });
    expect(slow.reason).toMatch(/^x=slow dropped after 2 runs: dominated by x=[ab] on time and energy, p < 0\.0\d+$/);
    expect(decisions.undecided.sort()).toEqual(['x=a', 'x=b']);
    let runs = await runsOf(created.id);
    expect(runs.filter((r) => r.state === 'pending').map((r) => [r.configurationKey, r.repetition]).sort()).toEqual([['x=a', 3], ['x=b', 3]]);

    // The close call goes on until maxRepetitions (4): then exhausted, and the strategy closes.
    for (let round = 0; round < 3; round++) {
      for (const r of (await runsOf(created.id)).filter((x) => x.state === 'pending')) await complete(r.id, ...noisy(r));
      await adaptCampaign(t.db, created.id);
    }
    runs = await runsOf(created.id);
    expect(runs.filter((r) => r.configurationKey === 'x=slow')).toHaveLength(2);
    expect(runs.length).toBeLessThanOrEqual(10);
    const after = await ok('GET', `/v1/campaigns/${created.id}/decisions`);
    expect(after).toMatchObject({ open: false, undecided: [], runsUsed: runs.length, gridRuns: 12 });
    expect(after.stop).toBe(`every configuration is decided after ${runs.length} runs`);
    expect((await ok('GET', `/v1/campaigns/${created.id}`)).state).toBe('completed');
    // A step of a closed strategy does nothing.
    expect(await adaptCampaign(t.db, created.id)).toBeNull();
  });

  test('a configuration decided while a repetition of it waits to be submitted has that run withdrawn', async () => {
    const created = await ok('POST', '/v1/campaigns', spec());
    for (const r of await runsOf(created.id)) await complete(r.id, ...noisy(r));
    await adaptCampaign(t.db, created.id);
    const pendingB = (await runsOf(created.id)).find((r) => r.state === 'pending' && r.configurationKey === 'x=b')!;
    expect(pendingB).toBeDefined();
    // Decided meanwhile (as another process's step might have): stored as final.
    await decideConfiguration(t.db, created.id, 'x=b', { status: 'dropped', n: 2, reason: 'x=b dropped after 2 runs: dominated by x=a on time and energy, p < 0.001', by: 'x=a', p: 1e-4, relativeHalfWidth: null });
    const step = await adaptCampaign(t.db, created.id);
    expect(step!.withdrawn).toBe(1);
    const withdrawn = (await ok('GET', `/v1/runs/${pendingB.id}`));
    expect(withdrawn).toMatchObject({ state: 'cancelled', reason: 'not needed: its configuration was decided (erg decisions shows why)' });
    // The strategy's own withdrawal is no failure: once the other runs are done and the strategy
    // has closed, the campaign is completed (a user's cancel of a run still fails it: below).
    for (let round = 0; round < 6 && (await ok('GET', `/v1/campaigns/${created.id}/decisions`)).open; round++) {
      for (const r of (await runsOf(created.id)).filter((x) => x.state === 'pending')) await complete(r.id, ...noisy(r));
      await adaptCampaign(t.db, created.id);
    }
    expect((await ok('GET', `/v1/campaigns/${created.id}/decisions`)).open).toBe(false);
    const summary = await ok('GET', `/v1/campaigns/${created.id}`);
    expect(summary.runCounts.cancelled).toBe(1);
    expect(summary.state).toBe('completed');
  });

  test('a run a user cancelled still makes an otherwise completed adaptive campaign failed', async () => {
    const created = await ok('POST', '/v1/campaigns', spec());
    const [first, ...rest] = await runsOf(created.id);
    expect((await ok('POST', `/v1/runs/${first!.id}/cancel`)).outcome).toBe('cancelled');
    for (const r of rest) await complete(r.id, ...noisy(r));
    for (let round = 0; round < 6 && (await ok('GET', `/v1/campaigns/${created.id}/decisions`)).open; round++) {
      await adaptCampaign(t.db, created.id);
      for (const r of (await runsOf(created.id)).filter((x) => x.state === 'pending')) await complete(r.id, ...noisy(r));
    }
    expect((await ok('GET', `/v1/campaigns/${created.id}/decisions`)).open).toBe(false);
    expect((await ok('GET', `/v1/campaigns/${created.id}`)).state).toBe('failed');
  });

  test('a run budget stops the strategy where the next run would exceed it', async () => {
    const created = await ok('POST', '/v1/campaigns', spec({ strategy: { kind: 'adaptive', minRepetitions: 2, maxRepetitions: 4, budget: { maxRuns: 7 } } }));
    for (const r of await runsOf(created.id)) await complete(r.id, ...noisy(r));
    const first = await adaptCampaign(t.db, created.id);
    expect(first!.added).toBe(1);
    for (const r of (await runsOf(created.id)).filter((x) => x.state === 'pending')) await complete(r.id, ...noisy(r));
    const last = await adaptCampaign(t.db, created.id);
    expect(last!.added).toBe(0);
    expect(last!.stop).toMatchObject({ why: 'budget' });
    const view = await ok('GET', `/v1/campaigns/${created.id}/decisions`);
    expect(view).toMatchObject({ open: false, runsUsed: 7, budget: { maxRuns: 7, runsLeft: 0 } });
    expect(view.stop).toMatch(/^the budget allows no more runs after 7/);
  });

  test('screening: one run each at creation; the most promising quarter completes its first runs; the clearly dominated one is dropped after 1 run', async () => {
    const keys = ['a', 'b', 'slow', 'c', 'd', 'e', 'f', 'g'];
    const figures = (c: string): [number, number] => (c === 'x=slow' ? [400, 40_000] : c === 'x=a' ? [100, 10_000] : c === 'x=b' ? [101, 10_100] : [130, 13_000]);
    const created = await ok('POST', '/v1/campaigns', spec({ parameters: { x: keys }, strategy: { kind: 'adaptive', minRepetitions: 2, maxRepetitions: 4, screening: true } }));
    expect(created.runs).toHaveLength(8);
    // Noise by configuration (its place in keys), whatever order the runs came in.
    const at = (r: { configurationKey: string }) => keys.indexOf(r.configurationKey.slice(2));
    for (const r of await runsOf(created.id)) await complete(r.id, ...figures(r.configurationKey).map((v, i) => v * [1, 1.01, 0.99][at(r) % 3]! ** (i + 1)) as [number, number]);
    await adaptCampaign(t.db, created.id);
    // A quarter of 8: the two best by Pareto layer get their second runs first.
    const second = (await runsOf(created.id)).filter((r) => r.state === 'pending');
    expect(second.map((r) => r.configurationKey).sort()).toEqual(['x=a', 'x=b']);
    for (const r of second) await complete(r.id, ...figures(r.configurationKey).map((v, i) => v * [1.02, 0.98][at(r) % 2]! ** (i + 1)) as [number, number]);
    await adaptCampaign(t.db, created.id);
    const decisions = await ok('GET', `/v1/campaigns/${created.id}/decisions`);
    const slow = decisions.decisions.find((d: { key: string }) => d.key === 'x=slow');
    expect(slow).toMatchObject({ status: 'dropped', n: 1 });
    expect(slow.reason).toMatch(/^x=slow dropped after 1 run \(screening, with the pooled spread\): dominated by x=[ab] on time and energy/);
    // The rest get their second first run; the dropped one none.
    const pending = (await runsOf(created.id)).filter((r) => r.state === 'pending').map((r) => r.configurationKey);
    expect(pending).not.toContain('x=slow');
    expect(pending.length).toBeGreaterThan(0);
  });

  test('cancelling the campaign closes its strategy', async () => {
    const created = await ok('POST', '/v1/campaigns', spec());
    await ok('POST', `/v1/campaigns/${created.id}/cancel`);
    expect(await adaptCampaign(t.db, created.id)).toBeNull();
    expect(await ok('GET', `/v1/campaigns/${created.id}/decisions`)).toMatchObject({ open: false, stop: 'the campaign was cancelled' });
  });

  test('a budget too small for the first runs is a 400 at its path; a grid answers with no decisions', async () => {
    const bad = await call('POST', '/v1/campaigns', spec({ strategy: { kind: 'adaptive', minRepetitions: 2, budget: { maxRuns: 5 } } }));
    expect(bad.status).toBe(400);
    expect(bad.body.error.issues).toEqual([expect.objectContaining({ path: 'strategy.budget.maxRuns', code: 'budget_too_small' })]);
    const grid = await ok('POST', '/v1/campaigns', { name: 'grid', cluster: 'nowhere', run: 'true', repetitions: 3, parameters: { x: [1, 2] } });
    expect(await ok('GET', `/v1/campaigns/${grid.id}/decisions`)).toMatchObject({ strategy: { kind: 'grid' }, open: false, stop: null, runsUsed: 6, gridRuns: 6, decisions: [] });
  });
});
