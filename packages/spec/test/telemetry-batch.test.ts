// decodeTelemetryBatch and normalizeBatch: linear in the batch, with caps on entries, sensors,
// samples and nesting, and every refusal a 400-style issue naming the field.
import {
  decodeTelemetryBatch, decodeTelemetryValue, MAX_BATCH_SAMPLES, MAX_BATCH_SENSORS, MAX_BATCH_SERIES, normalizeBatch, TelemetryBatch,
} from '../src';

const now = Date.UTC(2026, 10, 30, 12);
const bounds = { minT: now - 3_600_000, maxT: now + 3_600_000 };
const batch = (samples: unknown[]) => ({ node: 'n1', seq: 1, samples });

describe('normalizeBatch', () => {
  it('merges several entries of one sensor into one sorted column, and uses a lone column as it is', () => {
    const result = decodeTelemetryValue(
      batch([
        { sensor: 'gpu0.power', t: now + 200, v: 3 },
        { sensor: 'cpu0.power', t: [now, now + 100], v: [10, 11] },
        { sensor: 'gpu0.power', t: [now, now + 100], v: [1, 2] },
      ]),
      bounds,
    );
    if (!result.ok) throw new Error(JSON.stringify(result.issues));
    expect(result.batch.sampleCount).toBe(5);
    expect(result.batch.series.map((s) => [s.sensor, Array.from(s.t).map((t) => t - now), Array.from(s.v)])).toEqual([
      ['gpu0.power', [0, 100, 200], [1, 2, 3]],
      ['cpu0.power', [0, 100], [10, 11]],
    ]);
  });

  it('takes 10,000 single-sample entries of one sensor (the row form) in one pass', () => {
    const samples = Array.from({ length: MAX_BATCH_SERIES }, (_, i) => ({ sensor: 'gpu0.power', t: now + i, v: 100 }));
    const parsed = TelemetryBatch.parse(batch(samples));
    const result = normalizeBatch(parsed, bounds);
    expect(result.ok && result.batch.series.map((s) => [s.sensor, s.t.length])).toEqual([['gpu0.power', MAX_BATCH_SERIES]]);
  });

  it('refuses empty columns: they carry nothing and used to cost a quadratic scan each', () => {
    const result = decodeTelemetryValue(batch([{ sensor: 'gpu0.power', t: [], v: [] }, { sensor: 'gpu1.power', t: [now], v: [1] }]), bounds);
    expect(result).toEqual({
      ok: false,
      issues: [{ path: 'samples[0]', code: 'too_small', message: 'gpu0.power has an empty column; send at least one sample, or leave the sensor out' }],
    });
  });

  it(`refuses samples of more than ${MAX_BATCH_SENSORS} sensors`, () => {
    const samples = Array.from({ length: MAX_BATCH_SENSORS + 1 }, (_, i) => ({ sensor: `gpu${i}.power`, t: now, v: 1 }));
    expect(decodeTelemetryValue(batch(samples), bounds)).toEqual({
      ok: false,
      issues: [{ path: 'samples', code: 'too_big', message: `samples of ${MAX_BATCH_SENSORS + 1} sensors in one batch; at most ${MAX_BATCH_SENSORS}` }],
    });
  });

  it(`refuses more than ${MAX_BATCH_SAMPLES} samples`, () => {
    const t = Array.from({ length: MAX_BATCH_SAMPLES / 2 + 1 }, (_, i) => now + i / 100);
    const result = decodeTelemetryValue(batch([{ sensor: 'gpu0.power', t, v: t.map(() => 1) }, { sensor: 'gpu1.power', t, v: t.map(() => 1) }]), bounds);
    expect(result).toMatchObject({ ok: false, issues: [{ path: 'samples', code: 'too_big' }] });
  });
});

describe('decodeTelemetryBatch', () => {
  it(`refuses 40,000 empty series by their number, before validating any (the cap is ${MAX_BATCH_SERIES})`, () => {
    const text = JSON.stringify(batch(Array.from({ length: 40_000 }, (_, i) => ({ sensor: `gpu${i % 1000}.power`, t: [], v: [] }))));
    expect(decodeTelemetryBatch(text, bounds)).toEqual({
      ok: false,
      issues: [{ path: 'samples', code: 'too_big', message: `40000 entries in one batch; at most ${MAX_BATCH_SERIES} (send one column per sensor, or several batches)` }],
    });
  });

  it('refuses nesting deeper than a batch needs, and text that is not JSON', () => {
    expect(decodeTelemetryBatch(`{"node":"n","seq":1,"samples":${'['.repeat(5000)}${']'.repeat(5000)}}`, bounds)).toMatchObject({
      ok: false,
      issues: [{ path: '(root)', code: 'document_too_large' }],
    });
    expect(decodeTelemetryBatch('{"node":', bounds)).toMatchObject({ ok: false, issues: [{ code: 'syntax_error' }] });
  });

  it('reports at most 20 issues for a batch of bad sensor names', () => {
    const samples = Array.from({ length: 5000 }, () => ({ sensor: 'x'.repeat(1000), t: now, v: 1 }));
    const result = decodeTelemetryBatch(JSON.stringify(batch(samples)), bounds);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.issues.length).toBeLessThanOrEqual(20);
  });
});
