/**
 * The adaptive strategy's one decision step: given every configuration's completed runs (two
 * objectives per run, e.g. time and energy), what each configuration's state is and what to
 * submit next. Pure and cheap (O(K²) for K configurations): the scheduler calls it whenever a
 * run's results land, and a simulation calls it thousands of times.
 *
 * States (a configuration leaves `sampling` once, and stays where it went):
 *   sampling   below the minimum repetitions, or still undecided: wants another run.
 *   dropped    dominated with confidence: another configuration is better on both objectives,
 *              each one-sided test at the corrected level (racing: no more runs are spent on it).
 *   front      settled on the Pareto front: against every other configuration it is better on at
 *              least one objective with confidence, so nothing can dominate it.
 *   precise    its 95 % intervals are within the target relative half-width on both objectives:
 *              more runs would not change what is reported about it.
 *   exhausted  reached the maximum repetitions undecided.
 *
 * Confidence. A decision is a one-sided t-test on the log scale (noise is multiplicative) with the
 * variance pooled over configurations (log-stats.ts). Dropping c needs *one* configuration to
 * dominate it, and the test is repeated at every look, so each test runs at
 * α' = (1 − confidence) / ((K − 1) · L), L = maxRepetitions − minRepetitions + 1 looks
 * (Bonferroni over the possible dominators and the looks): the chance that a configuration which
 * is not dominated is ever dropped is at most 1 − confidence. Dominance on two objectives is an
 * intersection–union test: both one-sided tests must pass at α', which keeps its level α'.
 */
import { studentTCdf, studentTQuantile } from '@erg/energy';
import { logSample, pooledVariance, varianceOf, type LogSample, type Pooled } from './log-stats';

export interface AdaptiveSettings {
  /** Repetitions every configuration gets before any decision about it (≥ 2). */
  minRepetitions: number;
  /** Repetitions no configuration goes beyond. */
  maxRepetitions: number;
  /** A configuration is precise once its 95 % interval's half-width is at most this fraction of its mean on both objectives (0.05: ±5 %). */
  targetRelativeHalfWidth: number;
  /** Confidence of every drop and settle decision (0.95). */
  confidence: number;
  /** Stop submitting once one of these would be exceeded (counting runs in flight at their estimates). */
  budget?: { maxRuns?: number; maxNodeHours?: number; maxEnergyKWh?: number };
  /**
   * Stop repeating a configuration early when even maxRepetitions runs would decide nothing at the
   * differences and spread seen (withinReach). Off by default: in bench/adaptive.js it halves the
   * runs at 5–10 % noise but costs F1 (the front's means get fewer runs); not in the spec yet.
   */
  futility?: boolean;
  /**
   * Screening: a configuration may be dropped after its first run, before minRepetitions, when a
   * configuration with its first runs dominates it at the same α' with the pooled variance (one
   * run has no spread of its own to check, so this leans on the pooled one). First runs then go
   * one at a time: one of every configuration, second runs first to the most promising quarter
   * (by Pareto layer of the first runs) so that the pooled variance exists, then to the rest that
   * are not dropped by then. Off by default: configurations then always get minRepetitions.
   */
  screening?: boolean;
}

/** The names of the two objectives, for the reasons (time, energy by default). */
export type ObjectiveNames = readonly [string, string];

export type ConfigurationStatus = 'sampling' | 'dropped' | 'front' | 'precise' | 'exhausted';

export interface ConfigurationRuns {
  key: string;
  /** Each completed run's two objective values (both > 0), in the order of the objectives. */
  runs: readonly (readonly [number, number])[];
  /** Runs submitted and not finished yet. */
  pending: number;
  /**
   * Runs that ended without figures for both objectives (failed, or their energy not measured):
   * they count against maxRepetitions, so a configuration that keeps failing is not retried forever.
   */
  failed?: number;
  /** What one more run of it is expected to cost, for the node-hour and energy budgets. */
  perRun?: { nodeHours: number; energyKWh: number };
  /** Its state as last decided (states other than sampling are kept). */
  previous?: ConfigurationDecision;
}

export interface ConfigurationDecision {
  key: string;
  status: ConfigurationStatus;
  /** Completed runs when it was decided (or now, while sampling). */
  n: number;
  /** Why, in a sentence a person can check ("c=4 dropped after 3 runs: dominated by c=2 on time and energy, p < 0.01"). */
  reason: string;
  /** The configuration that dominates it (dropped). */
  by?: string;
  /** The decisive p-value (dropped: the larger of the two one-sided tests; front: the largest over the comparisons). */
  p?: number;
  /** Relative half-widths of its 95 % intervals, per objective; null below 2 runs. */
  relativeHalfWidth: [number, number] | null;
}

/** What has been spent so far (completed and failed runs; runs in flight are counted from `pending`). */
export interface Spent {
  runs: number;
  nodeHours: number;
  energyKWh: number;
}

export interface Plan {
  configurations: ConfigurationDecision[];
  /** Runs to submit now, the most useful first. */
  submit: { key: string; runs: number }[];
  /** Keys still sampling (undecided). */
  undecided: string[];
  /** Why the campaign is over: everything decided, or the budget allows no more runs; null while it goes on. */
  stop: null | { why: 'decided' | 'budget'; reason: string };
  /** The per-test level α' every decision of this step used. */
  alpha: number;
}

export interface PlanOptions {
  objectives?: ObjectiveNames;
  /** At most this many runs to submit now (the cluster's free slots); default: no limit. */
  slots?: number;
}

const fmtP = (p: number) => (p < 0.001 ? 'p < 0.001' : p < 0.01 ? 'p < 0.01' : `p = ${p.toFixed(3)}`);
const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

/** Per configuration and objective, its log-scale sample and the variance it is judged with. */
interface Sampled {
  c: ConfigurationRuns;
  logs: [LogSample, LogSample];
  /** varianceOf each objective (pooled, or its own where clearly larger); null until some configuration has 2 runs. */
  judged: [Pooled, Pooled] | null;
}

export function plan(settings: AdaptiveSettings, configs: readonly ConfigurationRuns[], spent: Spent, options: PlanOptions = {}): Plan {
  checkSettings(settings);
  const names = options.objectives ?? (['time', 'energy'] as const);
  const k = configs.length;
  // Looks at each configuration: from minRepetitions runs to maxRepetitions (screening: from 1 run).
  const looks = settings.maxRepetitions - (settings.screening ? 1 : settings.minRepetitions) + 1;
  const alpha = (1 - settings.confidence) / (Math.max(1, k - 1) * looks);
  const sampled: Sampled[] = configs.map((c) => {
    for (const r of c.runs) {
      if (!(r[0] > 0 && r[1] > 0 && Number.isFinite(r[0]) && Number.isFinite(r[1]))) {
        throw new RangeError(`configuration ${c.key}: objective values must be finite and > 0, got [${r.join(', ')}]`);
      }
    }
    return { c, logs: [logSample(c.runs.map((r) => r[0])), logSample(c.runs.map((r) => r[1]))] as [LogSample, LogSample], judged: null };
  });
  const pooled = [pooledVariance(sampled.map((s) => s.logs[0])), pooledVariance(sampled.map((s) => s.logs[1]))] as const;
  if (pooled[0] && pooled[1]) for (const s of sampled) s.judged = [varianceOf(s.logs[0], pooled[0], alpha), varianceOf(s.logs[1], pooled[1], alpha)];
  const ready = (s: Sampled) => s.c.runs.length >= settings.minRepetitions;
  // A one-sided test at α' passes where t exceeds the (1 − α') quantile: one quantile per degrees
  // of freedom (nearly always the pooled one), not one CDF per pair.
  const quantiles = new Map<number, number>();
  const critical = (df: number) => {
    let q = quantiles.get(df);
    if (q === undefined) quantiles.set(df, (q = studentTQuantile(1 - alpha, df)));
    return q;
  };
  const passes = (c: Comparison) => c.t > critical(c.df);
  const intervals = new Map<number, number>();
  const t975 = (df: number) => {
    let q = intervals.get(df);
    if (q === undefined) intervals.set(df, (q = studentTQuantile(0.975, df)));
    return q;
  };

  const decisions = new Map<string, ConfigurationDecision>();
  for (const s of sampled) {
    const kept = s.c.previous && s.c.previous.status !== 'sampling' ? s.c.previous : null;
    decisions.set(s.c.key, kept ?? decide(s));
  }

  function decide(s: Sampled): ConfigurationDecision {
    const n = s.c.runs.length;
    const rhw = relativeHalfWidths(s, t975);
    const base = { key: s.c.key, n, relativeHalfWidth: rhw };
    const failed = s.c.failed ?? 0;
    if (!ready(s) && s.c.pending === 0 && n + failed >= settings.maxRepetitions) {
      return { ...base, status: 'exhausted', reason: `${s.c.key} reached ${settings.maxRepetitions} runs with ${n} measured (${failed} without figures): too few to decide anything` };
    }
    if (!ready(s) || pooled[0] === null || pooled[1] === null) {
      const screened = settings.screening && n >= 1 && pooled[0] !== null && pooled[1] !== null ? dominatorOf(s) : null;
      if (screened) {
        return {
          ...base, status: 'dropped', by: screened.key, p: screened.p,
          reason: `${s.c.key} dropped after ${n} run${n === 1 ? '' : 's'} (screening, with the pooled spread): dominated by ${screened.key} on ${names[0]} and ${names[1]}, ${fmtP(screened.p)}`,
        };
      }
      return { ...base, status: 'sampling', reason: `${s.c.key}: ${n} of ${settings.minRepetitions} first runs${failed > 0 ? ` (${failed} without figures)` : ''}` };
    }
    // Dropped: one configuration better on both objectives with confidence (the surest one is named).
    const dominator = dominatorOf(s);
    if (dominator) {
      return { ...base, status: 'dropped', by: dominator.key, p: dominator.p, reason: `${s.c.key} dropped after ${n} runs: dominated by ${dominator.key} on ${names[0]} and ${names[1]}, ${fmtP(dominator.p)}` };
    }
    // Front: better than every other configuration on some objective with confidence.
    let worst = 0;
    let settled = true;
    for (const d of sampled) {
      if (d === s) continue;
      if (!ready(d)) {
        settled = false;
        break;
      }
      const [a, b] = [compare(s, d, 0), compare(s, d, 1)];
      const surer = a.t / critical(a.df) >= b.t / critical(b.df) ? a : b;
      if (!passes(surer)) {
        settled = false;
        break;
      }
      worst = Math.max(worst, pOf(surer));
    }
    if (settled) {
      return { ...base, status: 'front', p: worst, reason: `${s.c.key} settled on the front after ${n} runs: better than every other configuration on ${names[0]} or ${names[1]}, ${fmtP(worst)}` };
    }
    if (rhw && rhw[0] <= settings.targetRelativeHalfWidth && rhw[1] <= settings.targetRelativeHalfWidth) {
      return { ...base, status: 'precise', reason: `${s.c.key} settled after ${n} runs: its 95 % intervals are within ±${pct(settings.targetRelativeHalfWidth)} (${names[0]} ±${pct(rhw[0])}, ${names[1]} ±${pct(rhw[1])})` };
    }
    if (settings.futility && s.c.pending === 0 && !withinReach(s)) {
      return {
        ...base, status: 'exhausted',
        reason: `${s.c.key} stopped after ${n} runs: even ${settings.maxRepetitions} would decide nothing at the differences and spread seen (${names[0]} ±${pct(rhw![0])}, ${names[1]} ±${pct(rhw![1])})`,
      };
    }
    if (n + s.c.pending + (s.c.failed ?? 0) >= settings.maxRepetitions) {
      if (s.c.pending > 0) return { ...base, status: 'sampling', reason: `${s.c.key}: undecided, its last ${s.c.pending} run(s) in flight` };
      return { ...base, status: 'exhausted', reason: `${s.c.key} reached ${settings.maxRepetitions} runs undecided (${names[0]} ±${pct(rhw![0])}, ${names[1]} ±${pct(rhw![1])})` };
    }
    return { ...base, status: 'sampling', reason: `${s.c.key}: undecided after ${n} runs (${names[0]} ±${pct(rhw![0])}, ${names[1]} ±${pct(rhw![1])})` };
  }

  /** The configuration with its first runs that dominates `s` on both objectives at α', the surest one; null when none does. */
  function dominatorOf(s: Sampled): { key: string; p: number } | null {
    let dominator: { key: string; p: number } | null = null;
    for (const d of sampled) {
      if (d === s || !ready(d)) continue;
      const [a, b] = [compare(d, s, 0), compare(d, s, 1)];
      if (!(passes(a) && passes(b))) continue;
      const p = Math.max(pOf(a), pOf(b));
      if (dominator === null || p < dominator.p) dominator = { key: d.c.key, p };
    }
    return dominator;
  }

  /**
   * Whether more runs of `s` could still decide something by maxRepetitions, if the means and the
   * spread stay what they are now (futility, as in group-sequential designs): its intervals reach
   * the target; or some configuration's projected advantage on both objectives passes (dropped);
   * or its projected advantage over every other on one objective passes (front). The others are
   * projected at maxRepetitions while they sample, at what they have once decided.
   */
  function withinReach(s: Sampled): boolean {
    const most = settings.maxRepetitions;
    const at = (x: Sampled) => (x === s || decisions.get(x.c.key)?.status === 'sampling' || !decisions.has(x.c.key) ? Math.max(most, x.logs[0].n) : x.logs[0].n);
    const projected = (a: Sampled, b: Sampled, o: 0 | 1): Comparison => compare(a, b, o, at(a), at(b));
    const rhw = [0, 1].map((o) => Math.expm1(t975(s.judged![o as 0 | 1].df) * Math.sqrt(s.judged![o as 0 | 1].variance / most)));
    if (rhw[0]! <= settings.targetRelativeHalfWidth && rhw[1]! <= settings.targetRelativeHalfWidth) return true;
    let front = true;
    for (const d of sampled) {
      if (d === s || !ready(d)) continue;
      if (passes(projected(d, s, 0)) && passes(projected(d, s, 1))) return true;
      if (front && !(passes(projected(s, d, 0)) || passes(projected(s, d, 1)))) front = false;
    }
    return front;
  }

  // What to submit: the first runs of every configuration first, then one more of each undecided
  // configuration with nothing in flight, the least precise first. No repetition beyond the first
  // runs until every configuration has its first runs measured: until then nothing can be decided
  // against the ones still missing, and a run added then may turn out not to be needed.
  const firstRoundOpen = sampled.some((s) => !ready(s) && decisions.get(s.c.key)!.status === 'sampling');
  const firstRuns = settings.screening ? screeningFirstRuns() : null;
  const wants: { key: string; runs: number; order: number; perRun?: ConfigurationRuns['perRun'] }[] = [];
  for (const s of sampled) {
    const d = decisions.get(s.c.key)!;
    if (d.status !== 'sampling') continue;
    const have = s.c.runs.length + s.c.pending;
    // Every attempt counts against the maximum, the failed ones too.
    const room = settings.maxRepetitions - have - (s.c.failed ?? 0);
    if (room <= 0) continue;
    if (have < settings.minRepetitions) {
      const runs = firstRuns ? (firstRuns.get(s.c.key) ?? 0) : settings.minRepetitions - have;
      if (runs > 0) wants.push({ key: s.c.key, runs: Math.min(room, runs), order: -1, ...(s.c.perRun ? { perRun: s.c.perRun } : {}) });
    }
    else if (s.c.pending === 0 && !firstRoundOpen) {
      const rhw = d.relativeHalfWidth;
      wants.push({ key: s.c.key, runs: 1, order: rhw ? -Math.max(rhw[0], rhw[1]) : 0, ...(s.c.perRun ? { perRun: s.c.perRun } : {}) });
    }
  }
  wants.sort((a, b) => a.order - b.order || (a.key < b.key ? -1 : 1));

  /**
   * Screening's first runs, per configuration still sampling below minRepetitions: one run while
   * it has none; once every one has a first run measured, the rest of its first runs to the most
   * promising quarter (by Pareto layer of the means so far) — until that many have all their
   * first runs, so that the pooled variance has as many degrees of freedom — then to the rest not
   * dropped by then.
   */
  function screeningFirstRuns(): Map<string, number> {
    const runs = new Map<string, number>();
    const below = sampled.filter((s) => !ready(s) && decisions.get(s.c.key)!.status === 'sampling');
    let unmeasured = false;
    for (const s of below) {
      if (s.c.runs.length + s.c.pending === 0) runs.set(s.c.key, 1);
      if (s.c.runs.length === 0) unmeasured = true;
    }
    if (unmeasured) return runs;
    const pilot = Math.ceil(k / 4);
    const measured = sampled.filter(ready).length;
    const onTheWay = sampled.filter((s) => !ready(s) && s.c.runs.length + s.c.pending >= settings.minRepetitions).length;
    const waiting = below.filter((s) => s.c.pending === 0 && s.c.runs.length + s.c.pending < settings.minRepetitions);
    const chosen = measured >= pilot ? waiting : byLayer(waiting).slice(0, Math.max(0, pilot - measured - onTheWay));
    for (const s of chosen) runs.set(s.c.key, settings.minRepetitions - s.c.runs.length);
    return runs;
  }

  const budget = settings.budget ?? {};
  const inFlight = configs.reduce(
    (acc, c) => ({ runs: acc.runs + c.pending, nodeHours: acc.nodeHours + c.pending * (c.perRun?.nodeHours ?? 0), energyKWh: acc.energyKWh + c.pending * (c.perRun?.energyKWh ?? 0) }),
    { runs: 0, nodeHours: 0, energyKWh: 0 },
  );
  const used = { runs: spent.runs + inFlight.runs, nodeHours: spent.nodeHours + inFlight.nodeHours, energyKWh: spent.energyKWh + inFlight.energyKWh };
  let slots = options.slots ?? Number.POSITIVE_INFINITY;
  let budgetHit = false;
  const submit: Plan['submit'] = [];
  for (const w of wants) {
    let runs = 0;
    while (runs < w.runs && slots > 0) {
      const next = { runs: used.runs + 1, nodeHours: used.nodeHours + (w.perRun?.nodeHours ?? 0), energyKWh: used.energyKWh + (w.perRun?.energyKWh ?? 0) };
      if ((budget.maxRuns !== undefined && next.runs > budget.maxRuns) || (budget.maxNodeHours !== undefined && next.nodeHours > budget.maxNodeHours) || (budget.maxEnergyKWh !== undefined && next.energyKWh > budget.maxEnergyKWh)) {
        budgetHit = true;
        break;
      }
      Object.assign(used, next);
      runs++;
      slots--;
    }
    if (runs > 0) submit.push({ key: w.key, runs });
  }

  const configurations = configs.map((c) => decisions.get(c.key)!);
  const undecided = configurations.filter((d) => d.status === 'sampling').map((d) => d.key);
  let stop: Plan['stop'] = null;
  if (inFlight.runs === 0 && submit.length === 0) {
    if (undecided.length === 0) stop = { why: 'decided', reason: `every configuration is decided after ${spent.runs} runs` };
    else if (budgetHit) stop = { why: 'budget', reason: `the budget allows no more runs after ${spent.runs} (${undecided.length} configuration(s) undecided)` };
  }
  return { configurations, submit, undecided, stop, alpha };
}

/** Configurations in the order of their Pareto layer on the log means (the non-dominated first), then by key. */
function byLayer(xs: readonly Sampled[]): Sampled[] {
  const layer = new Map<Sampled, number>();
  let left = [...xs];
  for (let l = 0; left.length > 0; l++) {
    const front = left.filter((p) => !left.some((q) => q !== p && q.logs[0].mean <= p.logs[0].mean && q.logs[1].mean <= p.logs[1].mean && (q.logs[0].mean < p.logs[0].mean || q.logs[1].mean < p.logs[1].mean)));
    for (const p of front) layer.set(p, l);
    left = left.filter((p) => !layer.has(p));
  }
  return [...xs].sort((a, b) => layer.get(a)! - layer.get(b)! || (a.c.key < b.c.key ? -1 : 1));
}

/** Relative half-widths of the 95 % intervals of the mean, per objective (exp(t·se) − 1 on the log scale); null below 2 runs. */
function relativeHalfWidths(s: Sampled, t975: (df: number) => number): [number, number] | null {
  if (s.c.runs.length < 2 || s.judged === null) return null;
  const one = (o: 0 | 1) => Math.expm1(t975(s.judged![o].df) * Math.sqrt(s.judged![o].variance / s.logs[o].n));
  return [one(0), one(1)];
}

/** The t statistic that `a` has the smaller mean than `b` on objective `o` (log scale), with its degrees of freedom. */
interface Comparison {
  t: number;
  df: number;
}

/**
 * `a` against `b` on objective `o`: with the pooled variance's degrees of freedom where both are
 * judged with it, else Welch's. t > 0 where `a` looks better (smaller); ±Infinity for constant values.
 * `na`, `nb`: the runs to assume (a projection), by default those they have.
 */
function compare(a: Sampled, b: Sampled, o: 0 | 1, na = a.logs[o].n, nb = b.logs[o].n): Comparison {
  const va = a.judged![o];
  const vb = b.judged![o];
  const ua = va.variance / na;
  const ub = vb.variance / nb;
  const se = Math.sqrt(ua + ub);
  const diff = b.logs[o].mean - a.logs[o].mean;
  const df = va === vb ? va.df : (ua + ub) ** 2 / ((ua * ua) / va.df + (ub * ub) / vb.df);
  if (se === 0) return { t: diff > 0 ? Infinity : diff < 0 ? -Infinity : 0, df: Math.max(df, 1) };
  return { t: diff / se, df };
}

/** One-sided p-value of a comparison (H₀: `a` is not better). */
const pOf = (c: Comparison) => (c.t === Infinity ? 0 : c.t === -Infinity ? 1 : studentTCdf(-c.t, c.df));

function checkSettings(s: AdaptiveSettings): void {
  if (!(Number.isInteger(s.minRepetitions) && s.minRepetitions >= 2)) throw new RangeError(`minRepetitions must be an integer ≥ 2, got ${s.minRepetitions}`);
  if (!(Number.isInteger(s.maxRepetitions) && s.maxRepetitions >= s.minRepetitions)) throw new RangeError(`maxRepetitions must be an integer ≥ minRepetitions (${s.minRepetitions}), got ${s.maxRepetitions}`);
  if (!(s.confidence > 0 && s.confidence < 1)) throw new RangeError(`confidence must lie strictly between 0 and 1, got ${s.confidence}`);
  if (!(s.targetRelativeHalfWidth > 0)) throw new RangeError(`targetRelativeHalfWidth must be > 0, got ${s.targetRelativeHalfWidth}`);
}
