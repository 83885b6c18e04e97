import { meanVar, studentTCdf } from '@erg/energy';
import type { SequentialPolicyOutput, SequentialRunStop, SequentialStop, SpendingFunction } from '@erg/spec';
import { RegressInputError } from './errors';
import { normalCdf, normalQuantile } from './normal';
import { logRatioOfMeans } from './relative-change';
import { verdictFor, type Metric, type RegressionPolicy, type Verdict } from './verdict';
import { welch } from './welch';

export type { SequentialPolicyOutput as SequentialPolicy, SequentialRunStop, SequentialStop, SpendingFunction } from '@erg/spec';

/**
 * Sequential testing for suites (issue 16 §2). Glossary:
 * - **look**: one judgment of a configuration after its scheduled repetitions have ended, at
 *   r = minRepetitions, minRepetitions + 1, …, maxRepetitions repetitions; each r is looked at once.
 * - **efficacy look**: a look that may declare a regression (or an improvement): r = min, 2·min,
 *   4·min, … below the maximum, and the maximum. Every look may stop for futility; only these spend
 *   alpha, because looks one repetition apart are nearly the same test and Bonferroni (below) would
 *   charge each of them in full.
 * - **information fraction** t = r / maxRepetitions.
 * - **spending function** α(t): the share of alpha spent by fraction t (Lan–DeMets), α(1) = alpha.
 * - **level** of an efficacy look: α(t) − α(t of the previous efficacy look), divided by the
 *   number of tests of the run (configurations × metrics) when alpha is the run's. The levels add
 *   up to alpha, so by Bonferroni — whatever the correlation between looks and between tests —
 *   P(a false regression at any look, in any test) ≤ alpha. Each test is Welch's statistic with
 *   its df capped at the equal-variance value (boundaryVerdict): Welch–Satterthwaite's estimated
 *   df alone does not hold these small levels with unequal sample sizes.
 * - **futility**: stopping with `pass` once the regression the run must catch (`detect`, default
 *   twice the threshold) is ruled out: the one-sided test of "change ≥ detect" on the log ratio of
 *   means rejects at level beta. Every look may stop for futility, at beta each (not spent: a
 *   futility stop only removes chances of declaring a regression, so it never raises the
 *   false-regression rate; what it costs is power against a change of `detect` or more, which the
 *   bench measures — bench/sequential-suite.js).
 */

/** α(t): the cumulative error a spending function has spent by information fraction t ∈ [0, 1]. */
export function spent(spending: SpendingFunction, total: number, t: number): number {
  if (!(total > 0 && total < 1)) throw new RegressInputError('ERG_REGRESS_BAD_ARGUMENT', `the error to spend must be strictly between 0 and 1, got ${total}`);
  if (t <= 0) return 0;
  if (t >= 1) return total;
  // Pocock-type: spends nearly evenly, so early looks can decide. O'Brien–Fleming-type: keeps
  // almost everything for the end, so the last look is nearly the fixed design's test.
  if (spending === 'pocock') return total * Math.log(1 + (Math.E - 1) * t);
  // 2 − 2Φ(z/√t), written as 2Φ(−z/√t): the difference would round to 0 at small t.
  return 2 * normalCdf(-normalQuantile(1 - total / 2) / Math.sqrt(t));
}

function checkRange(minRepetitions: number, maxRepetitions: number): void {
  if (!(Number.isInteger(minRepetitions) && Number.isInteger(maxRepetitions) && minRepetitions >= 1 && maxRepetitions > minRepetitions)) {
    throw new RegressInputError('ERG_REGRESS_BAD_ARGUMENT', `looks need integer repetitions with 1 ≤ min < max, got min ${minRepetitions} and max ${maxRepetitions}`);
  }
}

/** The repetitions at which a regression may be declared: min, 2·min, 4·min, … below max, and max. */
export function efficacyLooks(minRepetitions: number, maxRepetitions: number): number[] {
  checkRange(minRepetitions, maxRepetitions);
  const looks: number[] = [];
  for (let r = minRepetitions; r < maxRepetitions; r *= 2) looks.push(r);
  looks.push(maxRepetitions);
  return looks;
}

/** The level of the look at `repetitions` among `looks` (ascending): its increment of the spending function; 0 off the looks. */
function incrementAt(spending: SpendingFunction, total: number, repetitions: number, looks: readonly number[], maxRepetitions: number): number {
  const i = looks.indexOf(repetitions);
  if (i < 0) return 0;
  const previous = i === 0 ? 0 : spent(spending, total, looks[i - 1]! / maxRepetitions);
  return spent(spending, total, repetitions / maxRepetitions) - previous;
}

/** The level an efficacy look tests a regression at (0 at a look that is not one); `tests` share alpha. */
export function efficacyLevel(spending: SpendingFunction, alpha: number, repetitions: number, minRepetitions: number, maxRepetitions: number, tests = 1): number {
  const r = Math.min(Math.max(repetitions, minRepetitions), maxRepetitions);
  return incrementAt(spending, alpha, r, efficacyLooks(minRepetitions, maxRepetitions), maxRepetitions) / tests;
}

/** A verdict at one look, and whether the configuration's test goes on. */
export interface SequentialVerdict {
  /** As verdictFor's at the look's level; an interim `pass` is only "nothing shown yet" while `next` is continue. */
  verdict: Verdict;
  next: 'stop' | 'continue';
  /** Why it stopped; null while it continues. */
  stop: SequentialStop | null;
  /** The level this look tested a regression (and an improvement) at; 0 at a look that is not an efficacy look. */
  level: number;
  /** The level this look tested "change ≥ detect" at, for futility (beta). */
  futilityLevel: number;
}

/** A regression policy with its sequential setting present. */
export type SequentialRegressionPolicy = RegressionPolicy & { sequential: SequentialPolicyOutput };

function requireSequential(policy: RegressionPolicy): asserts policy is SequentialRegressionPolicy {
  const s = policy.sequential;
  if (!s) throw new RegressInputError('ERG_REGRESS_BAD_POLICY', 'policy.sequential is required for a sequential verdict (maxRepetitions, spending)');
  if (!(Number.isInteger(s.maxRepetitions) && s.maxRepetitions > policy.minRepetitions)) {
    throw new RegressInputError('ERG_REGRESS_BAD_POLICY', `policy.sequential.maxRepetitions must be an integer above minRepetitions (${policy.minRepetitions}), got ${String(s.maxRepetitions)}`);
  }
  if (s.detect !== undefined && !(s.detect > policy.threshold)) throw new RegressInputError('ERG_REGRESS_BAD_POLICY', `policy.sequential.detect must be above the threshold (${policy.threshold}), got ${String(s.detect)}`);
  if (!(s.beta > 0 && s.beta < 1)) throw new RegressInputError('ERG_REGRESS_BAD_POLICY', `policy.sequential.beta must be strictly between 0 and 1, got ${String(s.beta)}`);
}

/**
 * True when the one-sided test of "mean(candidate)/mean(baseline) ≥ 1 + change" rejects at
 * `level`: t = (log(1 + change) − log R̂) / se on the delta method's log ratio, Welch df.
 */
export function regressionRuledOut(baseline: readonly number[], candidate: readonly number[], change: number, level: number): boolean {
  const r = logRatioOfMeans(baseline, candidate);
  if (!r.ok) return false;
  const bound = Math.log(1 + change);
  if (r.se === 0) return r.logRatio < bound;
  return studentTCdf(-(bound - r.logRatio) / r.se, r.df) < level;
}

/**
 * One look of the sequential test of one metric of one configuration, with `repetitions`
 * scheduled for the candidate (its completed values are `candidate`); `tests` is how many tests of
 * the run share alpha (configurations × metrics: the run's false-regression rate is then ≤ alpha).
 * In order:
 * 1. the baseline has too few values or is too noisy → stop (`baseline_unusable`), inconclusive:
 *    no repetition of the candidate can help;
 * 2. at an efficacy look, regressed or improved at its level (verdictFor's rule, capped df) → stop (`boundary`);
 * 3. the candidate has too few values or is too noisy → continue, or at the maximum stop inconclusive;
 * 4. a regression of `detect` or more ruled out at level beta → stop, pass (`regression_ruled_out`);
 * 5. continue; at the maximum stop with pass (`max_repetitions`).
 */
export function sequentialVerdictFor(
  metric: Metric, baseline: readonly number[], candidate: readonly number[], repetitions: number, policy: RegressionPolicy, tests = 1,
): SequentialVerdict {
  requireSequential(policy);
  if (!(Number.isInteger(tests) && tests >= 1)) throw new RegressInputError('ERG_REGRESS_BAD_ARGUMENT', `tests must be an integer ≥ 1 (the tests of the run that share alpha), got ${tests}`);
  const { maxRepetitions, spending, beta } = policy.sequential;
  const level = efficacyLevel(spending, policy.alpha, repetitions, policy.minRepetitions, maxRepetitions, tests);
  const fLevel = beta;
  const detect = policy.sequential.detect ?? 2 * policy.threshold;
  // verdictFor for the gates, the change and its interval; the test itself is boundaryVerdict's.
  const gated = verdictFor(metric, baseline, candidate, { ...policy, alpha: Math.max(level, Number.MIN_VALUE) });
  const verdict = boundaryVerdict(gated, baseline, candidate, policy.threshold, level);
  const atMax = repetitions >= maxRepetitions;
  const at = (next: 'stop' | 'continue', stop: SequentialStop | null): SequentialVerdict => ({ verdict, next, stop, level, futilityLevel: fLevel });

  const b = meanVar(baseline);
  if (b.n < policy.minRepetitions || (b.n > 0 && Math.sqrt(b.variance) / b.mean > policy.maxCv)) return at('stop', 'baseline_unusable');
  if (verdict.status === 'regressed' || verdict.status === 'improved') return at('stop', 'boundary');
  if (verdict.status === 'inconclusive') return atMax ? at('stop', 'max_repetitions') : at('continue', null);
  if (regressionRuledOut(baseline, candidate, detect, fLevel)) return at('stop', 'regression_ruled_out');
  return atMax ? at('stop', 'max_repetitions') : at('continue', null);
}

/**
 * verdictFor's verdict with the test at a look made conservative: Welch's statistic against
 * Student t with df = min(Welch–Satterthwaite's estimate, the Satterthwaite df of equal variances
 * at these sample sizes). Welch–Satterthwaite's estimate alone rejects too often at the small
 * levels a look tests at when a few candidate repetitions face a larger baseline (measured: 5.6 ×
 * its level at 0.001, 3 against 20, lognormal at CV 10 %): a candidate whose spread came out small
 * by chance raises both t and the estimated df. Capping the df at the equal-variance value removes
 * that (measured: ≤ 1 × the level at 0.01 and 0.001 for 3–10 against 5–20 repetitions, variance
 * ratios ½–2); Hsu's min(n) − 1 is valid too but wastes the baseline's repetitions.
 */
function boundaryVerdict(v: Verdict, baseline: readonly number[], candidate: readonly number[], threshold: number, level: number): Verdict {
  if (v.status === 'inconclusive' || baseline.length < 2 || candidate.length < 2) return v;
  const w = welch(candidate, baseline);
  const df = Math.min(w.df, equalVarianceDf(baseline.length, candidate.length));
  const pGreater = Number.isFinite(w.t) ? studentTCdf(-w.t, df) : w.pGreater;
  const pLess = Number.isFinite(w.t) ? studentTCdf(w.t, df) : w.pLess;
  const change = v.change;
  const p = change !== null && change < 0 ? pLess : pGreater;
  const status = change !== null && change > threshold && pGreater < level ? 'regressed' : change !== null && change < -threshold && pLess < level ? 'improved' : 'pass';
  return { ...v, p, status };
}

/** Welch–Satterthwaite's df when both variances are equal: (1/a + 1/b)² / (1/(a²(a−1)) + 1/(b²(b−1))). */
export function equalVarianceDf(a: number, b: number): number {
  return (1 / a + 1 / b) ** 2 / (1 / (a * a * (a - 1)) + 1 / (b * b * (b - 1)));
}

/** One configuration at a look: its scheduled repetitions and its metrics' sequential verdicts. */
export interface ConfigurationLook {
  key: string;
  repetitions: number;
  verdicts: SequentialVerdict[];
}

/** What a suite run does after a look. */
export interface LookDecision {
  next: 'stop' | 'continue';
  /** The configurations that get one more repetition (empty when stopping). */
  undecided: string[];
  /** Why the run stops; null when it continues. */
  stop: Extract<SequentialRunStop, 'regressed' | 'decided' | 'max_repetitions'> | null;
  /** Per configuration: why its test stopped (null: undecided), and the level of its look. */
  configurations: { key: string; repetitions: number; stop: SequentialStop | null; level: number }[];
}

// Which metric's reason names a configuration's stop: the one that decided the most.
const STOP_RANK: Record<SequentialStop, number> = { boundary: 3, max_repetitions: 2, baseline_unusable: 1, regression_ruled_out: 0 };

/**
 * The run-level rule after a look: a regression at any configuration stops the run (CI must fail
 * on the regression already shown, as in campaignVerdict); else the configurations with an
 * undecided metric get one more repetition; else the run stops — `max_repetitions` if any
 * configuration got there, else `decided`.
 */
export function decideLook(looks: readonly ConfigurationLook[]): LookDecision {
  const configurations = looks.map((c) => {
    const undecided = c.verdicts.some((v) => v.next === 'continue');
    const stops = c.verdicts.flatMap((v) => (v.stop ? [v.stop] : []));
    const stop = undecided || stops.length === 0 ? null : stops.reduce((x, y) => (STOP_RANK[y] > STOP_RANK[x] ? y : x));
    return { key: c.key, repetitions: c.repetitions, stop, level: c.verdicts[0]?.level ?? 0 };
  });
  const regressed = looks.some((c) => c.verdicts.some((v) => v.verdict.status === 'regressed'));
  if (regressed) return { next: 'stop', undecided: [], stop: 'regressed', configurations };
  const undecided = configurations.filter((c) => c.stop === null && looks.find((l) => l.key === c.key)!.verdicts.length > 0).map((c) => c.key);
  if (undecided.length > 0) return { next: 'continue', undecided, stop: null, configurations };
  const reachedMax = configurations.some((c) => c.stop === 'max_repetitions');
  return { next: 'stop', undecided: [], stop: reachedMax ? 'max_repetitions' : 'decided', configurations };
}
