import { welch } from '../src';

describe('welch', () => {
  it('matches scipy.stats.ttest_ind(equal_var=False)', () => {
    const r = welch([1, 2, 3, 4, 5], [2, 4, 6, 8, 10]);
    expect(r.t).toBeCloseTo(-1.8973665961010275, 12);
    expect(r.df).toBeCloseTo(5.882352941176471, 12);
    expect(r.p).toBeCloseTo(0.10753119493062728, 9);
    expect(r.pLess).toBeCloseTo(r.p / 2, 12);
    expect(r.pGreater).toBeCloseTo(1 - r.p / 2, 12);
  });

  it('is antisymmetric in its arguments', () => {
    const a = [10.1, 9.8, 10.4];
    const b = [11, 11.3, 10.7, 11.1];
    const ab = welch(a, b);
    const ba = welch(b, a);
    expect(ba.t).toBeCloseTo(-ab.t, 12);
    expect(ba.df).toBeCloseTo(ab.df, 12);
    expect(ba.p).toBeCloseTo(ab.p, 12);
    expect(ba.pGreater).toBeCloseTo(ab.pLess, 12);
  });

  it('handles two constant samples without dividing by zero', () => {
    expect(welch([5, 5], [5, 5, 5])).toEqual({ t: 0, df: 3, p: 1, pGreater: 1, pLess: 1 });
    expect(welch([6, 6], [5, 5])).toMatchObject({ t: Infinity, p: 0, pGreater: 0, pLess: 1 });
  });

  it('needs two finite values per side', () => {
    expect(() => welch([1], [1, 2])).toThrow(expect.objectContaining({ code: 'ERG_REGRESS_TOO_FEW' }));
    expect(() => welch([1, Number.NaN], [1, 2])).toThrow(expect.objectContaining({ code: 'ERG_REGRESS_BAD_SAMPLE' }));
  });
});
