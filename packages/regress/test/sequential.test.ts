// The sequential design (issue 16 §2): spending functions, the looks that spend alpha, one look's
// rule, and the false-regression rate over every look by seeded simulation.
import {
  decideLook, efficacyLevel, efficacyLooks, equalVarianceDf, normalCdf, normalQuantile, RegressInputError, regressionRuledOut, sequentialVerdictFor, spent, welch,
  type RegressionPolicy,
} from '../src';
import { studentTCdf } from '@erg/energy';
import { mulberry32, normal } from './prng';

const policy = (over: Partial<NonNullable<RegressionPolicy['sequential']>> = {}): RegressionPolicy => ({
  threshold: 0.05, alpha: 0.05, minRepetitions: 3, maxCv: 0.25, sequential: { maxRepetitions: 10, spending: 'obrien-fleming', beta: 0.1, ...over },
});

describe('spending functions', () => {
  test('normalCdf and normalQuantile agree with the table (Φ(1.96) = 0.975) and invert each other', () => {
    expect(normalCdf(1.959964)).toBeCloseTo(0.975, 6);
    expect(normalQuantile(0.975)).toBeCloseTo(1.959964, 5);
    for (const p of [1e-6, 0.001, 0.3, 0.9, 0.999999]) expect(normalCdf(normalQuantile(p))).toBeCloseTo(p, 7);
  });

  test.each(['pocock', 'obrien-fleming'] as const)('%s spends nothing at 0, everything at 1, and more with every look', (s) => {
    expect(spent(s, 0.05, 0)).toBe(0);
    expect(spent(s, 0.05, 1)).toBe(0.05);
    let last = 0;
    for (let t = 0.05; t <= 1.0001; t += 0.05) {
      const a = spent(s, 0.05, t);
      expect(a).toBeGreaterThan(last);
      last = a;
    }
  });

  test("O'Brien–Fleming keeps alpha for the end (Lan–DeMets: 2 − 2Φ(z/√t)); Pocock spends more early", () => {
    // 2 − 2Φ(2.2414 / √0.5) = 0.00153 for one-sided alpha 0.025 … here alpha 0.05: z(0.975) = 1.96.
    expect(spent('obrien-fleming', 0.05, 0.5)).toBeCloseTo(2 - 2 * normalCdf(1.959964 / Math.SQRT1_2), 6);
    expect(spent('obrien-fleming', 0.05, 0.5)).toBeCloseTo(0.00557, 4);
    expect(spent('pocock', 0.05, 0.5)).toBeCloseTo(0.05 * Math.log(1 + (Math.E - 1) / 2), 10);
    expect(spent('pocock', 0.05, 0.3)).toBeGreaterThan(spent('obrien-fleming', 0.05, 0.3));
  });

  test('efficacy looks double from the minimum to the maximum, and their levels add up to alpha (split over the tests)', () => {
    expect(efficacyLooks(3, 10)).toEqual([3, 6, 10]);
    expect(efficacyLooks(3, 20)).toEqual([3, 6, 12, 20]);
    expect(efficacyLooks(3, 5)).toEqual([3, 5]);
    for (const s of ['pocock', 'obrien-fleming'] as const) {
      let sum = 0;
      for (let r = 3; r <= 20; r++) sum += efficacyLevel(s, 0.05, r, 3, 20, 8);
      expect(sum).toBeCloseTo(0.05 / 8, 12);
      expect(efficacyLevel(s, 0.05, 4, 3, 20)).toBe(0);
    }
    expect(() => efficacyLooks(3, 3)).toThrow(RegressInputError);
  });
});

describe('one look', () => {
  const z = normal(mulberry32(5));
  const draw = (n: number, mean: number, cv: number) => Array.from({ length: n }, () => mean * (1 + cv * z()));

  test('a large regression crosses the boundary; a quiet candidate rules a regression out; the maximum is final', () => {
    const base = draw(10, 1000, 0.02);
    // At 6 repetitions (an efficacy look; at 3, O'Brien–Fleming has spent almost nothing).
    const big = sequentialVerdictFor('energy', base, draw(6, 1300, 0.02), 6, policy());
    expect(big).toMatchObject({ next: 'stop', stop: 'boundary', verdict: { status: 'regressed' } });
    const quiet = sequentialVerdictFor('energy', base, draw(3, 1000, 0.01), 3, policy());
    expect(quiet).toMatchObject({ next: 'stop', stop: 'regression_ruled_out', verdict: { status: 'pass' } });
    const noisy = draw(4, 1000, 0.12);
    expect(sequentialVerdictFor('energy', base, noisy, 4, policy())).toMatchObject({ next: 'continue', stop: null, level: 0 });
    expect(sequentialVerdictFor('energy', base, noisy, 10, policy()).next).toBe('stop');
  });

  test('a baseline too small or too noisy stops at once: no repetition of the candidate helps', () => {
    expect(sequentialVerdictFor('time', [10, 10.1], draw(3, 10, 0.01), 3, policy())).toMatchObject({ next: 'stop', stop: 'baseline_unusable', verdict: { status: 'inconclusive' } });
  });

  test('monotone in the change: a larger planted change never turns a regression back into a pass', () => {
    const base = draw(10, 1000, 0.03);
    const unit = draw(6, 1, 0.03);
    let regressed = false;
    for (let change = 0; change <= 0.4; change += 0.01) {
      const v = sequentialVerdictFor('energy', base, unit.map((u) => 1000 * (1 + change) * u), 6, policy());
      if (regressed) expect(v.verdict.status).toBe('regressed');
      regressed ||= v.verdict.status === 'regressed';
    }
    expect(regressed).toBe(true);
  });

  test('the capped df is never above Welch–Satterthwaite nor the equal-variance value', () => {
    expect(equalVarianceDf(3, 3)).toBeCloseTo(4, 10);
    expect(equalVarianceDf(20, 3)).toBeCloseTo(2.64, 2);
    const w = welch([1, 2, 3], [1, 1.1, 1.2, 1.3, 1.2, 1.1]);
    expect(Math.min(w.df, equalVarianceDf(6, 3))).toBeLessThanOrEqual(w.df);
    expect(studentTCdf(0, 3)).toBeCloseTo(0.5, 10);
  });

  test('futility rules out a change only when the upper bound is below it', () => {
    expect(regressionRuledOut([100, 100, 100], [100, 100, 100], 0.1, 0.1)).toBe(true);
    expect(regressionRuledOut([100, 101, 99], [115, 114, 116], 0.1, 0.1)).toBe(false);
  });

  test('a policy without sequential, or with detect at the threshold, is refused', () => {
    const { sequential: _, ...fixed } = policy();
    expect(() => sequentialVerdictFor('time', [1, 2, 3], [1, 2, 3], 3, fixed)).toThrow(/policy.sequential is required/);
    expect(() => sequentialVerdictFor('time', [1, 2, 3], [1, 2, 3], 3, policy({ detect: 0.05 }))).toThrow(/detect must be above the threshold/);
  });

  test('decideLook: a regression anywhere stops the run; else the undecided configurations continue', () => {
    const v = (next: 'stop' | 'continue', status: 'pass' | 'regressed', stop: 'boundary' | 'regression_ruled_out' | 'max_repetitions' | null) =>
      ({ next, stop, level: 0.001, futilityLevel: 0.1, verdict: { metric: 'time' as const, status, change: 0, ci95: null, p: null, nBaseline: 3, nCandidate: 3, cvBaseline: 0, cvCandidate: 0 } });
    const cont = decideLook([{ key: 'a', repetitions: 3, verdicts: [v('stop', 'pass', 'regression_ruled_out'), v('continue', 'pass', null)] }, { key: 'b', repetitions: 3, verdicts: [v('stop', 'pass', 'regression_ruled_out')] }]);
    expect(cont).toMatchObject({ next: 'continue', undecided: ['a'], stop: null, configurations: [{ key: 'a', stop: null }, { key: 'b', stop: 'regression_ruled_out' }] });
    expect(decideLook([{ key: 'a', repetitions: 3, verdicts: [v('stop', 'regressed', 'boundary'), v('continue', 'pass', null)] }])).toMatchObject({ next: 'stop', stop: 'regressed' });
    expect(decideLook([{ key: 'a', repetitions: 10, verdicts: [v('stop', 'pass', 'max_repetitions')] }])).toMatchObject({ next: 'stop', stop: 'max_repetitions' });
    expect(decideLook([{ key: 'a', repetitions: 3, verdicts: [v('stop', 'pass', 'regression_ruled_out')] }])).toMatchObject({ next: 'stop', stop: 'decided' });
  });
});

describe('the false-regression rate over all looks, by seeded simulation', () => {
  // One metric of one configuration run to its stop, baseline at the maximum. Threshold 0 takes
  // the practical filter away, so what is measured is the tests' level over every look.
  function simulate(opts: { seed: number; cv: number; shift: number; spending: 'pocock' | 'obrien-fleming'; trials: number; threshold?: number }) {
    const z = normal(mulberry32(opts.seed));
    const p: RegressionPolicy = { ...policy({ spending: opts.spending, detect: 0.1 }), threshold: opts.threshold ?? 0.05 };
    const draw = (n: number, mean: number) => Array.from({ length: n }, () => mean * Math.exp(opts.cv * z()));
    let regressed = 0;
    let runs = 0;
    for (let i = 0; i < opts.trials; i++) {
      const base = draw(10, 1000);
      const cand = draw(3, 1000 * (1 + opts.shift));
      for (;;) {
        const v = sequentialVerdictFor('energy', base, cand, cand.length, p);
        if (v.next === 'stop') {
          if (v.verdict.status === 'regressed') regressed++;
          break;
        }
        cand.push(...draw(1, 1000 * (1 + opts.shift)));
      }
      runs += cand.length;
    }
    return { rate: regressed / opts.trials, meanRuns: runs / opts.trials };
  }

  test.each(['obrien-fleming', 'pocock'] as const)('%s: under no change, at most alpha (threshold 0, CV 10 %%, 3 to 10 repetitions)', (spending) => {
    const trials = 3_000;
    const { rate, meanRuns } = simulate({ seed: 11, cv: 0.1, shift: 0, spending, trials, threshold: 0 });
    console.log(`sequential ${spending}: false regressions ${(100 * rate).toFixed(2)} % over all looks, ${meanRuns.toFixed(2)} repetitions on average (${trials} trials)`);
    expect(rate).toBeLessThanOrEqual(0.05);
  });

  test('a +10 % change at CV 2 % is caught ≥ 80 % of the time by one test alone, in fewer repetitions than the maximum', () => {
    // +10 % is exactly `detect` here, where futility (beta 0.1 at every look) costs the most power;
    // a suite has several configurations changed at once and catches it nearly always (the bench).
    const { rate, meanRuns } = simulate({ seed: 12, cv: 0.02, shift: 0.1, spending: 'obrien-fleming', trials: 1_000 });
    console.log(`sequential obrien-fleming: +10 % caught ${(100 * rate).toFixed(1)} % by one test, ${meanRuns.toFixed(2)} repetitions on average`);
    expect(rate).toBeGreaterThanOrEqual(0.8);
    expect(meanRuns).toBeLessThan(10);
  });
});
