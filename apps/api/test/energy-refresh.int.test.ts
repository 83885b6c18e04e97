// Two recomputes of one run's energy that overlap (two late batches at once, the spool pull beside
// a late push) may finish in either order: the one that read fewer batches must not store last.
import { energyDirtyVersion, findRunEnergy, TelemetryWriter } from '@erg/db';
import { decodeTelemetryBatch } from '@erg/spec';
import { refreshRunEnergy, refreshStaleRunEnergy } from '@erg/results';
import { apiRequests, computeDueEnergy, startTestApi, type TestApi } from './helpers';

describe('refreshRunEnergy under overlapping refreshes (Postgres + Redis)', () => {
  let t: TestApi;
  const { ok } = apiRequests(() => t);
  const start = Date.now() - 3_600_000;
  const power = (sensor: string, watts: number) => {
    const t = Array.from({ length: 121 }, (_, i) => start - 1000 + i * 100);
    return { sensor, t, v: t.map(() => watts) };
  };

  beforeAll(async () => {
    t = await startTestApi();
  });
  afterAll(async () => {
    await t.close();
  });

  test('a refresh that read fewer batches, finishing after one that read more, does not replace its figures', async () => {
    const created = await ok('POST', '/v1/campaigns', { name: 'overlap', execution: 'import', repetitions: 1, parameters: { x: [1] }, metrics: [] });
    const runId = created.runs[0].id as string;
    await ok('POST', `/v1/runs/${runId}/telemetry`, { node: 'n1', seq: 0, samples: [power('gpu0.power', 100)] });
    await ok('POST', `/v1/runs/${runId}/finish`, { startedAt: new Date(start).toISOString(), endedAt: new Date(start + 10_000).toISOString() });
    await computeDueEnergy(t.db);
    expect((await ok('GET', `/v1/runs/${runId}/energy`)).energyJ).toBeCloseTo(1000, 6);

    // The slow refresh has read one batch; meanwhile a late batch (a second GPU) lands and its own
    // refresh stores 2,000 J; only then does the slow one store.
    const slow = refreshRunEnergy(t.db, runId, {
      beforeStore: async () => {
        await ok('POST', `/v1/runs/${runId}/telemetry`, { node: 'n1', seq: 1, samples: [power('gpu1.power', 100)] });
        expect(await refreshStaleRunEnergy(t.db)).toEqual([runId]);
        expect(((await findRunEnergy(t.db, runId))!.result as { energyJ: number }).energyJ).toBeCloseTo(2000, 6);
      },
    });
    expect((await slow)!.energyJ).toBeCloseTo(1000, 6); // what it computed from what it read
    expect(await ok('GET', `/v1/runs/${runId}/energy`)).toMatchObject({ energyJ: expect.closeTo(2000, 6), stale: false });
    // A refresh now reads both batches again and stores the same.
    expect((await refreshRunEnergy(t.db, runId))!.energyJ).toBeCloseTo(2000, 6);
    expect((await ok('GET', `/v1/runs/${runId}/energy`)).energyJ).toBeCloseTo(2000, 6);
  });

  test('a batch stored while a refresh runs keeps the run stale: the next recompute sees it', async () => {
    const created = await ok('POST', '/v1/campaigns', { name: 'during', execution: 'import', repetitions: 1, parameters: { x: [1] }, metrics: [] });
    const runId = created.runs[0].id as string;
    await ok('POST', `/v1/runs/${runId}/telemetry`, { node: 'n1', seq: 0, samples: [power('gpu0.power', 100)] });
    await ok('POST', `/v1/runs/${runId}/finish`, { startedAt: new Date(start).toISOString(), endedAt: new Date(start + 10_000).toISOString() });
    await computeDueEnergy(t.db);
    await ok('POST', `/v1/runs/${runId}/telemetry`, { node: 'n1', seq: 1, samples: [power('gpu1.power', 100)] });
    expect((await ok('GET', `/v1/runs/${runId}/energy`)).stale).toBe(true);
    // The recompute read the first two batches; a third lands before it clears the marker.
    await refreshRunEnergy(t.db, runId, {
      beforeStore: async () => {
        await ok('POST', `/v1/runs/${runId}/telemetry`, { node: 'n1', seq: 2, samples: [power('gpu2.power', 100)] });
      },
    });
    expect(await ok('GET', `/v1/runs/${runId}/energy`)).toMatchObject({ energyJ: expect.closeTo(2000, 6), stale: true });
    expect(await refreshStaleRunEnergy(t.db)).toEqual([runId]);
    expect(await ok('GET', `/v1/runs/${runId}/energy`)).toMatchObject({ energyJ: expect.closeTo(3000, 6), stale: false });
    expect(await refreshStaleRunEnergy(t.db)).toEqual([]);
  });

  test('a late batch is recomputed whatever happens to the request after it: the mark is in the batch\'s transaction', async () => {
    // Written straight through the telemetry writer, as if the API had died before asking anyone.
    const created = await ok('POST', '/v1/campaigns', { name: 'crash', execution: 'import', repetitions: 1, parameters: { x: [1] }, metrics: [] });
    const runId = created.runs[0].id as string;
    await ok('POST', `/v1/runs/${runId}/telemetry`, { node: 'n1', seq: 0, samples: [power('gpu0.power', 100)] });
    await ok('POST', `/v1/runs/${runId}/finish`, { startedAt: new Date(start).toISOString(), endedAt: new Date(start + 10_000).toISOString() });
    await computeDueEnergy(t.db);
    const decoded = decodeTelemetryBatch(JSON.stringify({ node: 'n2', seq: 0, samples: [power('gpu0.power', 50)] }), { minT: 0, maxT: Date.now() + 60_000 });
    if (!decoded.ok) throw new Error(JSON.stringify(decoded.issues));
    await new TelemetryWriter(t.db).write(runId, decoded.batch);
    expect(await refreshStaleRunEnergy(t.db)).toContain(runId);
    expect((await ok('GET', `/v1/runs/${runId}/energy`)).energyJ).toBeCloseTo(1500, 6);
  });

  test('runs not finalized yet are left to their finalization (their marker waits for it)', async () => {
    const created = await ok('POST', '/v1/campaigns', { name: 'open', execution: 'import', repetitions: 1, parameters: { x: [1] }, metrics: [] });
    const runId = created.runs[0].id as string;
    await ok('POST', `/v1/runs/${runId}/telemetry`, { node: 'n1', seq: 0, samples: [power('gpu0.power', 100)] });
    expect(await refreshStaleRunEnergy(t.db)).not.toContain(runId);
    expect(await energyDirtyVersion(t.db, runId)).toBe(1n);
  });
});
