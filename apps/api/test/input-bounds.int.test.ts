// Inputs that answered 500 (issue 27 §3), each now a 400 naming its field — or, for figures
// stored before the bounds, an answer without the number JSON cannot hold.
import { storeRunEnergy } from '@erg/db';
import { overwriteSensorWrapAt } from '@erg/db/testing';
import { MAX_WRAP_AT } from '@erg/spec';
import { computeDueEnergy, startTestApi, type TestApi } from './helpers';

const IMPORT_SPEC = { name: 'bounds', execution: 'import', repetitions: 6 };

describe('inputs that answered 500 are 400s naming their field (Postgres + Redis)', () => {
  let t: TestApi;
  let runs: { id: string }[];
  let campaignId: string;

  async function call(method: string, url: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await t.app.inject({
      method: method as 'POST', url, headers: { authorization: `Bearer ${t.token}`, ...headers },
      ...(body === undefined ? {} : { payload: body as string }),
    });
    return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : null };
  }

  /** A counter that goes backwards once, read every second from `fromMs` (the window's edges fall between samples). */
  function backwardsCounter(fromMs: number) {
    const t = Array.from({ length: 12 }, (_, i) => fromMs + i * 1000);
    return { sensor: 'cpu0.energy', t, v: t.map((_, i) => (i < 6 ? 1000 + 100 * i : 100 * (i - 6))) };
  }
  const finishBody = (startMs: number, seconds: number) => ({ startedAt: new Date(startMs).toISOString(), endedAt: new Date(startMs + seconds * 1000).toISOString() });

  beforeAll(async () => {
    t = await startTestApi();
    const created = await call('POST', '/v1/campaigns', IMPORT_SPEC);
    expect(created.status).toBe(201);
    runs = created.body.runs;
    campaignId = created.body.id;
  });
  afterAll(async () => {
    await t.close();
  });

  test('a counter declaring wrapAt: 1e308 is refused at sensors[0].wrapAt', async () => {
    const start = Date.now() - 120_000;
    const res = await call('POST', `/v1/runs/${runs[0]!.id}/telemetry`, {
      node: 'n1', seq: 0, samples: [backwardsCounter(start)], sensors: [{ sensor: 'cpu0.energy', source: 'rapl', unit: 'J', wrapAt: 1e308 }],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.issues).toEqual([{ path: 'sensors[0].wrapAt', code: 'too_big', message: expect.stringContaining(`at most ${MAX_WRAP_AT} J`) }]);
  });

  test('a counter stored with wrapAt: 1e308 before the bound gives finite figures: its decrease is a reset, and says so', async () => {
    const run = runs[1]!;
    const start = Date.now() - 120_000;
    const sent = await call('POST', `/v1/runs/${run.id}/telemetry`, {
      node: 'n1', seq: 0, samples: [backwardsCounter(start)], sensors: [{ sensor: 'cpu0.energy', source: 'rapl', unit: 'J' }],
    });
    expect(sent.status).toBe(200);
    await overwriteSensorWrapAt(t.db, run.id, 'cpu0.energy', 1e308);
    expect((await call('POST', `/v1/runs/${run.id}/finish`, finishBody(start + 500, 10))).status).toBe(202);
    // The scheduler computes the energy after a finish (issue 27); here, as its refresh does.
    await computeDueEnergy(t.db);
    const energy = await call('GET', `/v1/runs/${run.id}/energy`);
    expect(energy.status).toBe(200);
    // Unwrapped by 1e308, this was Infinity (stored, and a 500 here). As a reset: 50 + 4 × 100 + 0 + 4 × 100 + 50 J.
    expect(energy.body.energyJ).toBeCloseTo(900, 6);
    expect(energy.body.warnings).toEqual(expect.arrayContaining([expect.stringContaining('cpu0.energy reset 1 time(s) in the window')]));
  });

  test('figures stored with Infinity (JSON null) answer 409, not 500, until the recompute replaces them', async () => {
    const run = runs[2]!;
    const start = Date.now() - 120_000;
    expect((await call('POST', `/v1/runs/${run.id}/telemetry`, { node: 'n1', seq: 0, samples: [{ sensor: 'cpu0.power', t: [start, start + 20_000], v: [100, 100] }] })).status).toBe(200);
    expect((await call('POST', `/v1/runs/${run.id}/finish`, finishBody(start + 500, 10))).status).toBe(202);
    // The scheduler computes the energy after a finish (issue 27); here, as its refresh does.
    await computeDueEnergy(t.db);
    const good = (await call('GET', `/v1/runs/${run.id}/energy`)).body;
    // As an older erg stored them: energy_j Infinity, and JSON's null for it in the result.
    const result = JSON.parse(JSON.stringify({ ...good, energyJ: Infinity, edpJs: Infinity }));
    await storeRunEnergy(t.db, run.id, { timeS: good.timeS, energyJ: Infinity, method: good.method, coverage: good.coverage, result }, 1_000);
    expect((await call('GET', `/v1/runs/${run.id}/energy`)).status).toBe(409);
    expect((await call('GET', `/v1/runs/${run.id}/phases`)).status).toBe(409);
  });

  test.each([
    ['endedAt in year 9999', (start: number) => ({ startedAt: new Date(start).toISOString(), endedAt: '9999-12-31T00:00:00Z' }), 'endedAt', 'is in the future'],
    ['startedAt in year 1', (start: number) => ({ startedAt: '0001-01-01T00:00:00Z', endedAt: new Date(start).toISOString() }), 'startedAt', 'is before 2000-01-01'],
  ])('finishing an import with %s is a 400 at that field, and the run stays pending', async (_what, body, path, message) => {
    const run = runs[3]!;
    const res = await call('POST', `/v1/runs/${run.id}/finish`, body(Date.now() - 60_000));
    expect(res.status).toBe(400);
    expect(res.body.error.issues).toEqual([{ path, code: 'custom', message: expect.stringContaining(message) }]);
    expect((await call('GET', `/v1/runs/${run.id}`)).body.state).toBe('pending');
  });

  test('a __proto__ key under files is a 400 naming it, in YAML and in JSON alike', async () => {
    const yaml = await call('POST', '/v1/campaigns', 'name: p\nexecution: import\nfiles:\n  __proto__: "x"\n  kept.txt: "y"\n', { 'content-type': 'application/yaml' });
    expect(yaml.status).toBe(400);
    expect(yaml.body.error.issues).toEqual([{ path: 'files.__proto__', code: 'reserved_name', message: expect.stringContaining('"__proto__" is a reserved name') }]);
    const json = await call('POST', '/v1/campaigns', '{"name":"p","execution":"import","files":{"__proto__":"x","kept.txt":"y"}}', { 'content-type': 'application/json' });
    expect(json.status).toBe(400);
    expect(json.body.error).toMatchObject({ code: 'ERG_VALIDATION', issues: [{ path: 'files.__proto__', code: 'reserved_name' }] });
  });

  test('constructor and prototype keys are refused in any JSON body (a record of metrics, a parameter)', async () => {
    const metrics = await call('POST', `/v1/runs/${runs[4]!.id}/finish`, { ...finishBody(Date.now() - 60_000, 10), metrics: { constructor: 1 } });
    expect(metrics.status).toBe(400);
    expect(metrics.body.error.issues).toEqual([{ path: 'metrics.constructor', code: 'reserved_name', message: expect.any(String) }]);
    const parameter = await call('POST', '/v1/campaigns', { ...IMPORT_SPEC, parameters: { prototype: [1, 2] } });
    expect(parameter.status).toBe(400);
    expect(parameter.body.error.issues).toEqual([{ path: 'parameters.prototype', code: 'reserved_name', message: expect.any(String) }]);
  });

  test('strategy.objectives: [time, time] is refused at its second entry', async () => {
    const res = await call('POST', '/v1/campaigns', { name: 'twice', cluster: 'local', run: 'true', parameters: { n: [1, 2] }, strategy: { kind: 'adaptive', objectives: ['time', 'time'] } });
    expect(res.status).toBe(400);
    expect(res.body.error.issues).toEqual([{ path: 'strategy.objectives[1]', code: 'duplicate_value', message: expect.stringContaining('two different objectives') }]);
    expect((await call('GET', `/v1/campaigns/${campaignId}/results?objectives=time,time`)).status).toBe(400);
  });
});
