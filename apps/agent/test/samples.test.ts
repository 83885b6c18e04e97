import { waitFor } from '@erg/testkit';
import { nowMs, roundToMicros, startTicker } from '../src/clock';
import { SampleStore, sinkFor } from '../src/samples';
import type { TelemetryBatch } from '../src/wire';

describe('SampleStore.takeBatch', () => {
  test('columnar batch per sensor, sensors listed on request, columns emptied afterwards', () => {
    const store = new SampleStore();
    const a = store.register({ sensor: 'module0.power', source: 'hwmon', unit: 'W' });
    const b = store.register({ sensor: 'cpu0.energy', source: 'rapl', unit: 'J', wrapAt: 262143.32885 });
    store.register({ sensor: 'gpu0.util', source: 'nvml', unit: '%' });
    store.push(a, 1764500000000.1234, 351.234);
    store.push(b, 1764500000000.1234, 123456.789012);
    store.push(a, 1764500000100.5, 352);
    const batch = JSON.parse(store.takeBatch('gh-001', 0, true) as string) as TelemetryBatch;
    expect(batch).toEqual({
      node: 'gh-001',
      seq: 0,
      sensors: [
        { sensor: 'module0.power', source: 'hwmon', unit: 'W' },
        { sensor: 'cpu0.energy', source: 'rapl', unit: 'J', wrapAt: 262143.32885 },
        { sensor: 'gpu0.util', source: 'nvml', unit: '%' },
      ],
      samples: [
        { sensor: 'module0.power', t: [1764500000000.123, 1764500000100.5], v: [351.234, 352] },
        { sensor: 'cpu0.energy', t: [1764500000000.123], v: [123456.789012] },
      ],
    });
    expect(store.pendingSamples).toBe(0);
    expect(store.takeBatch('gh-001', 1, false)).toBeNull();
    store.push(a, 1764500000200, 1);
    expect(JSON.parse(store.takeBatch('gh-001', 1, false) as string)).toEqual({ node: 'gh-001', seq: 1, samples: [{ sensor: 'module0.power', t: [1764500000200], v: [1] }] });
  });

  test('columns grow past their initial size; non-finite values are never recorded', () => {
    const store = new SampleStore();
    const id = store.register({ sensor: 'gpu0.power', source: 'nvml', unit: 'W' });
    for (let i = 0; i < 1000; i += 1) store.push(id, 1000 + i, i);
    store.push(id, 5000, Number.NaN);
    store.push(id, 5001, Number.POSITIVE_INFINITY);
    const batch = JSON.parse(store.takeBatch('n', 0, false) as string) as TelemetryBatch;
    expect(batch.samples[0]?.t).toHaveLength(1000);
    expect(batch.samples[0]?.v[999]).toBe(999);
    expect(store.totalSamples).toBe(1000);
  });

  test('a name already registered is refused; a dropped sensor leaves the set and bumps the version', () => {
    const store = new SampleStore();
    const first = store.register({ sensor: 'module0.power', source: 'hwmon', unit: 'W' });
    expect(store.register({ sensor: 'module0.power', source: 'nvml', unit: 'W' })).toBe(-1);
    const other = store.register({ sensor: 'gpu0.power', source: 'nvml', unit: 'W' });
    const drops: string[] = [];
    const sink = sinkFor(store, [-1, other], (s, why) => drops.push(`${s}:${why}`));
    sink.push(0, 1, 1); // shadowed: not recorded
    sink.push(1, 1, 200);
    const v = store.version;
    sink.drop(1, 'NOT_SUPPORTED');
    sink.drop(1, 'NOT_SUPPORTED');
    expect(store.version).toBe(v + 1);
    expect(drops).toEqual(['gpu0.power:NOT_SUPPORTED']);
    sink.push(1, 2, 201); // after the drop: not recorded
    expect(store.sensors().map((s) => s.sensor)).toEqual(['module0.power']);
    const batch = JSON.parse(store.takeBatch('n', 3, true) as string) as TelemetryBatch;
    expect(batch.samples).toEqual([{ sensor: 'gpu0.power', t: [1], v: [200] }]);
    expect(batch.sensors).toEqual([{ sensor: 'module0.power', source: 'hwmon', unit: 'W' }]);
    expect(first).toBe(0);
  });
});

describe('startTicker', () => {
  const busy = (ms: number) => {
    const end = nowMs() + ms;
    while (nowMs() < end);
  };

  test('ticks at start + k × period: the time a tick takes does not shift the ones after it', async () => {
    const times: number[] = [];
    const start = nowMs();
    await new Promise<void>((resolve) => {
      const ticker = startTicker(20, () => {
        times.push(nowMs());
        busy(7); // a setTimeout chain would drift by ≥ 7 ms per tick
        if (times.length === 10) {
          ticker.stop();
          resolve();
        }
      });
    });
    // (libuv timers have whole-ms resolution: a tick may fire up to ~1 ms before its target)
    times.forEach((t, i) => expect(t).toBeGreaterThanOrEqual(start + 20 * (i + 1) - 2));
    // 10 ticks of a 20 ms schedule end near 200 ms, not near 270 ms.
    expect((times[9] as number) - start).toBeLessThan(200 + 40);
  });

  test('skips the ticks a long tick made it miss instead of running them in a burst, and counts them', async () => {
    const times: number[] = [];
    const start = nowMs();
    const ticker = startTicker(10, () => {
      times.push(nowMs());
      if (times.length === 1) busy(55);
    });
    await waitFor(() => times.length >= 3, { timeoutMs: 2000, intervalMs: 5 });
    ticker.stop();
    expect(ticker.missed).toBeGreaterThanOrEqual(4);
    // After the long tick, one late tick (target 60 ms), then back on the schedule (70 ms) — not
    // the ticks for 20…50 ms run in a burst.
    expect((times[1] as number) - start).toBeGreaterThanOrEqual(60);
    expect((times[2] as number) - start).toBeGreaterThanOrEqual(70 - 2);
  });

  test('roundToMicros keeps (about) three decimals so timestamps stay short in JSON', () => {
    const t = roundToMicros(1764500000000.123456);
    expect(Math.abs(t - 1764500000000.123456)).toBeLessThan(0.001);
    expect(String(t)).toMatch(/^\d+\.\d{1,3}$/);
    expect(String(roundToMicros(1764500000000.1))).toBe('1764500000000.1');
  });
});
