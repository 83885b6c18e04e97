import fc from 'fast-check';
import { EnergyInputError, integratePower } from '../src';
import { powerSeries, relErr, sampleTimes, T0, win } from './traces';

interface Trace {
  name: string;
  p: (s: number) => number;
  /** Exact ∫ p(s) ds from a to b (seconds since T0). */
  exact: (a: number, b: number) => number;
}

const W = 2 * Math.PI / 7; // a 7 s period, not commensurate with the window or the sampling
const traces: Trace[] = [
  { name: 'constant 250 W', p: () => 250, exact: (a, b) => 250 * (b - a) },
  { name: 'ramp 100 → 400 W', p: (s) => 100 + 2.5 * s, exact: (a, b) => 100 * (b - a) + 1.25 * (b * b - a * a) },
  {
    name: 'sine 300 ± 100 W',
    p: (s) => 300 + 100 * Math.sin(W * s),
    exact: (a, b) => 300 * (b - a) + (100 / W) * (Math.cos(W * a) - Math.cos(W * b)),
  },
  {
    name: 'step 150 → 350 W between samples',
    p: (s) => (s < 60.03 ? 150 : 350),
    exact: (a, b) => 150 * (Math.min(b, 60.03) - a) + 350 * Math.max(0, b - 60.03),
  },
];

describe('integratePower', () => {
  describe.each(traces)('$name', ({ p, exact }) => {
    // Samples start before and end after the window; the window's edges fall between samples.
    const window = win(0.037, 120.011);
    const expected = exact(0.037, 120.011);

    it('is within 0.1 % of the exact integral at 10 Hz', () => {
      const r = integratePower(powerSeries('gpu0.power', sampleTimes(T0 - 500, T0 + 120_500, 100), p), window);
      expect(relErr(r.joules, expected)).toBeLessThan(1e-3);
      expect(r.coveredMs).toBeCloseTo(window.endMs - window.startMs, 6);
      expect(r.gaps).toEqual([]);
      expect(r.medianIntervalMs).toBeCloseTo(100, 6);
    });

    it('is within 0.1 % of the exact integral with jittered sampling (±30 ms at 10 Hz)', () => {
      for (const seed of [1, 2, 3]) {
        const r = integratePower(powerSeries('gpu0.power', sampleTimes(T0 - 500, T0 + 120_500, 100, 30, seed), p), window);
        expect(relErr(r.joules, expected)).toBeLessThan(1e-3);
        expect(r.gaps).toEqual([]);
      }
    });
  });

  it('is exact for a linear trace, including the interpolated edges', () => {
    // 10 W per second: p(t) = t/100 W with t in ms; ∫ from 0.5 s to 2.5 s = 5 · (2.5² − 0.5²) = 30 J.
    const r = integratePower({ t: [0, 1000, 2000, 3000], v: [0, 10, 20, 30] }, { startMs: 500, endMs: 2500 });
    expect(r.joules).toBeCloseTo(30, 12);
    expect(r.coveredMs).toBe(2000);
    expect(r.spanMs).toBe(2000);
  });

  it('interpolates at a window that starts and ends between two samples', () => {
    // Values at the edges: 5 W (half-way 0 → 10) and 5 W (half-way 0 → 10).
    const r = integratePower({ t: [0, 1000, 2000, 3000], v: [0, 10, 0, 10] }, { startMs: 500, endMs: 2500 });
    expect(r.joules).toBeCloseTo(0.5 * 7.5 + 1 * 5 + 0.5 * 2.5, 12);
  });

  it('integrates a window inside one sampling interval', () => {
    const r = integratePower({ t: [0, 1000], v: [0, 100] }, { startMs: 200, endMs: 400 });
    expect(r.joules).toBeCloseTo(0.2 * 30, 12);
    expect(r.coveredMs).toBe(200);
  });

  it('does not extrapolate before the first or after the last sample: those are gaps', () => {
    const r = integratePower({ t: [1000, 2000, 3000], v: [100, 100, 100] }, { startMs: 0, endMs: 4000 });
    expect(r.joules).toBeCloseTo(200, 12);
    expect(r.coveredMs).toBe(2000);
    expect(r.spanMs).toBe(2000);
    expect(r.gaps).toEqual([
      { fromMs: 0, toMs: 1000 },
      { fromMs: 3000, toMs: 4000 },
    ]);
  });

  it('reports a gap in the middle, leaves it out of coveredMs, and still integrates it linearly', () => {
    const times = sampleTimes(T0, T0 + 60_000, 100).filter((x) => x < T0 + 20_000 || x > T0 + 23_000);
    const r = integratePower(powerSeries('module0.power', times, () => 400), win(0, 60));
    expect(r.gaps).toHaveLength(1);
    expect(r.gaps[0]!.fromMs).toBeCloseTo(T0 + 19_900, 3);
    expect(r.gaps[0]!.toMs).toBeCloseTo(T0 + 23_100, 3);
    expect(r.coveredMs).toBeCloseTo(60_000 - 3_200, 3);
    expect(r.coveredMs / 60_000).toBeLessThan(1);
    expect(r.joules).toBeCloseTo(400 * 60, 6); // the line through a constant is the constant
  });

  it('takes the gap threshold from gapFactor × the median interval', () => {
    const series = { t: [0, 100, 200, 300, 700, 800], v: [1, 1, 1, 1, 1, 1] }; // one 400 ms interval
    expect(integratePower(series, { startMs: 0, endMs: 800 }).gaps).toEqual([]); // 400 ≤ 5 · 100
    expect(integratePower(series, { startMs: 0, endMs: 800 }, { gapFactor: 3 }).gaps).toEqual([{ fromMs: 300, toMs: 700 }]);
  });

  it('clips a gap to the window', () => {
    const r = integratePower({ t: [0, 100, 200, 2000, 2100], v: [1, 1, 1, 1, 1] }, { startMs: 150, endMs: 1000 });
    expect(r.gaps).toEqual([{ fromMs: 200, toMs: 1000 }]);
    expect(r.coveredMs).toBe(50);
  });

  it('reports the whole window as a gap when no sample reaches it', () => {
    for (const t of [[], [5000, 5100], [0, 100]]) {
      const r = integratePower({ t, v: t.map(() => 50) }, { startMs: 1000, endMs: 2000 });
      expect(r).toMatchObject({ joules: 0, coveredMs: 0, spanMs: 0, gaps: [{ fromMs: 1000, toMs: 2000 }] });
    }
  });

  it('drops non-finite readings, so they become a longer interval', () => {
    const r = integratePower({ t: [0, 100, 200, 300, 400], v: [10, NaN, 10, 10, 10] }, { startMs: 0, endMs: 400 });
    expect(r.joules).toBeCloseTo(4, 12);
  });

  it('treats a duplicated timestamp as a step', () => {
    const r = integratePower({ t: [0, 1000, 1000, 2000], v: [100, 100, 300, 300] }, { startMs: 0, endMs: 2000 });
    expect(r.joules).toBeCloseTo(400, 12);
    const half = integratePower({ t: [0, 1000, 1000, 2000], v: [100, 100, 300, 300] }, { startMs: 1000, endMs: 2000 });
    expect(half.joules).toBeCloseTo(300, 12);
  });

  it('refuses unsorted series, unequal lengths and reversed windows with a code', () => {
    const code = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        expect(e).toBeInstanceOf(EnergyInputError);
        return (e as EnergyInputError).code;
      }
      return 'no error';
    };
    expect(code(() => integratePower({ t: [0, 200, 100], v: [1, 1, 1] }, { startMs: 0, endMs: 200 }))).toBe('ERG_ENERGY_UNSORTED');
    expect(code(() => integratePower({ t: [0, 100], v: [1] }, { startMs: 0, endMs: 100 }))).toBe('ERG_ENERGY_LENGTH_MISMATCH');
    expect(code(() => integratePower({ t: [0, 100], v: [1, 1] }, { startMs: 100, endMs: 0 }))).toBe('ERG_ENERGY_BAD_WINDOW');
    expect(code(() => integratePower({ t: [0, 100], v: [1, 1] }, { startMs: NaN, endMs: 0 }))).toBe('ERG_ENERGY_BAD_WINDOW');
  });

  it('returns 0 J over an empty window', () => {
    expect(integratePower({ t: [0, 100], v: [5, 5] }, { startMs: 50, endMs: 50 })).toMatchObject({ joules: 0, coveredMs: 0, gaps: [] });
  });

  describe('properties', () => {
    /** Sorted sample times in ms covering [a, a + length]: one at or before a, one at or after the end, any between. */
    const covering = fc
      .record({
        a: fc.double({ min: -1e6, max: 1e6, noNaN: true }),
        length: fc.double({ min: 1, max: 1e5, noNaN: true }),
        before: fc.double({ min: 0, max: 1000, noNaN: true }),
        after: fc.double({ min: 0, max: 1000, noNaN: true }),
        inside: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 60 }),
      })
      .map(({ a, length, before, after, inside }) => ({
        window: { startMs: a, endMs: a + length },
        t: [a - before, ...inside.map((u) => a + u * length).sort((x, y) => x - y), a + length + after],
      }));

    it('integrates a constant c over [a, b] to c · (b − a) for any sampling covering the window', () => {
      fc.assert(
        fc.property(covering, fc.double({ min: 0, max: 5000, noNaN: true }), ({ window, t }, c) => {
          const r = integratePower({ t, v: t.map(() => c) }, window, { gapFactor: Infinity });
          const exact = (c * (window.endMs - window.startMs)) / 1000;
          return Math.abs(r.joules - exact) <= 1e-9 * Math.max(1, exact) && Math.abs(r.coveredMs - (window.endMs - window.startMs)) < 1e-6;
        }),
      );
    });

    it('is additive over adjacent windows', () => {
      const series = fc
        .array(fc.tuple(fc.double({ min: 0, max: 1e5, noNaN: true }), fc.double({ min: 0, max: 1000, noNaN: true })), { minLength: 1, maxLength: 80 })
        .map((pairs) => {
          pairs.sort((x, y) => x[0] - y[0]);
          return { t: pairs.map((p) => p[0]), v: pairs.map((p) => p[1]) };
        });
      fc.assert(
        fc.property(series, fc.tuple(fc.double({ min: -1e4, max: 1.1e5, noNaN: true }), fc.double({ min: -1e4, max: 1.1e5, noNaN: true }), fc.double({ min: -1e4, max: 1.1e5, noNaN: true })), (s, edges) => {
          const [a, m, b] = [...edges].sort((x, y) => x - y) as [number, number, number];
          const whole = integratePower(s, { startMs: a, endMs: b });
          const left = integratePower(s, { startMs: a, endMs: m });
          const right = integratePower(s, { startMs: m, endMs: b });
          const scale = Math.max(1, Math.abs(whole.joules));
          return (
            Math.abs(left.joules + right.joules - whole.joules) <= 1e-9 * scale &&
            Math.abs(left.coveredMs + right.coveredMs - whole.coveredMs) <= 1e-6
          );
        }),
      );
    });
  });
});
