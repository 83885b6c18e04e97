import { expectedVsPresent, repeatedValues } from '../src';
import { sampleTimes } from './traces';

describe('repeatedValues', () => {
  it('counts runs of identical consecutive readings and their share', () => {
    const r = repeatedValues({ t: [0, 1, 2, 3, 4, 5], v: [1, 1, 1, 2, 2, 3] });
    expect(r).toEqual({ samples: 6, runs: 2, repeated: 3, share: 0.5, longestRun: 3 });
  });

  it('finds a hwmon meter whose 1 s average is read at 10 Hz', () => {
    const t = sampleTimes(0, 9_900, 100);
    const v = t.map((x) => 500 + Math.floor(x / 1000)); // a new value once a second
    const r = repeatedValues({ t, v });
    expect(r.runs).toBe(10);
    expect(r.repeated).toBe(90);
    expect(r.share).toBeCloseTo(0.9, 12);
    expect(r.longestRun).toBe(10);
  });

  it('reports nothing for changing readings and for an empty series', () => {
    expect(repeatedValues({ t: [0, 1, 2], v: [1, 2, 1] })).toEqual({ samples: 3, runs: 0, repeated: 0, share: 0, longestRun: 1 });
    expect(repeatedValues({ t: [], v: [] })).toEqual({ samples: 0, runs: 0, repeated: 0, share: 0, longestRun: 0 });
  });

  it('looks only inside a window when one is given', () => {
    const r = repeatedValues({ t: [0, 1, 2, 3, 4], v: [7, 7, 7, 8, 9] }, { startMs: 2, endMs: 4 });
    expect(r).toEqual({ samples: 3, runs: 0, repeated: 0, share: 0, longestRun: 1 });
  });
});

describe('expectedVsPresent', () => {
  it('gives the share of expected samples present', () => {
    const t = sampleTimes(0, 9_900, 100).filter((_, i) => i % 20 !== 0); // 5 of 100 missing
    expect(expectedVsPresent({ t, v: t.map(() => 1) }, { startMs: 0, endMs: 10_000 }, 100)).toEqual({ expected: 100, present: 95, share: 0.95 });
  });

  it('counts the window half-open and ignores non-finite readings', () => {
    const r = expectedVsPresent({ t: [0, 100, 200, 300, 400], v: [1, NaN, 1, 1, 1] }, { startMs: 0, endMs: 400 }, 100);
    expect(r).toEqual({ expected: 4, present: 3, share: 0.75 });
  });

  it('caps the share at 1 when there are more samples than expected', () => {
    const t = sampleTimes(0, 990, 10);
    expect(expectedVsPresent({ t, v: t.map(() => 1) }, { startMs: 0, endMs: 1000 }, 100)).toMatchObject({ expected: 10, present: 100, share: 1 });
  });

  it('refuses a non-positive interval', () => {
    expect(() => expectedVsPresent({ t: [], v: [] }, { startMs: 0, endMs: 1 }, 0)).toThrow(/intervalMs/);
  });
});
