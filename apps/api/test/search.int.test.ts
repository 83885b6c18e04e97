// Search campaigns (issue 16 §1, `strategy: search`) without Slurm: a space of 1,200
// configurations is stored whole but created with no run; each step (what the scheduler calls when
// a run's figures land, and each tick) proposes configurations in batches sized to the runs it
// may have in flight, never the same one twice, even when steps race; it stops at its budget once
// nothing is in flight; every tried configuration's standing is shown with its reason.
import { generateKeyPairSync } from 'node:crypto';
import { adaptCampaign, SearchStepFailed } from '@erg/strategy';
import { apiRequests, completeRun, startTestApi, type TestApi } from './helpers';

const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'sec1', format: 'pem' }).toString();
const CLUSTER = { name: 'nowhere', host: '127.0.0.1', port: 2222, user: 'root', privateKey: key, hostKeySha256: 'SHA256:' + 'A'.repeat(43), workDir: '/var/lib/erg-test' };

describe('search campaigns (Postgres + Redis, no Slurm)', () => {
  let t: TestApi;
  const { call, ok } = apiRequests(() => t);
  const runsOf = async (id: string) => (await ok('GET', `/v1/campaigns/${id}/runs?limit=1000`)).items as { id: string; configurationKey: string; repetition: number; state: string }[];
  /** Time falls and energy rises with the clock: a front along `clock`; `batch` far from 64 costs both. */
  const truth = (key: string): [number, number] => {
    const p = Object.fromEntries(key.split(';').map((kv) => kv.split('=')));
    const clock = Number(p['clock']);
    const batch = Number(p['batch']);
    const waste = 1 + Math.abs(Math.log2(batch / 64)) * 0.3 + (p['offload'] === 'nvme' ? 0.5 : 0);
    return [(100_000 / clock) * waste, clock * 10 * waste];
  };
  const complete = (runId: string, timeS: number, energyJ: number) => completeRun(t.db, runId, timeS, energyJ);
  const spec = (strategy: object) => ({
    name: 'search', cluster: 'nowhere', run: 'true',
    parameters: { clock: Array.from({ length: 20 }, (_, i) => 600 + 60 * i), batch: [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096], offload: ['none', 'cpu', 'nvme', 'disk', 'none2', 'cpu2'] },
    strategy: { kind: 'search', ...strategy },
  });

  beforeAll(async () => {
    t = await startTestApi();
    await ok('POST', '/v1/clusters', CLUSTER);
  });
  afterAll(async () => {
    await t.close();
  });

  test('no run at creation; batches fill the free slots, never twice, under racing steps; stops at its budget with nothing in flight', async () => {
    const created = await ok('POST', '/v1/campaigns', spec({ parallel: 3, initialConfigurations: 4, budget: { maxRuns: 10 } }));
    expect(created.configurations).toHaveLength(1200);
    expect(created.runs).toHaveLength(0);
    expect((await ok('GET', `/v1/campaigns/${created.id}`)).state).toBe('running');
    expect(await ok('GET', `/v1/campaigns/${created.id}/decisions`)).toMatchObject({ open: true, runsUsed: 0, gridRuns: 1200, budget: { maxRuns: 10, runsLeft: 10 }, decisions: [] });

    // Five steps at once: the batch is added once, three runs (the free slots).
    const steps = await Promise.all(Array.from({ length: 5 }, () => adaptCampaign(t.db, created.id)));
    expect(steps.reduce((n, s) => n + (s?.added ?? 0), 0)).toBe(3);
    const view = await ok('GET', `/v1/campaigns/${created.id}/decisions`);
    expect(view.undecided).toHaveLength(3);
    expect(view.decisions.every((d: { status: string; reason: string }) => d.status === 'sampling' && /proposed by the search, 1 run\(s\) in flight$/.test(d.reason))).toBe(true);

    // Results land one at a time; each step refills the slot that came free.
    for (let i = 0; i < 30; i++) {
      const pending = (await runsOf(created.id)).filter((r) => r.state === 'pending');
      if (pending.length === 0) break;
      const r = pending[0]!;
      await complete(r.id, ...truth(r.configurationKey));
      const step = await adaptCampaign(t.db, created.id);
      const inFlight = (await runsOf(created.id)).filter((x) => x.state === 'pending').length;
      expect(inFlight).toBeLessThanOrEqual(3);
      if (step === null) break;
    }
    const runs = await runsOf(created.id);
    expect(runs).toHaveLength(10);
    expect(new Set(runs.map((r) => r.configurationKey)).size).toBe(10);
    expect(runs.every((r) => r.repetition === 1 && r.state === 'completed')).toBe(true);
    const after = await ok('GET', `/v1/campaigns/${created.id}/decisions`);
    expect(after).toMatchObject({ open: false, runsUsed: 10, undecided: [], budget: { maxRuns: 10, runsLeft: 0 } });
    expect(after.stop).toMatch(/budget/);
    expect(after.decisions).toHaveLength(10);
    // The front shown is the front of what was measured; each dominated one names a front member that dominates it.
    const means = new Map(after.decisions.map((d: { key: string }) => [d.key, truth(d.key)]));
    for (const d of after.decisions as { key: string; status: string; by: string | null; reason: string }[]) {
      const [x, y] = means.get(d.key)!;
      const dominated = [...means.values()].some(([a, b]) => a <= x && b <= y && (a < x || b < y));
      expect(d.status).toBe(dominated ? 'dropped' : 'front');
      if (d.status === 'dropped') {
        const [a, b] = means.get(d.by!)!;
        expect(a <= x && b <= y).toBe(true);
        expect(d.reason).toMatch(new RegExp(`^${d.key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} dominated by ${d.by} on time and energy`));
      } else {
        expect(d.reason).toMatch(/on the observed front after 1 run\(s\): no configuration tried is better on both time and energy/);
      }
    }
    expect((await ok('GET', `/v1/campaigns/${created.id}`)).state).toBe('completed');
    expect(await adaptCampaign(t.db, created.id)).toBeNull();
  });

  test('repetitions per configuration tried, and a cancel closes the search', async () => {
    const created = await ok('POST', '/v1/campaigns', spec({ repetitions: 2, parallel: 4, budget: { maxRuns: 8 } }));
    const step = await adaptCampaign(t.db, created.id);
    expect(step!.added).toBe(4);
    const runs = await runsOf(created.id);
    expect(runs.map((r) => r.repetition).sort()).toEqual([1, 1, 2, 2]);
    expect(new Set(runs.map((r) => r.configurationKey)).size).toBe(2);
    await ok('POST', `/v1/campaigns/${created.id}/cancel`);
    expect(await adaptCampaign(t.db, created.id)).toBeNull();
    expect(await ok('GET', `/v1/campaigns/${created.id}/decisions`)).toMatchObject({ open: false, stop: 'the campaign was cancelled' });
  });

  test('a step that failed for good stops the search with its reason; any other error leaves it open for a later step', async () => {
    const created = await ok('POST', '/v1/campaigns', spec({ budget: { maxRuns: 6 } }));
    await expect(adaptCampaign(t.db, created.id, { searchStep: () => { throw new Error('the worker pool is closed'); } })).rejects.toThrow('the worker pool is closed');
    expect(await ok('GET', `/v1/campaigns/${created.id}/decisions`)).toMatchObject({ open: true, stop: null });
    const step = await adaptCampaign(t.db, created.id, { searchStep: () => { throw new SearchStepFailed('it ran past its time budget of 10000 ms'); } });
    expect(step).toMatchObject({ added: 0, stop: { why: 'failed', reason: 'the search stopped: its step failed (it ran past its time budget of 10000 ms)' } });
    expect(await ok('GET', `/v1/campaigns/${created.id}/decisions`)).toMatchObject({ open: false, stop: 'the search stopped: its step failed (it ran past its time budget of 10000 ms)' });
    expect((await ok('GET', `/v1/campaigns/${created.id}`)).state).toBe('completed');
  });

  test('bad search settings are 400s at their paths', async () => {
    const res = await call('POST', '/v1/campaigns', spec({ budget: { maxNodeHours: 2 } }));
    expect(res.status).toBe(400);
    expect(res.body.error.issues).toEqual([expect.objectContaining({ path: 'strategy.budget.maxRuns', message: expect.stringMatching(/^required: a search ends when its runs are spent/) })]);
    const two = await call('POST', '/v1/campaigns', { ...spec({ repetitions: 3, budget: { maxRuns: 2 } }), repetitions: 2 });
    expect(two.status).toBe(400);
    expect(two.body.error.issues.map((i: { path: string; code: string }) => [i.path, i.code])).toEqual([['repetitions', 'strategy_conflict'], ['strategy.budget.maxRuns', 'budget_too_small']]);
  });
});
