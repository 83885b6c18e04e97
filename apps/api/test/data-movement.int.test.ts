// Data movement joined to energy (issue 15 §3) through the API: an import campaign whose runs send
// GPU power, PCIe and C2C rates and GPU utilisation; each run's bytes, J per GB and overlap in
// GET /v1/runs/:id/energy; per configuration in GET /v1/campaigns/:id/results; a late batch that
// adds traffic marks the run stale and, recomputed, changes both.
import { refreshStaleRunEnergy } from '@erg/results';
import { apiRequests, computeDueEnergy, startTestApi, type TestApi } from './helpers';

const SPEC = { name: 'movement', execution: 'import', repetitions: 2, parameters: { offload: ['cpu', 'none'] }, metrics: [] };

describe('data movement per run and per configuration (Postgres + Redis)', () => {
  let t: TestApi;
  const { ok } = apiRequests(() => t);
  const start = Date.now() - 3_600_000;
  /** Readings every 100 ms from 1 s before to 1 s after a 10 s window, each `value` (or `value(ms since start)`). */
  const series = (sensor: string, value: number | ((ms: number) => number), from = -1000, to = 11_000) => {
    const t: number[] = [];
    for (let ms = from; ms <= to; ms += 100) t.push(start + ms);
    return { sensor, t, v: t.map((x) => (typeof value === 'number' ? value : value(x - start))) };
  };

  beforeAll(async () => {
    t = await startTestApi();
  });
  afterAll(async () => {
    await t.close();
  });

  test('bytes per link kind, J per GB and overlap per run and per configuration; a late batch recomputes both', async () => {
    const created = await ok('POST', '/v1/campaigns', SPEC);
    const runs = created.runs as { id: string; configurationKey: string }[];
    const cpu = runs.filter((r) => r.configurationKey.includes('cpu'));
    expect(cpu).toHaveLength(2);
    for (const [i, run] of runs.entries()) {
      const offloads = cpu.includes(run);
      // Offloading runs move 2 GB/s over PCIe and 4 GB/s over C2C at 300 W; the others 0.5 GB/s over PCIe at 250 W.
      const samples = [
        series('gpu0.power', offloads ? 300 : 250),
        series('gpu0.util', 95),
        series('gpu0.pcie_tx', (offloads ? 2e9 : 0.5e9) * (1 + i * 0.01)),
        ...(offloads ? [series('gpu0.c2c_rx', 4e9)] : []),
      ];
      await ok('POST', `/v1/runs/${run.id}/telemetry`, { node: 'n1', seq: 0, samples });
      await ok('POST', `/v1/runs/${run.id}/finish`, { startedAt: new Date(start).toISOString(), endedAt: new Date(start + 10_000).toISOString() });
    }
    // The scheduler computes the finished runs' energy (called here as its job would).
    await computeDueEnergy(t.db);

    const energy = await ok('GET', `/v1/runs/${cpu[0]!.id}/energy`);
    expect(energy.dataMovement.kinds.map((k: { kind: string }) => k.kind)).toEqual(['pcie', 'c2c']);
    const pcie = energy.dataMovement.kinds[0];
    expect(pcie.bytes).toBeCloseTo(20e9 * (1 + runs.indexOf(cpu[0]!) * 0.01), -6);
    expect(pcie.joulesPerGB).toBeCloseTo(energy.energyJ / (pcie.bytes / 1e9), 9);
    expect(energy.dataMovement.overlap.fraction).toBeCloseTo(1, 9);

    const results = await ok('GET', `/v1/campaigns/${created.id}/results`);
    const byKey = new Map<string, { n: number; kinds: { kind: string; bytes: { n: number; mean: number } ; joulesPerGB: { mean: number } }[]; energyJ: { mean: number } }>(
      results.dataMovement.configurations.map((c: { key: string }) => [c.key, c]),
    );
    const offload = byKey.get(cpu[0]!.configurationKey)!;
    const resident = [...byKey.entries()].find(([k]) => k !== cpu[0]!.configurationKey)![1];
    expect(offload.n).toBe(2);
    expect(offload.kinds.map((k) => k.kind)).toEqual(['pcie', 'c2c']);
    expect(resident.kinds.map((k) => k.kind)).toEqual(['pcie']);
    expect(offload.kinds[0]!.bytes.n).toBe(2);
    expect(offload.kinds[1]!.bytes.mean).toBeCloseTo(40e9, -6);
    // Per configuration the energy is the same figure as the results' own.
    const config = results.configurations.find((c: { key: string }) => c.key === cpu[0]!.configurationKey);
    expect(offload.energyJ.mean).toBeCloseTo(config.energyJ.mean, 6);
    expect(resident.kinds[0]!.joulesPerGB.mean).toBeGreaterThan(offload.kinds[0]!.joulesPerGB.mean);

    // A late batch over the finished run: NVLink traffic it had not reported. The figures say they
    // are stale until the scheduler's recompute (called here as its tick would).
    expect(energy.stale).toBe(false);
    await ok('POST', `/v1/runs/${cpu[0]!.id}/telemetry`, { node: 'n1', seq: 1, samples: [series('gpu0.nvlink_tx', 1e9)] });
    expect(await ok('GET', `/v1/runs/${cpu[0]!.id}/energy`)).toMatchObject({ stale: true, dataMovement: { kinds: [{ kind: 'pcie' }, { kind: 'c2c' }] } });
    expect(await refreshStaleRunEnergy(t.db)).toEqual([cpu[0]!.id]);
    const later = await ok('GET', `/v1/runs/${cpu[0]!.id}/energy`);
    expect(later.stale).toBe(false);
    expect(later.dataMovement.kinds.map((k: { kind: string }) => k.kind)).toEqual(['pcie', 'nvlink', 'c2c']);
    const again = await ok('GET', `/v1/campaigns/${created.id}/results`);
    const nvlink = again.dataMovement.configurations.find((c: { key: string }) => c.key === cpu[0]!.configurationKey).kinds.find((k: { kind: string }) => k.kind === 'nvlink');
    expect(nvlink.bytes).toMatchObject({ n: 1, mean: expect.closeTo(10e9, -6) });
  });

  test('a campaign whose nodes measured no data movement has none', async () => {
    const created = await ok('POST', '/v1/campaigns', { ...SPEC, name: 'no-movement', repetitions: 1, parameters: { offload: ['none'] } });
    const run = created.runs[0];
    await ok('POST', `/v1/runs/${run.id}/telemetry`, { node: 'n1', seq: 0, samples: [series('gpu0.power', 200)] });
    await ok('POST', `/v1/runs/${run.id}/finish`, { startedAt: new Date(start).toISOString(), endedAt: new Date(start + 10_000).toISOString() });
    await computeDueEnergy(t.db);
    expect((await ok('GET', `/v1/runs/${run.id}/energy`)).dataMovement).toBeNull();
    expect((await ok('GET', `/v1/campaigns/${created.id}/results`)).dataMovement).toBeNull();
  });
});
