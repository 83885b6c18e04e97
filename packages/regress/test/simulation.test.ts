// The verdict logic tested by simulation (erg issue 4): seeded draws, so the measured rates are
// the same on every run; each test prints its rate as one line for the CI log and the README.
import { DEFAULT_POLICY, type RegressionPolicy, type VerdictStatus, verdictFor } from '../src';
import { mulberry32, normal } from './prng';

// Trials per simulation: 4,000 puts the binomial standard error of a 5 % rate at 0.34 points
// while keeping the file near 3 s under Jest, whose VM context makes floating-point loops slow.
const TRIALS = 4_000;
const MU = 1000;

/** Share of trials per status and reason, drawing both sides from N(μ·(1+shift), (cv·μ)²). */
function simulate(opts: { seed: number; n: number; cv: number; shift: number; policy?: RegressionPolicy; trials?: number }) {
  const z = normal(mulberry32(opts.seed));
  const trials = opts.trials ?? TRIALS;
  const draw = (mean: number) => Array.from({ length: opts.n }, () => mean * (1 + opts.cv * z()));
  const counts: Record<VerdictStatus | 'too_few_repetitions' | 'too_noisy', number> = { pass: 0, regressed: 0, improved: 0, inconclusive: 0, too_few_repetitions: 0, too_noisy: 0 };
  for (let i = 0; i < trials; i++) {
    // Normal draws at CV 40 % fall below 0 about once in 160; energies cannot, so fold them back.
    const fold = (xs: number[]) => xs.map((x) => Math.abs(x) || MU);
    const v = verdictFor('energy', fold(draw(MU)), fold(draw(MU * (1 + opts.shift))), opts.policy ?? DEFAULT_POLICY);
    counts[v.status]++;
    if (v.reason) counts[v.reason]++;
  }
  const rate = (k: keyof typeof counts) => counts[k] / trials;
  return { rate, trials };
}

const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
const fmt = (k: number) => k.toLocaleString('en-US');

describe('verdictFor by simulation', () => {
  it('false-regression rate under no change is ≤ 5 % (n=5, CV 2 %)', () => {
    const { rate, trials } = simulate({ seed: 1, n: 5, cv: 0.02, shift: 0 });
    console.log(`false-regression rate under no change: ${pct(rate('regressed'))} (${fmt(trials)} trials, n=5, CV 2 %)`);
    expect(rate('regressed')).toBeLessThanOrEqual(0.05);
  });

  it('the one-sided test alone holds its level: threshold 0 gives ≈ alpha false regressions (n=5, CV 2 %)', () => {
    // With threshold 5 % and CV 2 % the point-estimate filter alone removes nearly every false
    // alarm; dropping it shows the Welch test itself. The t-test is scale-free, so this is also
    // the rate whenever noise is large enough that the threshold never binds (CV ≳ 10 % at n=5).
    // Its expectation is ≤ alpha, so it is checked against alpha plus three binomial standard errors.
    const trials = 2_000;
    const { rate } = simulate({ seed: 2, n: 5, cv: 0.02, shift: 0, policy: { ...DEFAULT_POLICY, threshold: 0 }, trials });
    console.log(`false-regression rate under no change, threshold 0 (test alone): ${pct(rate('regressed'))} (${fmt(trials)} trials, n=5, CV 2 %)`);
    expect(rate('regressed')).toBeLessThanOrEqual(0.05 + 3 * Math.sqrt((0.05 * 0.95) / trials));
    expect(rate('regressed')).toBeGreaterThan(0.03);
  });

  it('catches a real +10 % energy increase ≥ 80 % of the time (n=5, CV 2 %)', () => {
    const { rate, trials } = simulate({ seed: 4, n: 5, cv: 0.02, shift: 0.1 });
    console.log(`detection rate of a +10 % energy increase: ${pct(rate('regressed'))} (${fmt(trials)} trials, n=5, CV 2 %)`);
    expect(rate('regressed')).toBeGreaterThanOrEqual(0.8);
  });

  it('reports the power near the threshold (+7 %, n=5, CV 2 %)', () => {
    const { rate, trials } = simulate({ seed: 5, n: 5, cv: 0.02, shift: 0.07, trials: 1_000 });
    console.log(`detection rate of a +7 % energy increase: ${pct(rate('regressed'))} (${fmt(trials)} trials, n=5, CV 2 %)`);
    expect(rate('regressed')).toBeGreaterThanOrEqual(0.8);
  });

  it('is inconclusive / too_few_repetitions with n=2', () => {
    const { rate, trials } = simulate({ seed: 6, n: 2, cv: 0.02, shift: 0.1, trials: 200 });
    console.log(`inconclusive (too_few_repetitions) with n=2: ${pct(rate('too_few_repetitions'))} (${fmt(trials)} trials, CV 2 %, +10 %)`);
    expect(rate('too_few_repetitions')).toBe(1);
  });

  it('is mostly inconclusive / too_noisy at CV 40 % and never regressed', () => {
    const { rate, trials } = simulate({ seed: 7, n: 5, cv: 0.4, shift: 0, trials: 1_000 });
    console.log(`inconclusive (too_noisy) at CV 40 %: ${pct(rate('too_noisy'))}, regressed ${pct(rate('regressed'))} (${fmt(trials)} trials, n=5, maxCv 25 %)`);
    // A sample CV from 5 draws with true CV 40 % falls under 25 % now and then (χ² with 4 df).
    expect(rate('too_noisy')).toBeGreaterThanOrEqual(0.9);
    expect(rate('regressed')).toBeLessThanOrEqual(0.05);
  });
});
