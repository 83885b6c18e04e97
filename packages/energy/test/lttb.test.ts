import fc from 'fast-check';
import { EnergyInputError, lttb } from '../src';
import { rng } from './traces';

function noisy(n: number, seed: number) {
  const r = rng(seed);
  const t = Array.from({ length: n }, (_, i) => i * 100);
  const v = t.map((x) => 300 + 50 * Math.sin(x / 5000) + 5 * r());
  return { t, v };
}

describe('lttb', () => {
  it('reduces to maxPoints, keeping the first and last point', () => {
    const { t, v } = noisy(10_000, 1);
    const d = lttb(t, v, 500);
    expect(d.t.length).toBeLessThanOrEqual(500);
    expect(d.t.length).toBeGreaterThanOrEqual(499);
    expect(d.indices[0]).toBe(0);
    expect(d.indices[d.indices.length - 1]).toBe(9_999);
    expect(d.t).toEqual(d.indices.map((i) => t[i]));
    expect(d.v).toEqual(d.indices.map((i) => v[i]));
  });

  it('keeps a one-sample power spike and a one-sample dip', () => {
    const { t, v } = noisy(10_000, 2);
    v[4321] = 900;
    v[7777] = 10;
    const d = lttb(t, v, 100);
    expect(d.indices).toContain(4321);
    expect(d.indices).toContain(7777);
    expect(Math.max(...d.v)).toBe(900);
    expect(Math.min(...d.v)).toBe(10);
  });

  it('keeps both extremes when they share a bucket (one point over maxPoints)', () => {
    const { t, v } = noisy(1000, 3);
    v[500] = 1000;
    v[501] = -5;
    const d = lttb(t, v, 10);
    expect(d.indices).toEqual(expect.arrayContaining([500, 501]));
    expect(d.t.length).toBeLessThanOrEqual(11);
  });

  it('returns a short series whole', () => {
    expect(lttb([1, 2, 3], [4, 5, 6], 3)).toEqual({ t: [1, 2, 3], v: [4, 5, 6], indices: [0, 1, 2] });
    expect(lttb([], [], 5)).toEqual({ t: [], v: [], indices: [] });
  });

  it('keeps a flat series flat', () => {
    const t = Array.from({ length: 100 }, (_, i) => i);
    const d = lttb(t, t.map(() => 7), 10);
    expect(d.v.every((x) => x === 7)).toBe(true);
    expect(d.t.length).toBeLessThanOrEqual(10);
  });

  it('refuses maxPoints < 3 and unequal lengths', () => {
    expect(() => lttb([1, 2, 3], [1, 2, 3], 2)).toThrow(EnergyInputError);
    expect(() => lttb([1, 2], [1], 5)).toThrow(EnergyInputError);
  });

  it('always keeps first, last, global max and min, ascending, within maxPoints + 1', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -1e3, max: 1e3, noNaN: true }), { minLength: 1, maxLength: 400 }), fc.integer({ min: 3, max: 60 }), (v, maxPoints) => {
        const t = v.map((_, i) => i * 10);
        const d = lttb(t, v, maxPoints);
        const ascending = d.indices.every((x, i) => i === 0 || d.indices[i - 1]! < x);
        return (
          ascending &&
          d.indices.length <= maxPoints + 1 &&
          d.indices[0] === 0 &&
          d.indices[d.indices.length - 1] === v.length - 1 &&
          Math.max(...d.v) === Math.max(...v) &&
          Math.min(...d.v) === Math.min(...v)
        );
      }),
    );
  });
});
