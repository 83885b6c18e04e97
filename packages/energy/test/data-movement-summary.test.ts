import { campaignDataMovement, computeRunDataMovement, EnergyInputError, type NodeTelemetry, type RunDataMovement, type Series } from '../src';
import { CampaignDataMovement, UNMARKED_PHASE } from '@erg/spec';
import { T0 } from './traces';

/** A constant-rate sensor read every 100 ms over [−1 s, 11 s] (ms since T0). */
function rate(sensor: string, bps: number): Series {
  const t: number[] = [];
  const v: number[] = [];
  for (let ms = -1000; ms <= 11_000; ms += 100) {
    t.push(T0 + ms);
    v.push(bps);
  }
  return { sensor, t, v };
}
const node = (series: Series[]): NodeTelemetry => ({ node: 'n1', series, sensors: series.map((s) => ({ sensor: s.sensor, source: 'nvml' })) });
const window = { startMs: T0, endMs: T0 + 10_000 };

/** One 10 s run moving `pcieGBps` GB/s over PCIe (and `c2cGBps` over C2C where given) for `energyJ`. */
function run(energyJ: number, pcieGBps: number, c2cGBps?: number): RunDataMovement {
  const series = [rate('gpu0.pcie_tx', pcieGBps * 1e9), rate('gpu0.util', 90)];
  if (c2cGBps !== undefined) series.push(rate('gpu0.c2c_rx', c2cGBps * 1e9));
  return computeRunDataMovement({ window, nodes: [node(series)], energyJ })!;
}

describe('campaignDataMovement', () => {
  test('per configuration and link kind: bytes, rate and J per GB summarised over its runs', () => {
    const result = campaignDataMovement([
      { key: 'offload', runs: [run(1000, 1, 2), run(1200, 3, 2)] },
      { key: 'resident', runs: [run(800, 0.5)] },
      { key: 'unmeasured', runs: [] },
    ]);
    expect(CampaignDataMovement.parse(result)).toEqual(result);
    expect(result.configurations.map((c) => c.key)).toEqual(['offload', 'resident']);
    const offload = result.configurations[0]!;
    expect(offload.n).toBe(2);
    expect(offload.energyJ.mean).toBeCloseTo(1100, 9);
    expect(offload.kinds.map((k) => k.kind)).toEqual(['pcie', 'c2c']);
    const pcie = offload.kinds[0]!;
    // 10 GB and 30 GB over the 10 s window.
    expect(pcie.bytes.n).toBe(2);
    expect(pcie.bytes.mean).toBeCloseTo(20e9, 0);
    expect(pcie.bytes.min).toBeCloseTo(10e9, 0);
    expect(pcie.bytes.max).toBeCloseTo(30e9, 0);
    expect(pcie.meanRateBps.mean).toBeCloseTo(2e9, 0);
    // 1000 J / 10 GB and 1200 J / 30 GB.
    expect(pcie.joulesPerGB.mean).toBeCloseTo((100 + 40) / 2, 6);
    expect(pcie.joulesPerGB.ci95![0]).toBeLessThan(40);
    // The GPU was busy all along, and its links always moved more than the threshold.
    expect(offload.overlapFraction).toMatchObject({ n: 2, mean: 1 });
    expect(offload.phases).toBeNull();
    expect(result.configurations[1]!.kinds.map((k) => k.kind)).toEqual(['pcie']);
  });

  test('a kind counts only over the runs that measured it', () => {
    const [c] = campaignDataMovement([{ key: 'mixed', runs: [run(1000, 1, 4), run(1000, 1)] }]).configurations;
    const c2c = c!.kinds.find((k) => k.kind === 'c2c')!;
    expect(c2c.bytes.n).toBe(1);
    expect(c2c.bytes.mean).toBeCloseTo(40e9, 0);
    expect(c!.kinds.find((k) => k.kind === 'pcie')!.bytes.n).toBe(2);
  });

  test('per phase: bytes and energy per run, 0 where a run did not have the phase, (unmarked) last', () => {
    const marks = (name: string) => [
      { node: 'n1', kind: 'begin' as const, name, t: T0 + 2000 },
      { node: 'n1', kind: 'end' as const, name, t: T0 + 6000 },
    ];
    const phases = (name: string, energyJ: number) => ({
      window, energyJ, timeS: 10, method: 'sampled' as const, nodes: 1,
      phases: [{ name, energyJ: energyJ * 0.4, selfEnergyJ: energyJ * 0.4, timeS: 4, meanPowerW: (energyJ * 0.4) / 4, occurrences: 1, nodes: ['n1'], depth: 0, uncertaintyJ: 0, share: 0.4 }],
      unmarked: { energyJ: energyJ * 0.6, timeS: 6 },
    });
    const withPhase = (name: string, energyJ: number): RunDataMovement =>
      computeRunDataMovement({ window, nodes: [node([rate('gpu0.pcie_tx', 1e9)])], energyJ, marks: marks(name), phases: phases(name, energyJ) as never })!;
    const [c] = campaignDataMovement([{ key: 'k', runs: [withPhase('offload', 1000), withPhase('offload', 2000), withPhase('other', 1000)] }]).configurations;
    expect(c!.phases!.map((p) => p.name)).toEqual(['offload', 'other', UNMARKED_PHASE]);
    const offload = c!.phases![0]!;
    // 4 GB in each of the two runs that had it, 0 in the third.
    expect(offload.bytes.pcie!.n).toBe(3);
    expect(offload.bytes.pcie!.mean).toBeCloseTo(8e9 / 3, 0);
    expect(offload.energyJ.mean).toBeCloseTo((400 + 800 + 0) / 3, 6);
    expect(offload.timeS.mean).toBeCloseTo(8 / 3, 9);
    const unmarked = c!.phases!.at(-1)!;
    expect(unmarked.bytes.pcie!.mean).toBeCloseTo(6e9, 0);
  });

  test('duplicate keys are refused', () => {
    expect(() => campaignDataMovement([{ key: 'a', runs: [] }, { key: 'a', runs: [] }])).toThrow(EnergyInputError);
  });
});
