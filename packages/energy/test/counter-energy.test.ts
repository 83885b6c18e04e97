import fc from 'fast-check';
import { MAX_WRAP_AT } from '@erg/spec/sensors';
import { counterEnergy, usableWrapAt } from '../src';
import { rng, sampleTimes, T0, win } from './traces';

/** A counter (J) of constant power `watts`, read at `times`, starting at `start` J at T0. */
function linearCounter(times: number[], watts: number, start = 0, wrapAt?: number) {
  const v = times.map((x) => {
    const e = start + (watts * (x - T0)) / 1000;
    return wrapAt === undefined ? e : e % wrapAt;
  });
  return { sensor: 'cpu0.energy', t: times, v };
}

describe('counterEnergy', () => {
  it('is exact for linear energy growth, with window edges between samples', () => {
    const times = sampleTimes(T0 - 1000, T0 + 61_000, 100, 30, 7);
    const r = counterEnergy(linearCounter(times, 312.5, 1.5e6), win(0.043, 59.977));
    expect(r.joules).toBeCloseTo(312.5 * (59.977 - 0.043), 6);
    expect(r).toMatchObject({ wraps: 0, resets: 0, gaps: [] });
    expect(r.coveredMs).toBeCloseTo(59_934, 6);
  });

  it('handles a RAPL-like wrap-around when wrapAt is known', () => {
    const wrapAt = 262_143.328850; // max_energy_range_uj of a common package domain, in J
    const times = sampleTimes(T0, T0 + 20_000, 100);
    const series = linearCounter(times, 200, wrapAt - 1500, wrapAt); // wraps 7.5 s in
    const r = counterEnergy(series, win(1, 19), { wrapAt });
    expect(r.joules).toBeCloseTo(200 * 18, 6);
    expect(r.wraps).toBe(1);
    expect(r.resets).toBe(0);
  });

  it('interpolates correctly across a wrap that falls inside the window edge interval', () => {
    const wrapAt = 1000;
    // 100 W; samples at 0 s (990 J) and 1 s (1090 − 1000 = 90 J): the window starts half-way.
    const r = counterEnergy({ t: [0, 1000, 2000], v: [990, 90, 190] }, { startMs: 500, endMs: 2000 }, { wrapAt });
    expect(r.joules).toBeCloseTo(150, 9);
    expect(r.wraps).toBe(1);
  });

  it('reads a decrease without wrapAt as a reset: counts the new value from 0 and says so', () => {
    // 100 W; the driver reloads at 2.5 s: readings 0, 100, 200, then 50 (counted from 0), 150.
    const r = counterEnergy({ t: [0, 1000, 2000, 3000, 4000], v: [0, 100, 200, 50, 150] }, { startMs: 0, endMs: 4000 });
    expect(r.resets).toBe(1);
    expect(r.wraps).toBe(0);
    expect(r.joules).toBeCloseTo(350, 9); // 400 J used; the 50 J between the last reading and the reset are lost
  });

  it('does not count discontinuities outside the window', () => {
    const r = counterEnergy({ t: [0, 1000, 2000, 3000, 4000], v: [0, 100, 200, 50, 150] }, { startMs: 0, endMs: 2000 });
    expect(r).toMatchObject({ resets: 0, joules: 200 });
  });

  it('has the coverage and gap semantics of integration', () => {
    const t = [1000, 1100, 1200, 1300, 2300, 2400, 2500];
    const v = t.map((x) => x / 10); // 100 W
    const r = counterEnergy({ t, v }, { startMs: 500, endMs: 3000 });
    expect(r.gaps).toEqual([
      { fromMs: 500, toMs: 1000 },
      { fromMs: 1300, toMs: 2300 },
      { fromMs: 2500, toMs: 3000 },
    ]);
    expect(r.coveredMs).toBe(500);
    expect(r.spanMs).toBe(1500);
    // Not extrapolated past the samples, but the counter's increment over the gap still counts.
    expect(r.joules).toBeCloseTo(150, 9);
  });

  it('gives 0 J and no coverage when no sample reaches the window', () => {
    expect(counterEnergy({ t: [0, 100], v: [5, 6] }, { startMs: 1000, endMs: 2000 })).toMatchObject({
      joules: 0,
      coveredMs: 0,
      gaps: [{ fromMs: 1000, toMs: 2000 }],
    });
  });

  it('ignores a non-positive or non-finite wrapAt (then a decrease is a reset)', () => {
    const r = counterEnergy({ t: [0, 1000], v: [10, 5] }, { startMs: 0, endMs: 1000 }, { wrapAt: 0 });
    expect(r).toMatchObject({ resets: 1, joules: 5 });
  });

  it('reads a wrapAt beyond any counter\'s range (1e308, stored before the API bounded it) as unknown: a decrease is a reset, and the energy stays finite', () => {
    // Read as a wrap, the decrease added 1e308 J; interpolating that at a window edge overflowed to Infinity.
    const series = { t: [0, 1000, 2000, 3000], v: [10, 20, 5, 15] };
    const r = counterEnergy(series, { startMs: 500, endMs: 2500 }, { wrapAt: 1e308 });
    expect(r).toMatchObject({ resets: 1, wraps: 0 });
    expect(r.joules).toBeCloseTo(5 + 5 + 5, 9);
    expect(usableWrapAt(1e308)).toBeUndefined();
    expect(usableWrapAt(MAX_WRAP_AT)).toBe(MAX_WRAP_AT);
    expect(usableWrapAt(262_143.32885)).toBe(262_143.32885);
  });

  it('is additive over adjacent windows and matches the exact energy for any monotonic counter', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1e6 }), fc.integer({ min: 2, max: 200 }), fc.double({ min: 0, max: 1, noNaN: true }), (seed, n, split) => {
        const r = rng(seed);
        const wrapAt = 5000;
        const t: number[] = [];
        const raw: number[] = [];
        let x = 0;
        let e = 0;
        for (let i = 0; i < n; i++) {
          t.push(x);
          raw.push(e);
          x += 50 + 100 * r();
          e += 1000 * r(); // less than one wrap per interval
        }
        const v = raw.map((y) => y % wrapAt);
        const end = t[n - 1]!;
        const mid = split * end;
        const whole = counterEnergy({ t, v }, { startMs: 0, endMs: end }, { wrapAt });
        const left = counterEnergy({ t, v }, { startMs: 0, endMs: mid }, { wrapAt });
        const right = counterEnergy({ t, v }, { startMs: mid, endMs: end }, { wrapAt });
        const exact = raw[n - 1]! - raw[0]!;
        return Math.abs(whole.joules - exact) <= 1e-6 * Math.max(1, exact) && Math.abs(left.joules + right.joules - whole.joules) <= 1e-6 * Math.max(1, exact);
      }),
    );
  });
});
