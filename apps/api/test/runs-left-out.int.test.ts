import { computeDueEnergy, startTestApi, type TestApi } from './helpers';

// Import runs with exact telemetry: one configuration's third run sends only utilisation samples
// (no power sensor in its window). Results and verdicts must leave its energy out — never count it
// as 0 J — by the same rule, and say which run and why.
describe('runs whose energy was not measured (Postgres + Redis)', () => {
  let t: TestApi;

  async function call(method: string, url: string, body?: unknown) {
    const res = await t.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${t.token}` }, ...(body ? { payload: body as object } : {}) });
    return { status: res.statusCode, body: JSON.parse(res.body) };
  }

  /** An import campaign, 3 runs of a=1 at 100 W for 10 s; with `unmeasuredThird`, its third run has only cpu0.util samples. */
  async function campaign(unmeasuredThird: boolean): Promise<{ id: string; runs: { id: string; repetition: number }[] }> {
    const created = await call('POST', '/v1/campaigns', { name: 'left-out', execution: 'import', repetitions: 3, parameters: { a: [1] } });
    expect(created.status).toBe(201);
    let k = 0;
    for (const run of created.body.runs as { id: string; repetition: number }[]) {
      const start = Date.now() - 3_600_000 + k++ * 20_000;
      const ts = Array.from({ length: 121 }, (_, i) => start - 1000 + i * 100);
      const sensor = unmeasuredThird && run.repetition === 3 ? 'cpu0.util' : 'module0.power';
      expect((await call('POST', `/v1/runs/${run.id}/telemetry`, { node: 'n', seq: 0, samples: [{ sensor, t: ts, v: ts.map(() => (sensor === 'cpu0.util' ? 90 : 100)) }] })).status).toBe(200);
      expect((await call('POST', `/v1/runs/${run.id}/finish`, { startedAt: new Date(start).toISOString(), endedAt: new Date(start + 10_000).toISOString() })).status).toBe(202);
    }
    await computeDueEnergy(t.db);
    return created.body;
  }

  beforeAll(async () => {
    t = await startTestApi();
  });
  afterAll(async () => {
    await t.close();
  });

  test('campaign results: the unmeasured run keeps its time, its energy is left out with a reason, and the mean is the measured runs\'', async () => {
    const c = await campaign(true);
    const { status, body } = await call('GET', `/v1/campaigns/${c.id}/results`);
    expect(status).toBe(200);
    const config = body.configurations[0];
    expect(config.timeS).toMatchObject({ n: 3, mean: expect.closeTo(10, 6) });
    expect(config.energyJ).toMatchObject({ n: 2, mean: expect.closeTo(1000, 3), min: expect.closeTo(1000, 3) });
    expect(config.avgPowerW.n).toBe(2);
    const third = c.runs.find((r) => r.repetition === 3)!;
    expect(body.runsLeftOut).toEqual([{ runId: third.id, key: 'a=1', repetition: 3, leftOut: 'energy', why: 'no power samples inside its window' }]);
    expect(body.excluded).toEqual([]);
  });

  test('regression verdicts count the same runs: two energies and three times', async () => {
    const baseline = await campaign(false);
    const candidate = await campaign(true);
    const { status, body } = await call('GET', `/v1/campaigns/${candidate.id}/verdict?baseline=${baseline.id}`);
    expect(status).toBe(200);
    const [time, energy] = body.configurations[0].verdicts;
    expect(time).toMatchObject({ metric: 'time', nCandidate: 3, nBaseline: 3 });
    expect(energy).toMatchObject({ metric: 'energy', nCandidate: 2, nBaseline: 3 });
  });
});
