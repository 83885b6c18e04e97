import { meanVar } from '@erg/energy';
import { DEFAULT_REGRESSION_POLICY, type MetricVerdict, type RegressionPolicyOutput, type VerdictMetric } from '@erg/spec';
import { RegressInputError } from './errors';
import { relativeChange } from './relative-change';
import { welch } from './welch';

// The policy, its defaults and the verdict's shape are the API's, defined once in @erg/spec
// (field meanings there): a suite's stored policy, the API's answer and this code agree by construction.
export type { InconclusiveReason, VerdictStatus } from '@erg/spec';
export type Metric = VerdictMetric;
/** What counts as a regression. Every field is a fraction, not a percentage. */
export type RegressionPolicy = RegressionPolicyOutput;
/** A verdict on one metric of one configuration. */
export type Verdict = MetricVerdict;

/** Regression = slower or costlier by more than 5 % at p < 0.05 (the schema's defaults). */
export const DEFAULT_POLICY: Readonly<RegressionPolicy> = DEFAULT_REGRESSION_POLICY;

/**
 * Verdict on one metric of one configuration, candidate against baseline. Values must be
 * finite and positive (times and energies); leave unmeasured runs out rather than passing 0.
 *
 * Rule, in order:
 * 1. inconclusive / too_few_repetitions when either side has fewer than `minRepetitions` values;
 * 2. inconclusive / too_noisy when either side's CV exceeds `maxCv`;
 * 3. regressed when change > +threshold AND the one-sided Welch test of "candidate > baseline"
 *    gives p < alpha;
 * 4. improved when change < −threshold AND the one-sided test of "candidate < baseline" gives p < alpha;
 * 5. pass otherwise.
 *
 * The test is one-sided per direction, at alpha each: a regression is only ever declared on
 * the upper tail, so under no change P(regressed) ≤ P(upper one-sided p < alpha) = alpha, and
 * the threshold on the point estimate only removes further cases. A two-sided test at alpha
 * would spend alpha/2 per tail — false regressions at ≤ alpha/2 but less power for the same n.
 */
export function verdictFor(metric: Metric, baseline: readonly number[], candidate: readonly number[], policy: RegressionPolicy = DEFAULT_POLICY): Verdict {
  checkPolicy(policy);
  requirePositive(baseline, `${metric} baseline`);
  requirePositive(candidate, `${metric} candidate`);
  const b = meanVar(baseline);
  const c = meanVar(candidate);
  const cvBaseline = b.n === 0 ? null : Math.sqrt(b.variance) / b.mean;
  const cvCandidate = c.n === 0 ? null : Math.sqrt(c.variance) / c.mean;
  const rel = relativeChange(baseline, candidate);
  const change = rel.change;
  const ci95 = rel.ok ? rel.ci95 : null;
  let p: number | null = null;
  let pGreater = 1;
  let pLess = 1;
  if (b.n >= 2 && c.n >= 2) {
    const w = welch(candidate, baseline);
    pGreater = w.pGreater;
    pLess = w.pLess;
    p = change !== null && change < 0 ? pLess : pGreater;
  }
  const base = { metric, change, ci95, p, nBaseline: b.n, nCandidate: c.n, cvBaseline, cvCandidate };

  if (b.n < policy.minRepetitions || c.n < policy.minRepetitions) return { ...base, status: 'inconclusive', reason: 'too_few_repetitions' };
  if ((cvBaseline ?? 0) > policy.maxCv || (cvCandidate ?? 0) > policy.maxCv) return { ...base, status: 'inconclusive', reason: 'too_noisy' };
  if (change !== null && change > policy.threshold && pGreater < policy.alpha) return { ...base, status: 'regressed' };
  if (change !== null && change < -policy.threshold && pLess < policy.alpha) return { ...base, status: 'improved' };
  return { ...base, status: 'pass' };
}

function requirePositive(xs: readonly number[], what: string): void {
  const i = xs.findIndex((x) => typeof x !== 'number' || !Number.isFinite(x) || x <= 0);
  if (i >= 0) throw new RegressInputError('ERG_REGRESS_BAD_SAMPLE', `${what}[${i}] must be a finite positive number, got ${String(xs[i])}`);
}

function checkPolicy(policy: RegressionPolicy): void {
  const bad = (field: keyof RegressionPolicy, rule: string) =>
    new RegressInputError('ERG_REGRESS_BAD_POLICY', `policy.${field} must be ${rule}, got ${String(policy[field])}`);
  if (!(Number.isFinite(policy.threshold) && policy.threshold >= 0)) throw bad('threshold', 'a fraction ≥ 0 (0.05 for 5 %)');
  if (!(policy.alpha > 0 && policy.alpha < 1)) throw bad('alpha', 'strictly between 0 and 1');
  if (!(Number.isInteger(policy.minRepetitions) && policy.minRepetitions >= 2)) throw bad('minRepetitions', 'an integer ≥ 2');
  if (!(policy.maxCv > 0)) throw bad('maxCv', 'a positive fraction (0.25 for 25 %)');
}
