// A sensor description's timing (issue 15 §2): averagingMs, the window a power reading averages,
// and updateMs, how often a counter changes on the device. Both optional; finite, above 0, at most
// an hour; a bad one refuses the batch with an issue naming the field, as the API's 400 does.
import { MAX_SENSOR_TIMING_MS, type SensorInfo } from '../src/sensors';
import { decodeTelemetryValue, SensorDescription } from '../src';

const now = Date.UTC(2026, 11, 4, 12);
const bounds = { minT: now - 3_600_000, maxT: now + 3_600_000 };
const batchWith = (sensors: unknown[]) => ({ node: 'gh-001', seq: 0, samples: [{ sensor: 'gpu0.power', t: now, v: 300 }], sensors });

describe('sensor timing in a sensor description', () => {
  test('averagingMs and updateMs are accepted and reach the normalized batch as sent', () => {
    const sensors: SensorInfo[] = [
      { sensor: 'module0.power', source: 'hwmon', unit: 'W', scope: 'module', averagingMs: 50 },
      { sensor: 'gpu0.power', source: 'nvml', unit: 'W', scope: 'gpu', averagingMs: 1000 },
      { sensor: 'module0.energy', source: 'nvml', unit: 'J', scope: 'module', updateMs: 20.5 },
      { sensor: 'cpu0.energy', source: 'rapl', unit: 'J', wrapAt: 262143.328850 },
    ];
    const result = decodeTelemetryValue(batchWith(sensors), bounds);
    if (!result.ok) throw new Error(JSON.stringify(result.issues));
    expect(result.batch.sensors).toEqual(sensors);
  });

  test('both are optional: a description without them (an older agent) is valid', () => {
    expect(SensorDescription.safeParse({ sensor: 'gpu0.power', source: 'nvml', unit: 'W' }).success).toBe(true);
  });

  test('the bounds: above 0, at most one hour', () => {
    const ok = (averagingMs: number) => SensorDescription.safeParse({ sensor: 'gpu0.power', source: 'nvml', averagingMs }).success;
    expect(ok(0.001)).toBe(true);
    expect(ok(MAX_SENSOR_TIMING_MS)).toBe(true);
    expect(ok(0)).toBe(false);
    expect(ok(-50)).toBe(false);
    expect(ok(MAX_SENSOR_TIMING_MS + 1)).toBe(false);
    expect(ok(Number.POSITIVE_INFINITY)).toBe(false);
    expect(ok(Number.NaN)).toBe(false);
    expect(SensorDescription.safeParse({ sensor: 'gpu0.energy', source: 'nvml', updateMs: 0 }).success).toBe(false);
  });

  test('a bad value refuses the batch with an issue naming sensors[i].averagingMs / sensors[i].updateMs', () => {
    const result = decodeTelemetryValue(
      batchWith([
        { sensor: 'gpu0.power', source: 'nvml', averagingMs: 1000 },
        { sensor: 'module0.power', source: 'hwmon', averagingMs: 0 },
        { sensor: 'gpu0.energy', source: 'nvml', updateMs: 7_200_000 },
        { sensor: 'gpu1.power', source: 'nvml', averagingMs: '1000' },
      ]),
      bounds,
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues.map((i) => i.path)).toEqual(['sensors[1].averagingMs', 'sensors[2].updateMs', 'sensors[3].averagingMs']);
    expect(result.issues[0]?.message).toMatch(/above 0/);
    expect(result.issues[1]?.message).toMatch(/at most 3600000/);
  });
});
