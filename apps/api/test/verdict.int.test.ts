import { seededRandom } from '@erg/testkit';
import { computeDueEnergy, startTestApi, type TestApi } from './helpers';

// Import campaigns stand in for nightly suite runs: their runs get telemetry and a window, so
// time and energy are known exactly. A deterministic PRNG adds 1–2 % noise per repetition.
describe('regression verdict against a baseline campaign (Postgres + Redis)', () => {
  let t: TestApi;
  const random = seededRandom(42);
  const noise = (cv: number) => 1 + cv * (random() * 2 - 1) * Math.sqrt(3); // uniform with the given CV

  async function call(method: string, url: string, body?: unknown) {
    const res = await t.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${t.token}` }, ...(body ? { payload: body as object } : {}) });
    return { status: res.statusCode, body: JSON.parse(res.body) };
  }

  /** An import campaign whose runs took `timeS` and used `energyJ` per configuration (× `scale` for `a=2`). */
  async function nightly(reps: number, energyScaleForA2 = 1): Promise<string> {
    const created = await call('POST', '/v1/campaigns', { name: 'nightly', execution: 'import', repetitions: reps, parameters: { a: [1, 2] } });
    expect(created.status).toBe(201);
    let k = 0;
    for (const run of created.body.runs as { id: string; configurationKey: string }[]) {
      const timeS = 10 * noise(0.01);
      const energyJ = 1000 * noise(0.02) * (run.configurationKey === 'a=2' ? energyScaleForA2 : 1);
      const start = Date.now() - 3_600_000 + k++ * 20_000;
      const ts = Array.from({ length: Math.ceil(timeS * 10) + 21 }, (_, i) => start - 1000 + i * 100);
      const post = await call('POST', `/v1/runs/${run.id}/telemetry`, { node: 'n', seq: 0, samples: [{ sensor: 'module0.power', t: ts, v: ts.map(() => energyJ / timeS) }] });
      expect(post.status).toBe(200);
      const fin = await call('POST', `/v1/runs/${run.id}/finish`, { startedAt: new Date(start).toISOString(), endedAt: new Date(start + timeS * 1000).toISOString() });
      expect(fin.status).toBe(202);
    }
    // The scheduler computes the finished runs' energy (called here as its job would).
    await computeDueEnergy(t.db);
    return created.body.id;
  }

  let baseline: string;
  beforeAll(async () => {
    t = await startTestApi();
    baseline = await nightly(5);
  });
  afterAll(async () => {
    await t.close();
  });

  test('no change: pass, with a time and an energy verdict per configuration', async () => {
    const candidate = await nightly(5);
    const { status, body } = await call('GET', `/v1/campaigns/${candidate}/verdict?baseline=${baseline}`);
    expect(status).toBe(200);
    expect(body.status).toBe('pass');
    expect(body.configurations.map((c: { key: string }) => c.key)).toEqual(['a=1', 'a=2']);
    for (const c of body.configurations) expect(c.verdicts.map((v: { metric: string }) => v.metric)).toEqual(['time', 'energy']);
  });

  test('a planted 10 % energy increase in one configuration is a regression, and says where', async () => {
    const candidate = await nightly(5, 1.1);
    const { body } = await call('GET', `/v1/campaigns/${candidate}/verdict?baseline=${baseline}`);
    expect(body.status).toBe('regressed');
    expect(body.worst).toHaveLength(1);
    expect(body.worst[0].key).toBe('a=2');
    expect(body.worst[0].verdict).toMatchObject({ metric: 'energy', status: 'regressed' });
    expect(body.worst[0].verdict.change).toBeGreaterThan(0.05);
    expect(body.worst[0].verdict.ci95[0]).toBeGreaterThan(0);
  });

  test('two repetitions are too few to judge: inconclusive, and why', async () => {
    const candidate = await nightly(2, 1.1);
    const { body } = await call('GET', `/v1/campaigns/${candidate}/verdict?baseline=${baseline}`);
    expect(body.status).toBe('inconclusive');
    expect(body.reasons).toEqual(['too_few_repetitions']);
  });

  test('the baseline is required and checked', async () => {
    expect((await call('GET', `/v1/campaigns/${baseline}/verdict`)).status).toBe(400);
    expect((await call('GET', `/v1/campaigns/${baseline}/verdict?baseline=00000000-0000-4000-8000-000000000000`)).status).toBe(404);
    expect((await call('GET', `/v1/campaigns/${baseline}/verdict?baseline=${baseline}&alpha=2`)).status).toBe(400);
  });
});
