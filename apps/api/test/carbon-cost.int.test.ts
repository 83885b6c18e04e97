// Carbon and cost (issue 15 §4) through the API: a cluster with a grid intensity (a constant and a
// series), a PUE and a price; an import campaign measured there; each run's gCO2e and cost with
// what they were computed with; the results per configuration, and the Pareto front on (time,
// carbon) beside the default (time, energy).
import { generateKeyPairSync } from 'node:crypto';
import { findClusterByName, putCarbonIntensity } from '@erg/db';
import { refreshStaleRunEnergy } from '@erg/results';
import { apiRequests, computeDueEnergy, startTestApi, type TestApi } from './helpers';

const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'sec1', format: 'pem' }).toString();
const CLUSTER = { host: '127.0.0.1', port: 2222, user: 'root', privateKey: key, hostKeySha256: 'SHA256:' + 'A'.repeat(43), workDir: '/var/lib/erg-test' };
const KWH = 3.6e6;

describe('carbon and cost of runs and configurations (Postgres + Redis)', () => {
  let t: TestApi;

  const { call, ok } = apiRequests(() => t);
  const issuePaths = (body: { error: { issues?: { path: string }[] } }) => (body.error.issues ?? []).map((i) => i.path).sort();

  /** One import run on node n1: `watts` of GPU power over [startMs, startMs + seconds], samples bracketing it. */
  async function measure(runId: string, startMs: number, seconds: number, watts: number, seq = 0) {
    const ts = Array.from({ length: seconds * 10 + 21 }, (_, i) => startMs - 1000 + i * 100);
    await ok('POST', `/v1/runs/${runId}/telemetry`, { node: 'n1', seq, samples: [{ sensor: 'gpu0.power', t: ts, v: ts.map(() => watts) }] });
    if (seq > 0) return;
    await ok('POST', `/v1/runs/${runId}/finish`, { startedAt: new Date(startMs).toISOString(), endedAt: new Date(startMs + seconds * 1000).toISOString() });
    // The scheduler computes a finished run's energy (called here as its job would).
    await computeDueEnergy(t.db);
  }

  beforeAll(async () => {
    t = await startTestApi();
  });
  afterAll(async () => {
    await t.close();
  });

  test('a cluster body\'s carbon and price are validated with their paths and say what fits', async () => {
    const bad = await call('POST', '/v1/clusters', { ...CLUSTER, name: 'bad', carbon: { gCO2ePerKWh: -3, pue: 0.8 }, price: { perKWh: 0.2, currency: 'euro' } });
    expect(bad.status).toBe(400);
    expect(issuePaths(bad.body)).toEqual(['carbon.gCO2ePerKWh', 'carbon.pue', 'price.currency']);
    expect(bad.body.error.message).toContain('carbon.pue: must be at least 1');
    const noRate = await call('PUT', '/v1/clusters/bad', { ...CLUSTER, price: { currency: 'EUR' } });
    expect(noRate.status).toBe(400);
    expect(noRate.body.error.issues).toEqual([expect.objectContaining({ path: 'price', message: expect.stringContaining('give perNodeHour, perKWh or both') })]);
  });

  test('carbon intensity series: validated, merged within its span, replaced on request, bounded', async () => {
    await ok('POST', '/v1/clusters', { ...CLUSTER, name: 'series' });
    const at = (h: number) => new Date(Date.UTC(2026, 11, 4, h)).toISOString();
    const put = (body: unknown) => call('PUT', '/v1/clusters/series/carbon-intensity', body);
    const bad = await put({ points: [{ t: at(0), gCO2ePerKWh: 1 }, { t: Date.UTC(2026, 11, 4) / 1000, gCO2ePerKWh: 1 }, { t: at(0), gCO2ePerKWh: 9000 }] });
    expect(bad.status).toBe(400);
    expect(issuePaths(bad.body)).toEqual(['points[1].t', 'points[2].gCO2ePerKWh']);
    const dup = await put({ points: [{ t: at(0), gCO2ePerKWh: 1 }, { t: Date.UTC(2026, 11, 4), gCO2ePerKWh: 2 }] });
    expect(dup.body.error.issues).toEqual([expect.objectContaining({ path: 'points[1].t', code: 'duplicate_value' })]);
    expect((await put({ points: Array.from({ length: 10_001 }, (_, i) => ({ t: Date.UTC(2026, 0, 1) + i * 3_600_000, gCO2ePerKWh: 1 })) })).status).toBe(400);
    expect((await call('PUT', '/v1/clusters/nowhere/carbon-intensity', { points: [] })).status).toBe(404);

    // 00:00-05:00; then 02:00-03:00 again with other values: the points in that span are replaced, the rest kept.
    expect(await ok('PUT', '/v1/clusters/series/carbon-intensity', { points: [0, 1, 2, 3, 4, 5].map((h) => ({ t: at(h), gCO2ePerKWh: 100 + h })) })).toEqual({
      cluster: 'series', stored: 6, replaced: 0, series: { points: 6, from: at(0), to: at(5) },
    });
    const merged = await ok('PUT', '/v1/clusters/series/carbon-intensity', { points: [{ t: Date.UTC(2026, 11, 4, 3), gCO2ePerKWh: 33 }, { t: at(2), gCO2ePerKWh: 22 }] });
    expect(merged).toMatchObject({ stored: 2, replaced: 2, series: { points: 6 } });
    const read = await ok('GET', `/v1/clusters/series/carbon-intensity?from=${encodeURIComponent(at(1))}&to=${encodeURIComponent(at(3))}`);
    expect(read).toEqual({
      cluster: 'series', series: { points: 6, from: at(0), to: at(5) }, truncated: false,
      points: [{ t: at(1), gCO2ePerKWh: 101 }, { t: at(2), gCO2ePerKWh: 22 }, { t: at(3), gCO2ePerKWh: 33 }],
    });
    expect((await ok('GET', '/v1/clusters/series')).carbonIntensity).toEqual({ points: 6, from: at(0), to: at(5) });

    // Bounded per cluster: a write that would go over the bound changes nothing.
    const cluster = (await findClusterByName(t.db, 'series'))!;
    expect(await putCarbonIntensity(t.db, cluster.id, [{ tMs: Date.UTC(2026, 11, 5), gCO2ePerKWh: 1 }], { replace: false, maxPoints: 6 })).toEqual({ ok: false, wouldHold: 7 });
    expect((await ok('GET', '/v1/clusters/series')).carbonIntensity.points).toBe(6);

    const cleared = await ok('PUT', '/v1/clusters/series/carbon-intensity', { points: [], replace: true });
    expect(cleared).toEqual({ cluster: 'series', stored: 0, replaced: 6, series: { points: 0, from: null, to: null } });
  });

  test('an import campaign measured on a cluster gets its carbon and cost; results rank configurations on (time, carbon)', async () => {
    const T = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
    const cluster = await ok('POST', '/v1/clusters', {
      ...CLUSTER, name: 'grid', carbon: { gCO2ePerKWh: 400, pue: 1.5 }, price: { perNodeHour: 2, perKWh: 0.25, currency: 'EUR' },
    });
    expect(cluster).toMatchObject({ carbon: { gCO2ePerKWh: 400, pue: 1.5 }, price: { perNodeHour: 2, perKWh: 0.25, currency: 'EUR' }, carbonIntensity: { points: 0 } });
    // The grid: 400 until T+100 s, a clean 50 until T+200 s, 400 again (holding until T+300 s).
    await ok('PUT', '/v1/clusters/grid/carbon-intensity', {
      points: [{ t: T - 3_600_000, gCO2ePerKWh: 400 }, { t: new Date(T + 100_000).toISOString(), gCO2ePerKWh: 50 }, { t: T + 200_000, gCO2ePerKWh: 400 }],
    });

    const unknown = await call('POST', '/v1/campaigns', { name: 'elsewhere', execution: 'import', cluster: 'nowhere', repetitions: 1, parameters: { n: [1] } });
    expect(unknown.status).toBe(422);
    expect(unknown.body.error.code).toBe('ERG_UNKNOWN_CLUSTER');

    const campaign = await ok('POST', '/v1/campaigns', { name: 'grid-study', execution: 'import', cluster: 'grid', repetitions: 2, parameters: { n: [1, 2] } });
    expect(campaign.cluster).toBeNull(); // measured there, never submitted there
    const runOf = (n: number, rep: number) => campaign.runs.find((r: { configurationKey: string; repetition: number }) => r.configurationKey === `n=${n}` && r.repetition === rep).id as string;
    // n=1: 10 s at 300 W (3000 J), fast, on the dirty grid (and half on the clean one); n=2: 20 s at 200 W (4000 J), slower, in the clean hour.
    await measure(runOf(1, 1), T, 10, 300);
    await measure(runOf(1, 2), T + 95_000, 10, 300);
    await measure(runOf(2, 1), T + 110_000, 20, 200);
    await measure(runOf(2, 2), T + 140_000, 20, 200);

    const first = await ok('GET', `/v1/runs/${runOf(1, 1)}/energy`);
    expect(first.energyJ).toBeCloseTo(3000, 6);
    expect(first.carbon).toMatchObject({ energyKWh: expect.closeTo(3000 / KWH, 12), pue: 1.5, gCO2ePerKWh: 400, source: 'series', series: { points: 1, coverage: 1 } });
    expect(first.carbon.gCO2e).toBeCloseTo((3000 / KWH) * 1.5 * 400, 9);
    // Node-hours of the workload window only: 1 node × 10 s.
    expect(first.cost).toMatchObject({ currency: 'EUR', nodes: 1, nodeHours: expect.closeTo(10 / 3600, 12), perNodeHour: 2, perKWh: 0.25, pue: 1.5 });
    expect(first.cost.total).toBeCloseTo((10 / 3600) * 2 + (3000 / KWH) * 1.5 * 0.25, 12);
    // Half its window at 400, half at 50: the time-weighted mean.
    const across = await ok('GET', `/v1/runs/${runOf(1, 2)}/energy`);
    expect(across.carbon).toMatchObject({ gCO2ePerKWh: expect.closeTo(225, 9), series: { points: 2, firstMs: T - 3_600_000, lastMs: T + 100_000, coverage: 1 } });

    const carbon = { n1: ((3000 / KWH) * 1.5 * (400 + 225)) / 2, n2: (4000 / KWH) * 1.5 * 50 };
    const results = await ok('GET', `/v1/campaigns/${campaign.id}/results`);
    expect(results.objectives).toEqual(['time', 'energy']);
    expect(results.currency).toBe('EUR');
    expect(results.paretoFront).toEqual(['n=1']); // faster and less energy
    const [c1, c2] = results.configurations;
    expect(c1.carbon).toMatchObject({ n: 2, mean: expect.closeTo(carbon.n1, 9) });
    expect(c2.carbon).toMatchObject({ n: 2, mean: expect.closeTo(carbon.n2, 9), std: expect.closeTo(0, 9) });
    expect(c1.cost).toMatchObject({ n: 2, mean: expect.closeTo((10 / 3600) * 2 + (3000 / KWH) * 1.5 * 0.25, 9) });
    expect(c2.cost.mean).toBeCloseTo((20 / 3600) * 2 + (4000 / KWH) * 1.5 * 0.25, 9);
    expect(results.best).toEqual({ time: 'n=1', energy: 'n=1', edp: 'n=1', carbon: 'n=2', cost: 'n=1' });

    const onCarbon = await ok('GET', `/v1/campaigns/${campaign.id}/results?objectives=time,carbon`);
    expect(onCarbon.objectives).toEqual(['time', 'carbon']);
    expect(onCarbon.paretoFront).toEqual(['n=1', 'n=2']);
    expect(onCarbon.configurations.map((c: { paretoOptimal: boolean }) => c.paretoOptimal)).toEqual([true, true]);
    // Only the front (and the claims' places on it) changed: the rest is the default answer.
    const { paretoFront: _a, objectives: _b, configurations: cs, claims: onCarbonClaims, ...rest } = onCarbon;
    const { paretoFront: _c, objectives: _d, configurations: ds, claims, ...restDefault } = results;
    expect(rest).toEqual(restDefault);
    // The claims' ranks are the same; their Pareto memberships follow the front's objectives.
    expect(onCarbonClaims.ranks).toEqual(claims.ranks);
    expect(claims.pareto.map((p: { status: string }) => p.status)).toEqual(['front', 'dominated']);
    expect(onCarbonClaims.pareto.map((p: { status: string; comparisons: string[] }) => [p.status, p.comparisons])).toEqual([
      ['front', ['time:n=1|n=2', 'carbon:n=1|n=2']],
      ['front', ['time:n=1|n=2', 'carbon:n=1|n=2']],
    ]);
    expect(cs.map((c: { paretoOptimal: boolean }) => ({ ...c, paretoOptimal: false }))).toEqual(ds.map((c: { paretoOptimal: boolean }) => ({ ...c, paretoOptimal: false })));
    expect((await ok('GET', `/v1/campaigns/${campaign.id}/results?objectives=cost,carbon`)).paretoFront).toEqual(['n=1', 'n=2']);

    for (const bad of ['time,co2', 'time', 'carbon,carbon', 'time,energy,cost']) {
      const res = await call('GET', `/v1/campaigns/${campaign.id}/results?objectives=${bad}`);
      expect(res.status).toBe(400);
      expect(res.body.error.issues).toEqual([expect.objectContaining({ path: 'objectives', message: expect.stringContaining('two distinct objectives separated by a comma') })]);
    }

    // A new price applies to figures computed from now on: stored ones keep what they were computed with…
    await ok('PUT', '/v1/clusters/grid', { ...CLUSTER, carbon: { gCO2ePerKWh: 400, pue: 1.5 }, price: { perNodeHour: 10, currency: 'USD' } });
    expect((await ok('GET', `/v1/runs/${runOf(1, 1)}/energy`)).cost).toEqual(first.cost);
    // …until the run's energy is computed again (late telemetry): then with the settings of that moment.
    await measure(runOf(1, 1), T, 10, 300, 1);
    // The scheduler recomputes late telemetry (here called as its tick would).
    expect(await refreshStaleRunEnergy(t.db)).toEqual([runOf(1, 1)]);
    const again = await ok('GET', `/v1/runs/${runOf(1, 1)}/energy`);
    expect(again.cost).toMatchObject({ currency: 'USD', perNodeHour: 10, perKWh: null, energyCost: null, total: expect.closeTo((10 / 3600) * 10, 12) });
    // The results count costs in one currency, the one most runs' are in: the run priced in USD is left out of the cost.
    const mixed = await ok('GET', `/v1/campaigns/${campaign.id}/results`);
    expect(mixed.currency).toBe('EUR');
    expect(mixed.configurations[0].cost).toMatchObject({ n: 1, mean: expect.closeTo((10 / 3600) * 2 + (3000 / KWH) * 1.5 * 0.25, 9) });
    expect(mixed.configurations[0].timeS.n).toBe(2);
    expect(mixed.runsLeftOut).toEqual([]);
  });

  test('a cluster without settings gives no carbon or cost (null), and results say none is known', async () => {
    await ok('POST', '/v1/clusters', { ...CLUSTER, name: 'plain' });
    const T = Math.floor(Date.now() / 1000) * 1000 - 1_800_000;
    const campaign = await ok('POST', '/v1/campaigns', { name: 'plain', execution: 'import', cluster: 'plain', repetitions: 1, parameters: { n: [1] } });
    await measure(campaign.runs[0].id, T, 5, 100);
    const energy = await ok('GET', `/v1/runs/${campaign.runs[0].id}/energy`);
    expect(energy).toMatchObject({ carbon: null, cost: null });
    const results = await ok('GET', `/v1/campaigns/${campaign.id}/results`);
    expect(results).toMatchObject({ currency: null, best: { carbon: null, cost: null }, objectives: ['time', 'energy'] });
    expect(results.configurations[0].carbon.n).toBe(0);
    const onCost = await ok('GET', `/v1/campaigns/${campaign.id}/results?objectives=time,cost`);
    expect(onCost.paretoFront).toEqual([]);
    expect(onCost.excluded).toEqual([{ key: 'n=1', why: expect.stringContaining('has both a measured time and a cost') }]);
  });
});
