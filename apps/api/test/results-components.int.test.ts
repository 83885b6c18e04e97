import { computeDueEnergy, startTestApi, type TestApi } from './helpers';

describe('GET /v1/campaigns/:id/results: energy by component per configuration', () => {
  let t: TestApi;

  async function call(method: string, url: string, body?: unknown) {
    const res = await t.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${t.token}` }, ...(body === undefined ? {} : { payload: body as object }) });
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json();
  }

  beforeAll(async () => {
    t = await startTestApi();
  });
  afterAll(async () => {
    await t.close();
  });

  test('each configuration has the mean energy of each component kind over its runs', async () => {
    const campaign = await call('POST', '/v1/campaigns', { name: 'parts', execution: 'import', repetitions: 2, parameters: { n: [1] } });
    const start = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
    // 10 s at constant power: GPU 300 W and 200 W (3000 J, 2000 J), CPU 100 W in both (1000 J).
    for (const [i, gpuW] of [300, 200].entries()) {
      const t = Array.from({ length: 101 }, (_, k) => start + k * 100);
      await call('POST', `/v1/runs/${campaign.runs[i].id}/telemetry`, {
        node: 'n1', seq: 0,
        samples: [{ sensor: 'gpu0.power', t, v: t.map(() => gpuW) }, { sensor: 'cpu0.power', t, v: t.map(() => 100) }],
      });
      await call('POST', `/v1/runs/${campaign.runs[i].id}/finish`, { startedAt: new Date(start).toISOString(), endedAt: new Date(start + 10_000).toISOString() });
    }
    await computeDueEnergy(t.db);
    const results = await call('GET', `/v1/campaigns/${campaign.id}/results`);
    const c = results.configurations[0];
    expect(Object.keys(c.components).sort()).toEqual(['cpu', 'gpu']);
    expect(c.components.gpu).toMatchObject({ n: 2, min: 2000, max: 3000 });
    expect(c.components.gpu.mean).toBeCloseTo(2500, 6);
    expect(c.components.cpu.mean).toBeCloseTo(1000, 6);
    expect(c.components.gpu.mean + c.components.cpu.mean).toBeCloseTo(c.energyJ.mean, 6);
  });
});
