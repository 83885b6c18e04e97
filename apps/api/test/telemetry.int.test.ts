import { gzipSync } from 'node:zlib';
import { issueRunToken, readRunSensors, telemetrySummary } from '@erg/db';
import { refreshStaleRunEnergy } from '@erg/results';
import { computeDueEnergy, startTestApi, type TestApi } from './helpers';

/** Import campaigns need no cluster: their runs take telemetry and POST /finish. */
const IMPORT_SPEC = {
  name: 'imported', execution: 'import', repetitions: 3,
  parameters: { clock: [1000, 1980] },
  metrics: [{ name: 'steps', regex: 'step=([0-9]+)', work: true }],
  // The ingest tests below measure runs[0..2] as they need; the results test then relies on those
  // being repetitions of clock=1000, as the old (configuration-major) order placed them.
  design: { order: 'configuration-major' },
};

describe('telemetry ingest, energy and results (Postgres + Redis)', () => {
  let t: TestApi;
  let runs: { id: string; configurationKey: string; repetition: number }[];
  let campaignId: string;

  async function call(method: string, url: string, body?: unknown, headers: Record<string, string> = {}, token = t.token) {
    const res = await t.app.inject({
      method: method as 'POST', url, headers: { authorization: `Bearer ${token}`, ...headers },
      ...(body === undefined ? {} : { payload: body as string }),
    });
    return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : null };
  }

  /** A constant-power trace at 10 Hz from `fromMs` for `seconds`, as one columnar batch. */
  function trace(fromMs: number, seconds: number, watts: number, sensor = 'cpu0.power') {
    const t = Array.from({ length: seconds * 10 + 1 }, (_, i) => fromMs + i * 100);
    return { sensor, t, v: t.map(() => watts) };
  }

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

  test('a columnar batch is stored; sending it again changes nothing', async () => {
    const start = Date.now() - 60_000;
    const batch = { node: 'n1', seq: 0, samples: [trace(start, 10, 100)], sensors: [{ sensor: 'cpu0.power', source: 'import', unit: 'W' }] };
    const first = await call('POST', `/v1/runs/${runs[0]!.id}/telemetry`, batch);
    expect(first).toEqual({ status: 200, body: { accepted: 101, duplicate: false } });
    const again = await call('POST', `/v1/runs/${runs[0]!.id}/telemetry`, batch);
    expect(again).toEqual({ status: 200, body: { accepted: 0, duplicate: true } });
    const stored = await telemetrySummary(t.db, runs[0]!.id);
    expect(stored.reduce((n, s) => n + s.samples, 0)).toBe(101);
  });

  test('row-form samples and gzip bodies are accepted', async () => {
    const now = Date.now() - 30_000;
    const rows = { node: 'n1', seq: 1, samples: [{ sensor: 'gpu0.power', t: now, v: 250.5 }, { sensor: 'gpu0.power', t: now + 100, v: 251 }] };
    expect((await call('POST', `/v1/runs/${runs[1]!.id}/telemetry`, rows)).body).toEqual({ accepted: 2, duplicate: false });
    const gz = gzipSync(JSON.stringify({ ...rows, seq: 2, samples: rows.samples.map((s) => ({ ...s, t: s.t + 1000 })) }));
    const res = await t.app.inject({
      method: 'POST', url: `/v1/runs/${runs[1]!.id}/telemetry`, payload: gz,
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ accepted: 2, duplicate: false });
  });

  test('insane samples are refused with the path of each, and nothing of the batch is stored', async () => {
    const now = Date.now() - 10_000;
    const bad = {
      node: 'n9', seq: 0,
      samples: [
        { sensor: 'gpu0.power', t: [now, now + 100, now + 200], v: [100, -5, 120] },
        { sensor: 'cpu0.util', t: [now], v: [150] },
        { sensor: 'gpu1.power', t: [1e9], v: [10] },
      ],
    };
    const res = await call('POST', `/v1/runs/${runs[2]!.id}/telemetry`, bad);
    expect(res.status).toBe(400);
    const paths = res.body.error.issues.map((i: { path: string }) => i.path);
    expect(paths).toEqual(['samples[0].v[1]', 'samples[1].v[0]', 'samples[2].t[0]']);
    expect(res.body.error.issues[0].message).toMatch(/negative/);
    const stored = await telemetrySummary(t.db, runs[2]!.id);
    expect(stored.filter((s) => s.node === 'n9')).toEqual([]);
    const nan = await call('POST', `/v1/runs/${runs[2]!.id}/telemetry`, '{"node":"n9","seq":1,"samples":[{"sensor":"bogus","t":1,"v":1}]}', { 'content-type': 'application/json' });
    expect(nan.status).toBe(400);
    expect(nan.body.error.issues[0].path).toBe('samples[0].sensor');
  });

  test('a run token writes its own run\'s telemetry and nothing else', async () => {
    const token = await issueRunToken(t.db, runs[3]!.id);
    const batch = { node: 'n1', seq: 0, samples: [trace(Date.now() - 5000, 1, 50)] };
    expect((await call('POST', `/v1/runs/${runs[3]!.id}/telemetry`, batch, {}, token)).status).toBe(200);
    expect((await call('POST', `/v1/runs/${runs[4]!.id}/telemetry`, batch, {}, token)).status).toBe(403);
    expect((await call('GET', `/v1/runs/${runs[3]!.id}`, undefined, {}, token)).status).toBe(403);
    expect((await call('GET', `/v1/campaigns`, undefined, {}, token)).status).toBe(403);
    expect((await call('POST', `/v1/runs/${runs[3]!.id}/telemetry`, batch, {}, 'ergr_forged')).status).toBe(401);
  });

  test('import: telemetry + finish give time, energy, EDP and J per unit of work', async () => {
    const run = runs[5]!;
    const start = Date.now() - 120_000;
    // 100 W for the 10 s window, with samples reaching 1 s beyond each edge (clipped away).
    const res = await call('POST', `/v1/runs/${run.id}/telemetry`, { node: 'n1', seq: 0, samples: [trace(start - 1000, 12, 100)] });
    expect(res.status).toBe(200);
    const early = await call('GET', `/v1/runs/${run.id}/energy`);
    expect(early.status).toBe(409);
    const finished = await call('POST', `/v1/runs/${run.id}/finish`, {
      startedAt: new Date(start).toISOString(), endedAt: new Date(start + 10_000).toISOString(), metrics: { steps: 50 },
    });
    expect(finished.status).toBe(202);
    expect(finished.body).toMatchObject({ state: 'completed', timeS: 10 });
    // The scheduler computes the finished run's energy (called here as its job would).
    await computeDueEnergy(t.db);
    const energy = (await call('GET', `/v1/runs/${run.id}/energy`)).body;
    expect(energy.timeS).toBeCloseTo(10, 6);
    expect(energy.energyJ).toBeCloseTo(1000, 3);
    expect(energy.avgPowerW).toBeCloseTo(100, 3);
    expect(energy.edpJs).toBeCloseTo(10_000, 1);
    expect(energy.ed2pJs2).toBeCloseTo(100_000, 0);
    expect(energy.coverage).toBeCloseTo(1, 6);
    expect(energy.method).toBe('integrated');
    expect(energy.components).toEqual({ cpu: expect.closeTo(1000, 3) });
    expect(energy.energyPerUnit).toEqual({ steps: expect.closeTo(20, 3) });
    // Finishing twice is refused; a second batch after the end marks the figures stale until the
    // scheduler's recompute (called here as its tick would), which takes it into account.
    expect((await call('POST', `/v1/runs/${run.id}/finish`, { startedAt: new Date(start).toISOString(), endedAt: new Date(start + 1).toISOString() })).status).toBe(409);
    const late = await call('POST', `/v1/runs/${run.id}/telemetry`, { node: 'n2', seq: 0, samples: [trace(start - 1000, 12, 50)] });
    expect(late.status).toBe(200);
    expect((await call('GET', `/v1/runs/${run.id}/energy`)).body).toMatchObject({ stale: true, energyJ: expect.closeTo(1000, 3) });
    expect(await refreshStaleRunEnergy(t.db)).toEqual([run.id]);
    const after = (await call('GET', `/v1/runs/${run.id}/energy`)).body;
    expect(after.stale).toBe(false);
    expect(after.energyJ).toBeCloseTo(1500, 3);
    expect(after.nodes.map((n: { node: string }) => n.node).sort()).toEqual(['n1', 'n2']);
  });

  test('a sensor\'s declared scope is stored, and its energy counts under that scope (a GH200 counter sent as gpu0.energy is the module\'s)', async () => {
    const created = await call('POST', '/v1/campaigns', { ...IMPORT_SPEC, name: 'scoped', repetitions: 1, parameters: {} });
    const run = created.body.runs[0] as { id: string };
    const start = Date.now() - 120_000;
    const ts = Array.from({ length: 121 }, (_, i) => start - 1000 + i * 100);
    const batch = {
      node: 'gh', seq: 0,
      samples: [
        { sensor: 'gpu0.energy', t: ts, v: ts.map((x) => 1e6 + (450 * (x - start)) / 1000) },
        { sensor: 'gpu0.power', t: ts, v: ts.map(() => 300) },
      ],
      sensors: [
        { sensor: 'gpu0.energy', source: 'nvml', unit: 'J', scope: 'module' },
        { sensor: 'gpu0.power', source: 'nvml', unit: 'W', scope: 'gpu' },
      ],
    };
    expect((await call('POST', `/v1/runs/${run.id}/telemetry`, batch)).status).toBe(200);
    expect((await readRunSensors(t.db, run.id)).map((s) => [s.sensor, s.scope])).toEqual([['gpu0.energy', 'module'], ['gpu0.power', 'gpu']]);
    await call('POST', `/v1/runs/${run.id}/finish`, { startedAt: new Date(start).toISOString(), endedAt: new Date(start + 10_000).toISOString() });
    await computeDueEnergy(t.db);
    const energy = (await call('GET', `/v1/runs/${run.id}/energy`)).body;
    expect(energy.nodes[0].sensorsUsed).toEqual(['module0.energy']);
    expect(energy.energyJ).toBeCloseTo(4500, 3);
    expect(energy.method).toBe('counter');
    expect(energy.breakdown.gpu).toBeCloseTo(3000, 3);
    expect(energy.warnings).toContain('gh: gpu0.energy covers the module (its source says so); counted as module0.energy');
  });

  test('energy does not depend on how samples were split into batches: slow meters and rarely read counters, one batch or one sample per batch', async () => {
    // A hwmon meter averaging over 90 s and an energy counter read as rarely: the samples that
    // bracket the window lie 80 s before its start and 70 s after its end.
    const start = Date.now() - 1_800_000;
    const ts = [-80, 10, 100, 190, 280, 370].map((s) => start + s * 1000);
    const power = ts.map((_, i) => 200 + 20 * i);
    const counter = ts.map((x) => 5e6 + (400 * (x - start)) / 1000);
    const energyOf = async (batches: { seq: number; samples: { sensor: string; t: number[]; v: number[] }[] }[]) => {
      const created = await call('POST', '/v1/campaigns', { ...IMPORT_SPEC, name: 'split', repetitions: 1, parameters: {} });
      const run = created.body.runs[0] as { id: string };
      for (const b of batches) expect((await call('POST', `/v1/runs/${run.id}/telemetry`, { node: 'n', ...b })).status).toBe(200);
      await call('POST', `/v1/runs/${run.id}/finish`, { startedAt: new Date(start).toISOString(), endedAt: new Date(start + 300_000).toISOString() });
      await computeDueEnergy(t.db);
      return (await call('GET', `/v1/runs/${run.id}/energy`)).body;
    };
    const whole = await energyOf([{ seq: 0, samples: [{ sensor: 'module0.power', t: ts, v: power }, { sensor: 'gpu0.energy', t: ts, v: counter }] }]);
    const split = await energyOf(ts.map((t, i) => ({ seq: i, samples: [{ sensor: 'module0.power', t: [t], v: [power[i]!] }, { sensor: 'gpu0.energy', t: [t], v: [counter[i]!] }] })));
    expect(whole.coverage).toBeGreaterThan(0);
    expect(split.energyJ).toBeCloseTo(whole.energyJ, 6);
    expect(split.breakdown).toEqual(whole.breakdown);
    expect(split.coverage).toBeCloseTo(whole.coverage, 9);
    expect(split.method).toBe(whole.method);
    expect(split.warnings).toEqual(whole.warnings);
  });

  test('an empty batch is refused with 400 and does not use up its sequence number', async () => {
    const run = runs[4]!;
    const empty = await call('POST', `/v1/runs/${run.id}/telemetry`, { node: 'e', seq: 7, samples: [] });
    expect(empty.status).toBe(400);
    expect(empty.body.error.issues[0]).toMatchObject({ path: 'samples' });
    const real = await call('POST', `/v1/runs/${run.id}/telemetry`, { node: 'e', seq: 7, samples: [trace(Date.now() - 5000, 1, 70)] });
    expect(real).toEqual({ status: 200, body: { accepted: 11, duplicate: false } });
  });

  test('a sensor a batch declares but never samples is a warning and lowers coverage', async () => {
    const created = await call('POST', '/v1/campaigns', { ...IMPORT_SPEC, name: 'silent-sensor', repetitions: 1, parameters: {} });
    const run = created.body.runs[0] as { id: string };
    const start = Date.now() - 200_000;
    const batch = {
      node: 'g', seq: 0, samples: [trace(start - 1000, 12, 300, 'gpu0.power')],
      sensors: [{ sensor: 'gpu0.power', source: 'nvml', unit: 'W' }, { sensor: 'gpu1.power', source: 'nvml', unit: 'W' }],
    };
    expect((await call('POST', `/v1/runs/${run.id}/telemetry`, batch)).status).toBe(200);
    await call('POST', `/v1/runs/${run.id}/finish`, { startedAt: new Date(start).toISOString(), endedAt: new Date(start + 10_000).toISOString() });
    await computeDueEnergy(t.db);
    const energy = (await call('GET', `/v1/runs/${run.id}/energy`)).body;
    expect(energy.coverage).toBe(0);
    expect(energy.warnings).toEqual(expect.arrayContaining([expect.stringMatching(/^g: gpu1 .*unknown \(not 0\), coverage 0/)]));
    expect(energy.energyJ).toBeCloseTo(3000, 3);
  });

  test('downsampled series keep their peak', async () => {
    const run = runs[2]!;
    const start = Date.now() - 200_000;
    const t0 = Array.from({ length: 5000 }, (_, i) => start + i * 10);
    const v = t0.map((_, i) => (i === 3217 ? 900 : 100 + (i % 7)));
    expect((await call('POST', `/v1/runs/${run.id}/telemetry`, { node: 'n1', seq: 5, samples: [{ sensor: 'gpu0.power', t: t0, v }] })).status).toBe(200);
    const res = await call('GET', `/v1/runs/${run.id}/telemetry?sensor=gpu0.power&maxPoints=100`);
    const s = res.body.series[0];
    expect(s.samples).toBe(5000);
    expect(s.t.length).toBeLessThanOrEqual(101);
    expect(Math.max(...s.v)).toBe(900);
  });

  test('campaign results: statistics, Pareto front, best and trade-off over finished runs', async () => {
    // Finish every remaining run of the import campaign: clock=1000 slower and frugal, clock=1980 faster and costlier.
    const byKey = (k: string) => runs.filter((r) => r.configurationKey === k);
    const plan: [string, number, number][] = [['clock=1000', 12, 80], ['clock=1980', 8, 150]];
    let seq = 100;
    for (const [key, seconds, watts] of plan) {
      for (const [i, run] of byKey(key).entries()) {
        const existing = await call('GET', `/v1/runs/${run.id}`);
        if (existing.body.state !== 'pending') continue;
        const start = Date.now() - 600_000 + i * 30_000;
        const s = seconds + i * 0.1;
        await call('POST', `/v1/runs/${run.id}/telemetry`, { node: 'x', seq: seq++, samples: [trace(start - 1000, Math.ceil(s) + 2, watts)] });
        const fin = await call('POST', `/v1/runs/${run.id}/finish`, { startedAt: new Date(start).toISOString(), endedAt: new Date(start + s * 1000).toISOString(), metrics: { steps: 100 } });
        expect(fin.status).toBe(202);
      }
    }
    await computeDueEnergy(t.db);
    const res = await call('GET', `/v1/campaigns/${campaignId}/results`);
    expect(res.status).toBe(200);
    const { configurations, paretoFront, best, tradeoff } = res.body;
    expect(configurations).toHaveLength(2);
    const slow = configurations.find((c: { key: string }) => c.key === 'clock=1000');
    expect(slow.n).toBeGreaterThanOrEqual(2);
    expect(slow.timeS.ci95[0]).toBeLessThanOrEqual(slow.timeS.mean);
    expect(slow.timeS.ci95[1]).toBeGreaterThanOrEqual(slow.timeS.mean);
    expect(best.time).toBe('clock=1980');
    expect(paretoFront).toEqual(['clock=1980', 'clock=1000'].filter((k) => configurations.find((c: any) => c.key === k).paretoOptimal));
    expect(tradeoff.fastest).toBe('clock=1980');
    expect(typeof tradeoff.energySavedPct).toBe('number');
  });
});
