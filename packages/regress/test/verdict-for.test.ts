import { DEFAULT_POLICY, verdictFor } from '../src';

const base = [100, 102, 98, 101, 99];

describe('verdictFor', () => {
  it('flags a clear regression above the threshold', () => {
    const v = verdictFor('energy', base, [110, 112, 108, 111, 109], DEFAULT_POLICY);
    expect(v).toMatchObject({ metric: 'energy', status: 'regressed', nBaseline: 5, nCandidate: 5 });
    expect(v.reason).toBeUndefined();
    expect(v.change).toBeCloseTo(0.1, 12);
    expect(v.p).toBeLessThan(1e-4);
    expect(v.cvBaseline).toBeCloseTo(Math.sqrt(2.5) / 100, 12);
  });

  it('flags a clear improvement symmetrically', () => {
    const v = verdictFor('time', base, [90, 92, 88, 91, 89]);
    expect(v.status).toBe('improved');
    expect(v.change).toBeCloseTo(-0.1, 12);
    expect(v.p).toBeLessThan(1e-4); // p in the direction of the change
  });

  it('passes a significant change smaller than the threshold', () => {
    const v = verdictFor('time', base, [103, 105, 101, 104, 102]);
    expect(v.p).toBeLessThan(0.05);
    expect(v.status).toBe('pass');
  });

  it('passes a large change the test cannot confirm', () => {
    const v = verdictFor('time', [100, 130, 80], [140, 100, 110], { ...DEFAULT_POLICY, maxCv: 1 });
    expect(v.change).toBeGreaterThan(0.05);
    expect(v.p).toBeGreaterThan(0.05);
    expect(v.status).toBe('pass');
  });

  it('is inconclusive with too few repetitions, and still reports what it can', () => {
    const v = verdictFor('energy', [100, 101], [150, 151]);
    expect(v).toMatchObject({ status: 'inconclusive', reason: 'too_few_repetitions', nBaseline: 2 });
    expect(v.change).toBeCloseTo(150.5 / 100.5 - 1, 12);
    expect(v.ci95).not.toBeNull();
    const one = verdictFor('energy', [100], [150, 151, 149]);
    expect(one).toMatchObject({ status: 'inconclusive', reason: 'too_few_repetitions', ci95: null, p: null });
    expect(verdictFor('energy', [], [1, 2, 3])).toMatchObject({ change: null, cvBaseline: null, reason: 'too_few_repetitions' });
  });

  it('is inconclusive when a side is too noisy (CV 40 %)', () => {
    // Deviations ±1, ±1, 0 scaled so the sample CV is exactly 0.40.
    const s = 0.4 * 100 * Math.sqrt(4 / 4);
    const noisy = [100 - s, 100 + s, 100, 100 - s, 100 + s];
    const v = verdictFor('time', base, noisy);
    expect(v.cvCandidate).toBeCloseTo(0.4, 12);
    expect(v).toMatchObject({ status: 'inconclusive', reason: 'too_noisy' });
  });

  it('checks repetitions before noise', () => {
    expect(verdictFor('time', [50, 150], [50, 150]).reason).toBe('too_few_repetitions');
  });

  it('rejects non-positive values and bad policies with codes that name the field', () => {
    expect(() => verdictFor('energy', [1, 0, 2], base)).toThrow(expect.objectContaining({ code: 'ERG_REGRESS_BAD_SAMPLE', message: expect.stringContaining('energy baseline[1]') }));
    expect(() => verdictFor('time', base, base, { ...DEFAULT_POLICY, alpha: 5 })).toThrow(expect.objectContaining({ code: 'ERG_REGRESS_BAD_POLICY', message: expect.stringContaining('policy.alpha') }));
    expect(() => verdictFor('time', base, base, { ...DEFAULT_POLICY, minRepetitions: 1 })).toThrow(expect.objectContaining({ code: 'ERG_REGRESS_BAD_POLICY' }));
  });
});
