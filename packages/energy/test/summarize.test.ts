import { EnergyInputError, studentTQuantile, summarize } from '../src';

describe('studentTQuantile', () => {
  it.each([
    [1, 12.706],
    [2, 4.303],
    [3, 3.182],
    [4, 2.776],
    [5, 2.571],
    [10, 2.228],
    [30, 2.042],
    [100, 1.984],
  ])('t(0.975, df = %i) = %f to 3 decimals', (df, t) => {
    expect(Math.abs(studentTQuantile(0.975, df) - t)).toBeLessThan(5e-4);
  });

  it('matches tabulated values to 6 decimals at other levels', () => {
    expect(studentTQuantile(0.975, 10)).toBeCloseTo(2.228139, 6);
    expect(studentTQuantile(0.975, 30)).toBeCloseTo(2.042272, 6);
    expect(studentTQuantile(0.975, 1000)).toBeCloseTo(1.962339, 6);
    expect(studentTQuantile(0.95, 10)).toBeCloseTo(1.812461, 6);
    expect(studentTQuantile(0.995, 5)).toBeCloseTo(4.032143, 6);
    expect(studentTQuantile(0.9, 3)).toBeCloseTo(1.637744, 6);
  });

  it('is symmetric, 0 at the median, and tends to the normal quantile', () => {
    expect(studentTQuantile(0.025, 7)).toBeCloseTo(-studentTQuantile(0.975, 7), 12);
    expect(studentTQuantile(0.5, 4)).toBe(0);
    expect(studentTQuantile(0.975, Infinity)).toBeCloseTo(1.959964, 6);
  });

  it('is continuous where it switches from the exact inversion to Cornish–Fisher', () => {
    expect(Math.abs(studentTQuantile(0.975, 1e5) - studentTQuantile(0.975, 1e5 + 1))).toBeLessThan(1e-8);
  });

  it('refuses p outside (0, 1) and df ≤ 0', () => {
    expect(() => studentTQuantile(1, 3)).toThrow(EnergyInputError);
    expect(() => studentTQuantile(0.5, 0)).toThrow(EnergyInputError);
  });
});

describe('summarize', () => {
  it('computes n, mean, sample std, 95 % t interval, cv, min and max', () => {
    const s = summarize([1, 2, 3, 4]);
    const half = 3.182446305 * (Math.sqrt(5 / 3) / 2); // t(0.975, 3) · s / √n = 2.0543…
    expect(s.n).toBe(4);
    expect(s.mean).toBe(2.5);
    expect(s.std).toBeCloseTo(1.290994, 6);
    expect(s.ci95![0]).toBeCloseTo(2.5 - half, 6);
    expect(s.ci95![1]).toBeCloseTo(2.5 + half, 6);
    expect(s.ci95![1] - 2.5).toBeCloseTo(2.054, 3);
    expect(s.cv).toBeCloseTo(1.290994 / 2.5, 6);
    expect(s).toMatchObject({ min: 1, max: 4 });
  });

  it('leaves null, undefined and NaN out of n', () => {
    const s = summarize([10, null, 12, NaN, undefined, Infinity, 14]);
    expect(s).toMatchObject({ n: 3, mean: 12, min: 10, max: 14 });
    expect(s.std).toBeCloseTo(2, 12);
  });

  it('gives [mean, mean] and std 0 for one value', () => {
    expect(summarize([42])).toEqual({ n: 1, mean: 42, std: 0, ci95: [42, 42], cv: 0, min: 42, max: 42 });
  });

  it('gives nulls for no values', () => {
    expect(summarize([null, NaN])).toEqual({ n: 0, mean: null, std: null, ci95: null, cv: null, min: null, max: null });
  });

  it('gives cv null when the mean is 0', () => {
    expect(summarize([-1, 1]).cv).toBeNull();
  });

  it('keeps precision for large, close values', () => {
    const s = summarize([1e9 + 1, 1e9 + 2, 1e9 + 3]);
    expect(s.std).toBeCloseTo(1, 9);
  });
});
