import { studentTQuantile } from '@erg/energy';
import { relativeChange } from '../src';

describe('relativeChange', () => {
  it('gives the ratio of means minus one and a delta-method interval on the log scale', () => {
    const b = [100, 102, 98, 101, 99];
    const c = [110, 112, 108, 111, 109];
    const r = relativeChange(b, c);
    if (!r.ok) throw new Error(r.reason);
    expect(r.change).toBeCloseTo(0.1, 12);
    // Hand computation: both variances 2.5, n 5; u = 2.5/(5·100²) + 2.5/(5·110²), df by Welch–Satterthwaite.
    const ub = 2.5 / (5 * 100 ** 2);
    const uc = 2.5 / (5 * 110 ** 2);
    const df = (ub + uc) ** 2 / (ub ** 2 / 4 + uc ** 2 / 4);
    const half = studentTQuantile(0.975, df) * Math.sqrt(ub + uc);
    expect(r.ci95[0]).toBeCloseTo(1.1 * Math.exp(-half) - 1, 12);
    expect(r.ci95[1]).toBeCloseTo(1.1 * Math.exp(half) - 1, 12);
    expect(r.ci95[0]).toBeLessThan(0.1);
    expect(r.ci95[1]).toBeGreaterThan(0.1);
  });

  it('is asymmetric the way ratios are', () => {
    const r = relativeChange([10, 14, 12], [5, 7, 6]);
    if (!r.ok) throw new Error(r.reason);
    expect(r.change).toBeCloseTo(-0.5, 12);
    expect(0.5 - -r.ci95[0]).not.toBeCloseTo(r.ci95[1] - -0.5, 3);
    expect(r.ci95[0]).toBeGreaterThan(-1); // never below −100 %
  });

  it('collapses to a point for constant samples', () => {
    expect(relativeChange([4, 4], [5, 5])).toEqual({ ok: true, change: 0.25, ci95: [0.25, 0.25] });
  });

  it('says why when it cannot be computed', () => {
    expect(relativeChange([], [1, 2])).toEqual({ ok: false, reason: 'too_few_repetitions', change: null, ci95: null });
    expect(relativeChange([2], [3, 3])).toEqual({ ok: false, reason: 'too_few_repetitions', change: 0.5, ci95: null });
    expect(relativeChange([1, -1], [1, 2])).toEqual({ ok: false, reason: 'non_positive_mean', change: null, ci95: null });
  });
});
