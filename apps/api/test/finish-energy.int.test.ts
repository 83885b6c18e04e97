// Issue 27 §1: POST /v1/runs/{id}/finish closes an imported run and leaves its energy to the
// scheduler: computing it inside the request held the API's event loop for seconds on a run of a
// million marks. The answer is 202 with the run's state; the run is marked for the scheduler
// (run_energy_dirty, in the transaction that finishes it, so no crash can lose the computation)
// and the scheduler is woken (a `refresh-energy` job). The scheduler's processing function,
// called here as its tick or job would, then stores the figures.
import { refreshStaleRunEnergy } from '@erg/results';
import { apiRequests, startTestApi, type TestApi } from './helpers';

describe('POST /v1/runs/{id}/finish delegates the energy to the scheduler', () => {
  let t: TestApi;
  const { call, ok } = apiRequests(() => t);

  beforeAll(async () => {
    t = await startTestApi();
  });
  afterAll(async () => {
    await t?.close();
  });

  test('202 with the run\'s state; the energy appears once the scheduler has computed it', async () => {
    const created = await ok('POST', '/v1/campaigns', { name: 'finish-later', execution: 'import', repetitions: 2, parameters: {}, metrics: [] });
    const [run, bare] = created.runs as { id: string }[];
    const start = Date.now() - 120_000;
    const ts = Array.from({ length: 121 }, (_, i) => start - 1000 + i * 100);
    await ok('POST', `/v1/runs/${run!.id}/telemetry`, { node: 'n1', seq: 0, samples: [{ sensor: 'cpu0.power', t: ts, v: ts.map(() => 100) }] });
    await t.queue.obliterate({ force: true });

    const finished = await call('POST', `/v1/runs/${run!.id}/finish`, { startedAt: new Date(start).toISOString(), endedAt: new Date(start + 10_000).toISOString(), exitCode: 0 });
    expect(finished.status).toBe(202);
    expect(finished.body).toMatchObject({ id: run!.id, state: 'completed', timeS: 10 });
    // The scheduler was asked, and until it has computed them the figures say they are on their way.
    expect(await t.queue.getJob('refresh-energy')).toBeTruthy();
    const pending = await call('GET', `/v1/runs/${run!.id}/energy`);
    expect(pending.status).toBe(409);
    expect(pending.body.error.message).toMatch(/being computed/);
    expect((await call('GET', `/v1/runs/${run!.id}/phases`)).body.error.message).toMatch(/being computed/);

    expect(await refreshStaleRunEnergy(t.db)).toEqual([run!.id]);
    const energy = await ok('GET', `/v1/runs/${run!.id}/energy`);
    expect(energy).toMatchObject({ stale: false, timeS: 10 });
    expect(energy.energyJ).toBeCloseTo(1000, 3);

    // A run finished without telemetry has nothing to compute: nothing waits for the scheduler.
    expect((await call('POST', `/v1/runs/${bare!.id}/finish`, { startedAt: new Date(start).toISOString(), endedAt: new Date(start + 10_000).toISOString() })).status).toBe(202);
    expect((await call('GET', `/v1/runs/${bare!.id}/energy`)).body.error.message).toMatch(/no telemetry/);
    expect(await refreshStaleRunEnergy(t.db)).toEqual([]);
  });
});
