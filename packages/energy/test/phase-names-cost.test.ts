// Issue 27 §1: per-phase figures must cost time linear in the number of phase names. A run with
// 25,000 distinct names made the campaign's per-phase summaries look every name up in every run's
// list of phases (names × phases: quadratic). These tests count the work by structure, not by
// the clock: each phase's `name` is a getter that counts its reads, and a linear computation reads
// each phase a bounded number of times, however many there are.
import { campaignDataMovement, campaignPhases, computeRunDataMovement, type NodeTelemetry, type PhaseMarkInput, type RunDataMovement, type RunPhases, type Series } from '../src';
import type { PhaseDataMovement, PhaseEnergy } from '@erg/spec';
import { T0 } from './traces';

/** Phase names in each run: enough that names × phases (4,000,000) dwarfs any linear count. */
const N = 2000;

/** Reads of every counted `name` so far. */
let reads = 0;
beforeEach(() => {
  reads = 0;
});

/** `p` with its `name` read through a counting getter (enumerable, so spreads and JSON see it as before). */
function counted<T extends { name: string }>(p: T): T {
  const { name, ...rest } = p;
  return Object.defineProperty(rest, 'name', {
    enumerable: true,
    get() {
      reads++;
      return name;
    },
  }) as unknown as T;
}

const names = Array.from({ length: N }, (_, i) => `p${String(i).padStart(5, '0')}`);

/** A run of N phases, phase i with (i + 1) × scale J over 1 s. */
function runPhases(scale: number): RunPhases {
  const phases: PhaseEnergy[] = names.map((name, i) =>
    counted({
      name, occurrences: 1, timeS: 1, selfTimeS: 1, energyJ: (i + 1) * scale, selfEnergyJ: (i + 1) * scale, meanPowerW: (i + 1) * scale,
      share: null, ci95J: 0, selfCi95J: 0, method: 'regression' as const,
    }),
  );
  const energyJ = phases.reduce((s, p) => s + p.energyJ, 0) + 10;
  return {
    timeS: N + 1, energyJ, method: 'regression', resolutionMs: 100, rescale: 1, phases,
    unmarked: { timeS: 1, energyJ: 10, meanPowerW: 10, share: null, ci95J: 0, method: 'regression' }, steps: [], fits: [], warnings: [],
  };
}

/** A run's data movement with N phases, phase i moving (i + 1) GB over PCIe. */
function runMovement(scale: number): RunDataMovement {
  const phases: PhaseDataMovement[] = names.map((name, i) =>
    counted({
      name, timeS: 1, energyJ: (i + 1) * scale,
      kinds: { pcie: { bytes: (i + 1) * 1e9, byDirection: { tx: (i + 1) * 1e9 } } }, selfBytes: { pcie: (i + 1) * 1e9 }, joulesPerGB: { pcie: scale },
    }),
  );
  return { timeS: N, energyJ: N * scale, kinds: [], links: [], overlap: null, phases, warnings: [] };
}

describe('per-phase figures: work linear in the number of phase names', () => {
  test(`campaignPhases over 2 configurations × 2 runs of ${N} phases reads each phase a bounded number of times`, () => {
    const result = campaignPhases(
      [
        { key: 'fast', runs: [runPhases(1), runPhases(1.5)] },
        { key: 'frugal', runs: [runPhases(0.5), runPhases(0.75)] },
      ],
      { time: 'fast', energy: 'frugal' },
    );
    // Every phase summarised, and the comparison over every name (the unmarked time too).
    expect(result.configurations[0]!.phases).toHaveLength(N + 1);
    expect(result.configurations[0]!.phases[N - 1]!).toMatchObject({ name: names[N - 1], energyJ: { n: 2, mean: N * 1.25 } });
    expect(result.comparison!.phases).toHaveLength(N + 1);
    // 4 runs × N phases: a handful of reads each (the quadratic lookup made ~N² per configuration).
    expect(reads).toBeLessThanOrEqual(16 * 4 * N);
  });

  test(`campaignDataMovement over 2 runs of ${N} phases reads each phase a bounded number of times`, () => {
    const [c] = campaignDataMovement([{ key: 'k', runs: [runMovement(1), runMovement(3)] }]).configurations;
    expect(c!.phases).toHaveLength(N);
    const last = c!.phases!.find((p) => p.name === names[N - 1])!;
    expect(last.bytes.pcie).toMatchObject({ n: 2, mean: N * 1e9 });
    expect(last.energyJ).toMatchObject({ n: 2, mean: N * 2 });
    reads = 0;
    campaignDataMovement([{ key: 'k', runs: [runMovement(1), runMovement(3)] }]);
    expect(reads).toBeLessThanOrEqual(16 * 2 * N);
  });

  test(`a run's bytes per phase beside its ${N} phases' energy read each phase's name a bounded number of times`, () => {
    // One link sensor over a 3 s window; N phases one after another, 1 ms each, then unmarked time.
    const t: number[] = [];
    for (let ms = -1000; ms <= 4000; ms += 100) t.push(T0 + ms);
    const pcie: Series = { sensor: 'gpu0.pcie_tx', t, v: t.map(() => 1e9) };
    const node: NodeTelemetry = { node: 'n1', series: [pcie], sensors: [{ sensor: pcie.sensor, source: 'nvml' }] };
    const marks: PhaseMarkInput[] = names.flatMap((name, i) => [
      { node: 'n1', kind: 'begin' as const, name, t: T0 + i },
      { node: 'n1', kind: 'end' as const, name, t: T0 + i + 1 },
    ]);
    const energy = runPhases(1);
    reads = 0;
    const movement = computeRunDataMovement({ window: { startMs: T0, endMs: T0 + 3000 }, nodes: [node], energyJ: energy.energyJ, marks, phases: energy })!;
    expect(movement.phases).toHaveLength(N + 1);
    expect(movement.phases!.find((p) => p.name === names[7])!.energyJ).toBe(8);
    expect(reads).toBeLessThanOrEqual(16 * N);
  });
});
