// sampleTimeBounds: the one window of sample times a run accepts, live (the API's ingest) or from
// the spool (the scheduler at job end).
import { decodeTelemetryValue, IMPORT_EARLIEST_MS, SAMPLE_CLOCK_SKEW_MS, sampleTimeBounds } from '../src';

const createdAt = new Date(Date.UTC(2026, 10, 30, 12));
const endedAt = new Date(createdAt.getTime() + 3_600_000);
const now = endedAt.getTime() + 86_400_000;
const accepts = (bounds: { minT: number; maxT: number }, t: number) =>
  decodeTelemetryValue({ node: 'n1', seq: 0, samples: [{ sensor: 'gpu0.power', t, v: 100 }] }, bounds).ok;

describe('sampleTimeBounds', () => {
  test('a run that ended: from its creation to its end, each widened by the clock skew', () => {
    expect(sampleTimeBounds({ createdAt, endedAt, imported: false }, now)).toEqual({
      minT: createdAt.getTime() - SAMPLE_CLOCK_SKEW_MS,
      maxT: endedAt.getTime() + SAMPLE_CLOCK_SKEW_MS,
    });
    expect(SAMPLE_CLOCK_SKEW_MS).toBe(10 * 60_000);
  });

  test('a run still going: up to now, widened by the clock skew', () => {
    expect(sampleTimeBounds({ createdAt, endedAt: null, imported: false }, now)).toEqual({
      minT: createdAt.getTime() - SAMPLE_CLOCK_SKEW_MS,
      maxT: now + SAMPLE_CLOCK_SKEW_MS,
    });
  });

  test('an imported run: measurements older than the campaign, back to 2000, up to now', () => {
    expect(sampleTimeBounds({ createdAt, endedAt, imported: true }, now)).toEqual({ minT: IMPORT_EARLIEST_MS, maxT: now + SAMPLE_CLOCK_SKEW_MS });
    expect(IMPORT_EARLIEST_MS).toBe(Date.parse('2000-01-01T00:00:00Z'));
  });

  test('the edges are inclusive: a batch is refused one millisecond outside, not on the edge', () => {
    const bounds = sampleTimeBounds({ createdAt, endedAt, imported: false }, now);
    expect([bounds.minT - 1, bounds.minT, bounds.maxT, bounds.maxT + 1].map((t) => accepts(bounds, t))).toEqual([false, true, true, false]);
  });

  test('now defaults to the clock', () => {
    const before = Date.now();
    const { maxT } = sampleTimeBounds({ createdAt, endedAt: null, imported: false });
    expect(maxT).toBeGreaterThanOrEqual(before + SAMPLE_CLOCK_SKEW_MS);
    expect(maxT).toBeLessThanOrEqual(Date.now() + SAMPLE_CLOCK_SKEW_MS);
  });
});
