import fc from 'fast-check';
import { Backoff, backoffDelay } from '../src';

describe('backoffDelay', () => {
  const exact = { initialMs: 250, maxMs: 30_000, jitter: 0 };

  it('waits nothing before the first failure, then doubles from initialMs up to maxMs', () => {
    expect([0, 1, 2, 3, 4, 8, 20, 1000, Number.MAX_SAFE_INTEGER].map((n) => backoffDelay(n, exact))).toEqual([0, 250, 500, 1000, 2000, 30_000, 30_000, 30_000, 30_000]);
  });

  it('caps even the first delay when maxMs is below initialMs', () => {
    expect([1, 2].map((n) => backoffDelay(n, { initialMs: 60_000, maxMs: 30_000, jitter: 0 }))).toEqual([30_000, 30_000]);
  });

  it('takes the random share off the exact delay: half by default, never above it', () => {
    const options = { initialMs: 500, maxMs: 15_000 };
    expect(backoffDelay(3, options, () => 0)).toBe(1000);
    expect(backoffDelay(3, options, () => 0.999999)).toBe(2000);
    expect(backoffDelay(20, options, () => 0.999999)).toBe(15_000);
    expect(backoffDelay(3, { ...options, jitter: 0.2 }, () => 0)).toBe(1600);
  });

  it('stays within [(1 − jitter) · exact, min(exact, maxMs)] for any figures', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 0, max: 60_000 }),
        fc.integer({ min: -60_000, max: 600_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (failures, initialMs, extra, jitter, r) => {
          const maxMs = Math.max(0, initialMs + extra);
          const full = backoffDelay(failures, { initialMs, maxMs, jitter: 0 });
          const delay = backoffDelay(failures, { initialMs, maxMs, jitter }, () => r);
          return delay <= full && delay <= maxMs && delay >= Math.floor(full * (1 - jitter)) && full <= maxMs;
        },
      ),
      { seed: 7 },
    );
  });

  it('refuses options that cannot describe a backoff', () => {
    expect(() => backoffDelay(1, { initialMs: -1, maxMs: 10 })).toThrow(RangeError);
    expect(() => backoffDelay(1, { initialMs: 100, maxMs: -10 })).toThrow(/maxMs/);
    expect(() => backoffDelay(1, { initialMs: 1, maxMs: 10, jitter: 1.5 })).toThrow(/jitter/);
    expect(() => new Backoff({ initialMs: Number.NaN, maxMs: 10 })).toThrow(/initialMs/);
  });
});

describe('Backoff', () => {
  it('counts failures in a row and starts over after a success', () => {
    const b = new Backoff({ initialMs: 100, maxMs: 1000, jitter: 0 });
    expect(b.failures).toBe(0);
    expect([b.next(), b.next(), b.next(), b.next(), b.next()]).toEqual([100, 200, 400, 800, 1000]);
    expect(b.failures).toBe(5);
    b.succeeded();
    expect(b.failures).toBe(0);
    expect(b.next()).toBe(100);
  });

  it('draws its jitter from the injected random source', () => {
    const draws = [0, 0.5, 0.999999];
    const b = new Backoff({ initialMs: 1000, maxMs: 60_000 }, () => draws.shift() ?? 0);
    expect([b.next(), b.next(), b.next()]).toEqual([500, 1500, 4000]);
  });
});
