import fc from 'fast-check';
import { bestOf, EnergyInputError, paretoFront, tradeoff, type TradeoffPoint } from '../src';

const p = (key: string, timeS: number, energyJ: number): TradeoffPoint => ({ key, timeS, energyJ });
const dominates = (a: TradeoffPoint, b: TradeoffPoint) =>
  a.timeS <= b.timeS && a.energyJ <= b.energyJ && (a.timeS < b.timeS || a.energyJ < b.energyJ);

describe('paretoFront', () => {
  it('keeps the non-dominated points, sorted by time', () => {
    const points = [p('C', 15, 90), p('D', 20, 70), p('A', 10, 100), p('B', 12, 80), p('E', 10, 110), p('F', 25, 70)];
    // C is dominated by B, E by A (same time, more energy), F by D (same energy, slower).
    expect(paretoFront(points)).toEqual(['A', 'B', 'D']);
  });

  it('keeps identical points together on the front', () => {
    expect(paretoFront([p('y', 10, 100), p('x', 10, 100), p('z', 12, 100)])).toEqual(['x', 'y']);
  });

  it('handles a single point and no points', () => {
    expect(paretoFront([p('only', 3, 4)])).toEqual(['only']);
    expect(paretoFront([])).toEqual([]);
  });

  it('refuses non-finite coordinates, naming the configuration', () => {
    expect(() => paretoFront([p('bad', NaN, 1)])).toThrow(EnergyInputError);
    expect(() => paretoFront([p('bad', NaN, 1)])).toThrow(/"bad"/);
  });

  it('returns exactly the mutually non-dominated points, which dominate every other point', () => {
    const coord = fc.integer({ min: 0, max: 8 }); // a small grid forces ties and duplicates
    const points = fc.uniqueArray(fc.tuple(fc.string({ minLength: 1, maxLength: 4 }), coord, coord), {
      maxLength: 30,
      selector: ([key]) => key,
    });
    fc.assert(
      fc.property(points, (tuples) => {
        const pts = tuples.map(([k, t, e]) => p(k, t, e));
        const front = new Set(paretoFront(pts));
        const on = pts.filter((x) => front.has(x.key));
        const off = pts.filter((x) => !front.has(x.key));
        return (
          on.every((a) => on.every((b) => !dominates(a, b))) &&
          off.every((x) => on.some((a) => dominates(a, x))) &&
          pts.every((x) => front.has(x.key) === !pts.some((y) => dominates(y, x)))
        );
      }),
    );
  });

  it('lists the front by increasing time', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.double({ min: 0, max: 100, noNaN: true }), fc.double({ min: 0, max: 100, noNaN: true })), { maxLength: 40 }), (xy) => {
        const pts = xy.map(([t, e], i) => p(`k${i}`, t, e));
        const byKey = new Map(pts.map((x) => [x.key, x]));
        const times = paretoFront(pts).map((k) => byKey.get(k)!.timeS);
        return times.every((t, i) => i === 0 || times[i - 1]! <= t);
      }),
    );
  });
});

describe('bestOf', () => {
  it('picks the fastest, the most frugal and the EDP-optimal configuration', () => {
    const points = [p('A', 10, 100), p('B', 12, 80), p('D', 20, 70)];
    // EDP: A 1000, B 960, D 1400.
    expect(bestOf(points)).toEqual({ time: 'A', energy: 'D', edp: 'B' });
  });

  it('breaks ties by the other objective, then by key', () => {
    expect(bestOf([p('slowish', 10, 100), p('same-time-less-energy', 10, 90)])!.time).toBe('same-time-less-energy');
    expect(bestOf([p('b', 10, 90), p('a', 10, 90)])).toEqual({ time: 'a', energy: 'a', edp: 'a' });
    expect(bestOf([p('slow', 20, 50), p('fast', 10, 50)])!.energy).toBe('fast');
    // Equal EDP (1000): the faster wins.
    expect(bestOf([p('e', 20, 50), p('f', 10, 100)])!.edp).toBe('f');
  });

  it('is null for no points', () => {
    expect(bestOf([])).toBeNull();
  });
});

describe('tradeoff', () => {
  it('gives energy saved and time lost from the fastest to the most frugal configuration', () => {
    expect(tradeoff([p('A', 10, 100), p('B', 12, 80), p('D', 20, 70)])).toEqual({
      fastest: 'A',
      mostFrugal: 'D',
      energySavedJ: 30,
      energySavedPct: 30,
      timeLostS: 10,
      timeLostPct: 100,
    });
  });

  it('is all zeros when one configuration is both fastest and most frugal', () => {
    expect(tradeoff([p('win', 5, 50), p('lose', 6, 60)])).toEqual({
      fastest: 'win',
      mostFrugal: 'win',
      energySavedJ: 0,
      energySavedPct: 0,
      timeLostS: 0,
      timeLostPct: 0,
    });
  });

  it('gives null percentages against a zero baseline, and null for no points', () => {
    expect(tradeoff([p('z', 0, 0)])).toMatchObject({ energySavedPct: null, timeLostPct: null });
    expect(tradeoff([])).toBeNull();
  });
});
