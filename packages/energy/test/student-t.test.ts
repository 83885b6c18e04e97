import { lnGamma, regularizedBeta, studentTCdf, studentTQuantile, studentTTwoSided } from '@erg/energy';

describe('studentTCdf / studentTTwoSided', () => {
  // Reference values from scipy.stats.t.
  it.each([
    [2.0, 10, 0.07338803477074037],
    [1.0, 5, 0.3632174676491229],
    [1.96, 1e6, 0.04999606758526985],
  ])('two-sided p for t=%p, df=%p', (t, df, p) => {
    expect(studentTTwoSided(t, df)).toBeCloseTo(p, 9);
    expect(studentTTwoSided(-t, df)).toBeCloseTo(p, 9);
  });

  it('matches scipy for non-integer df and both tails', () => {
    expect(studentTCdf(-3.5, 2.5)).toBeCloseTo(0.026172773480160172, 10);
    expect(1 - studentTCdf(0.5, 3.7)).toBeCloseTo(0.3226678166599659, 10);
    expect(studentTCdf(10, 1)).toBeCloseTo(0.9682744825694465, 12); // Cauchy: ½ + atan(10)/π
  });

  it('tends to the normal for large df', () => {
    expect(1 - studentTCdf(2.5, 1e7)).toBeCloseTo(0.006209673268289235, 7);
    expect(1 - studentTCdf(2.5, Infinity)).toBeCloseTo(0.00620966532577613, 7);
  });

  it('inverts studentTQuantile', () => {
    for (const df of [1, 2, 3, 4.3, 10, 57, 1000]) for (const p of [0.9, 0.975, 0.995]) expect(studentTCdf(studentTQuantile(p, df), df)).toBeCloseTo(p, 10);
  });

  it('is symmetric and monotone', () => {
    expect(studentTCdf(0, 7)).toBe(0.5);
    expect(studentTCdf(1.3, 7) + studentTCdf(-1.3, 7)).toBeCloseTo(1, 14);
    expect(studentTCdf(Infinity, 3)).toBe(1);
    expect(studentTCdf(-Infinity, 3)).toBe(0);
    let prev = 0;
    for (let t = -8; t <= 8; t += 0.25) {
      const c = studentTCdf(t, 4);
      expect(c).toBeGreaterThan(prev);
      prev = c;
    }
  });

  it('rejects df ≤ 0 and NaN t with a code', () => {
    expect(() => studentTCdf(1, 0)).toThrow(expect.objectContaining({ code: 'ERG_ENERGY_BAD_ARGUMENT' }));
    expect(() => studentTCdf(Number.NaN, 3)).toThrow(expect.objectContaining({ code: 'ERG_ENERGY_BAD_ARGUMENT' }));
  });
});

describe('regularizedBeta / lnGamma', () => {
  it('has the closed forms I_x(1,1) = x and I_x(a,1) = x^a', () => {
    expect(regularizedBeta(0.3, 1, 1)).toBeCloseTo(0.3, 14);
    expect(regularizedBeta(0.7, 3, 1)).toBeCloseTo(0.343, 13);
    expect(regularizedBeta(0.4, 2.5, 4) + regularizedBeta(0.6, 4, 2.5)).toBeCloseTo(1, 14);
  });
  it('gives ln Γ at known points', () => {
    expect(lnGamma(0.5)).toBeCloseTo(Math.log(Math.sqrt(Math.PI)), 13);
    expect(lnGamma(10)).toBeCloseTo(Math.log(362880), 12);
  });
});

describe('studentTQuantile', () => {
  it('inverts the CDF on every path: closed forms, Newton, bisection (df < 1) and Cornish–Fisher', () => {
    for (const df of [0.5, 0.8, 1, 1.5, 2, 3, 4.7, 8, 30, 1000, 1e6]) {
      for (const p of [0.9, 0.975, 0.995]) expect(studentTCdf(studentTQuantile(p, df), df)).toBeCloseTo(p, 8);
    }
    expect(studentTQuantile(0.975, 10)).toBeCloseTo(2.228138851986274, 10);
    expect(studentTQuantile(0.025, 10)).toBeCloseTo(-2.228138851986274, 10);
  });
});
