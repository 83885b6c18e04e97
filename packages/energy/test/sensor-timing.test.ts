import { computeRunPhases, sensorTimingOf } from '../src';

describe('sensorTimingOf: the interval a reading covers, for the phase attribution', () => {
  test("a power sensor's declared averaging window wins; else its source's documented default; else none", () => {
    expect(sensorTimingOf('module0.power', { sensor: 'module0.power', source: 'hwmon', averagingMs: 1000 })).toEqual({ averagingMs: 1000 });
    expect(sensorTimingOf('module0.power', { sensor: 'module0.power', source: 'hwmon' })).toEqual({ averagingMs: 50 });
    expect(sensorTimingOf('gpu0.power', { sensor: 'gpu0.power', source: 'nvml' })).toEqual({ averagingMs: 1000 });
    expect(sensorTimingOf('cpu0.power', { sensor: 'cpu0.power', source: 'model' })).toBeUndefined();
    expect(sensorTimingOf('gpu0.power', undefined)).toBeUndefined();
  });

  test('a counter trails by half its declared update period; undeclared, it covers the time since the previous reading', () => {
    expect(sensorTimingOf('module0.energy', { sensor: 'module0.energy', source: 'nvml', updateMs: 40 })).toEqual({ lagMs: 20 });
    expect(sensorTimingOf('module0.energy', { sensor: 'module0.energy', source: 'nvml' })).toBeUndefined();
    expect(sensorTimingOf('gpu0.util', { sensor: 'gpu0.util', source: 'nvml', averagingMs: 10 })).toBeUndefined();
  });

  test('computeRunPhases applies it: a 50 ms hwmon meter read every 100 ms splits a 50/50 duty cycle right only when its window is known', () => {
    // 400 W in phase a (the first 50 ms of every 100 ms), 100 W in b (the second 50 ms); the meter
    // averages the last 50 ms before each reading, read about every 100 ms with a jitter, so each
    // reading sees its own mix of a and b.
    const T0 = 1_800_000_000_000;
    const power = (ms: number) => (ms % 100 < 50 ? 400 : 100);
    const t: number[] = [];
    const v: number[] = [];
    for (let ms = 75, k = 0; ms <= 10_000; ms += 100 + ((k * 37) % 41) - 20, k++) {
      let sum = 0;
      for (let x = ms - 50; x < ms; x++) sum += power(x);
      t.push(T0 + ms);
      v.push(sum / 50);
    }
    const marks = [];
    for (let ms = 0; ms < 10_000; ms += 100) {
      marks.push({ node: 'n', kind: 'begin' as const, name: 'a', t: T0 + ms }, { node: 'n', kind: 'end' as const, name: 'a', t: T0 + ms + 50 });
      marks.push({ node: 'n', kind: 'begin' as const, name: 'b', t: T0 + ms + 50 }, { node: 'n', kind: 'end' as const, name: 'b', t: T0 + ms + 100 });
    }
    const window = { startMs: T0 + 100, endMs: T0 + 9_900 };
    const phasesWith = (source: string) =>
      computeRunPhases({ window, marks, nodes: [{ node: 'n', series: [{ sensor: 'module0.power', t, v }], sensors: [{ sensor: 'module0.power', source }] }] });
    const ratio = (source: string) => {
      const phases = phasesWith(source).phases;
      return phases.find((p) => p.name === 'a')!.meanPowerW! / phases.find((p) => p.name === 'b')!.meanPowerW!;
    };
    // hwmon: the 50 ms window known, the phases' powers come apart as 400 : 100 (their level is the
    // run's energy's: a meter that sees half of every 100 ms misjudges a 100 ms cycle's mean);
    // 'import', no window known (each reading taken as covering the ~100 ms since the previous): the split is wrong.
    expect(ratio('hwmon')).toBeCloseTo(4, 2);
    expect(Math.abs(ratio('import') - 4)).toBeGreaterThan(1);
  });
});
