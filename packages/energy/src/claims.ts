/**
 * What a campaign's results claim, with how sure they are (issue 26): every comparison behind
 * "fastest", "most frugal", "lowest EDP" (and least carbon, cheapest), each entry's place on the
 * Pareto front and the trade-off between the fastest and the most frugal, as the ratio of the two
 * entries' means with its interval and whether it is distinguishable once Holm's step-down
 * adjustment has been made over every comparison of the campaign (the family).
 *
 * Glossary:
 *   entry        what the results compare: a configuration, or (grouped by fingerprint) its runs on
 *                one kind of machine. Only entries with a point (a run with both time and energy)
 *                take part.
 *   comparison   one objective, two entries: mean(other) / mean(reference) over the runs that
 *                have the objective's figure, its interval at the campaign's confidence (delta
 *                method on the log of the ratio, Welch–Satterthwaite df: two-sample.ts) and the
 *                two-sided p of "the means are equal". One per objective and unordered pair,
 *                whichever claims share it.
 *   family       the comparisons that could be tested (n ≥ 2 per side, positive means); Holm's
 *                adjustment over them keeps the chance of any false "distinguishable" in the
 *                campaign at or below 1 − confidence.
 *   tied         two entries whose comparison is not distinguishable: the results do not rank
 *                one above the other.
 */
import type { CampaignClaims, ClaimObjective, Comparison, Objective, ParetoClaim, RankClaim, TradeoffClaim } from '@erg/spec';
import { EnergyInputError } from './errors';
import { paretoFrontOf } from './pareto';
import { level, percent } from './percent';
import { FIGURE, type RunFigures } from './run-figures';
import { studentTQuantile, studentTTwoSided } from './student-t';
import { logRatioOfMeans, pairedLogRatioOfMeans } from './two-sample';

/**
 * At most this many entries take part in the claims: every rank compares its best with each of
 * them, so the work and the answer grow with the entries, and a search campaign may have
 * thousands. Those with the most runs (then the least mean time) are kept; `truncated` says so.
 */
export const MAX_CLAIM_ENTRIES = 200;

/** At most this many names in a list the summary spells out ("a, b, c and 4 more"). */
const NAMES_SHOWN = 3;

/** One entry of the results with its counted runs. */
export interface ClaimEntry {
  id: string;
  runs: readonly RunFigures[];
}

export interface ClaimsOptions {
  /** The campaign's design.confidence, strictly between 0 and 1. */
  confidence: number;
  /** The two objectives the Pareto front is decided on. */
  objectives: readonly [Objective, Objective];
  /** What the summary calls the entries; default "configurations". */
  noun?: string;
  /**
   * The campaign's run order has blocks (randomized-blocks or blocks: repetition r of every
   * configuration ran side by side): two entries are then compared block by block, over the
   * repetitions both have (pairedLogRatioOfMeans), so that drift between blocks cancels.
   */
  blocked?: boolean;
}

const RANK_OBJECTIVES: readonly ClaimObjective[] = ['time', 'energy', 'edp', 'carbon', 'cost'];

/** How a rank's best is named in the summary. */
const BEST_WORDS: Record<ClaimObjective, string> = { time: 'fastest', energy: 'least energy', edp: 'lowest EDP', carbon: 'least carbon', cost: 'cheapest' };

/** What a run lacks when a comparison on the objective has none of its runs. */
const FIGURE_WORDS: Record<ClaimObjective, string> = { time: 'a measured time', energy: 'a measured energy', edp: 'a measured EDP', carbon: 'a carbon figure', cost: 'a cost' };

/**
 * The tie-breaks of each rank, after its own mean: today's bestOf (time: less energy; energy:
 * less time; EDP: less time, then less energy; carbon and cost: less time), then the id.
 */
const TIE_BREAKS: Record<ClaimObjective, readonly ClaimObjective[]> = { time: ['energy'], energy: ['time'], edp: ['time', 'energy'], carbon: ['time'], cost: ['time'] };

/**
 * Each taking entry's figures per objective: the runs' values that are finite numbers, each run's
 * block (its repetition; null: not known), and their mean.
 */
type Samples = Map<string, Map<ClaimObjective, Sample>>;
interface Sample {
  values: number[];
  blocks: (number | null)[];
  mean: number | null;
}

/**
 * The claims of a campaign's results over `entries` (in the results' order); null when fewer than
 * two entries have a point (a run with both time and energy): there is nothing to compare.
 */
export function campaignClaims(entries: readonly ClaimEntry[], options: ClaimsOptions): CampaignClaims | null {
  const { confidence, objectives } = options;
  if (!(confidence > 0 && confidence < 1)) throw new EnergyInputError('ERG_ENERGY_BAD_ARGUMENT', `confidence must lie strictly between 0 and 1, got ${confidence}`);
  const { taking, truncated, total } = takingEntries(entries);
  if (taking.length < 2) return null;
  const samples = samplesOf(taking);
  const family = new Family(samples, confidence, options.blocked === true);

  // First every claim names the comparisons it rests on; Holm's adjustment needs the whole family
  // before any of them can say whether it is distinguishable.
  const rankPlans = RANK_OBJECTIVES.map((o) => planRank(o, taking, samples, family)).filter((r) => r !== null);
  const bestOn = (o: ClaimObjective) => rankPlans.find((r) => r.objective === o)?.best ?? null;
  const tradeoffPlan = planTradeoff(bestOn('time'), bestOn('energy'), family);
  const paretoPlans = planPareto(taking, objectives, family);
  family.adjust();

  const ranks = rankPlans.map(rankClaim);
  const pareto = paretoPlans.map(paretoClaim);
  const tradeoff = tradeoffPlan && tradeoffClaim(tradeoffPlan, confidence);
  const comparisons = family.all();
  const distinguishable = comparisons.some((c) => c.distinguishable);
  const claims = { ranks, pareto, tradeoff, distinguishable, family: family.size(), confidence, truncated };
  return {
    confidence,
    method:
      `each comparison is the ratio of two entries' means over their runs with the figure, with its ${level(confidence)} interval ` +
      (options.blocked === true
        ? '(delta method on the log of the ratio, paired by block — the runs of one repetition, which ran side by side in the campaign\'s run order — on n − 1 degrees of freedom; ' +
          'unpaired with Welch–Satterthwaite degrees of freedom where fewer than 2 blocks have both) '
        : '(delta method on the log of the ratio, Welch–Satterthwaite degrees of freedom) ') +
      'and the two-sided t-test of equal means; ' +
      `Holm's step-down adjustment over the ${family.size()} comparisons that could be tested keeps the chance of any false difference at or below ${level(1 - confidence)}`,
    family: family.size(),
    comparisons,
    ranks,
    pareto,
    tradeoff,
    distinguishable,
    summary: summaryOf(claims, taking.length, total, objectives, options.noun ?? 'configurations'),
    truncated,
  };
}

/** The entries with a point, at most MAX_CLAIM_ENTRIES of them (most complete runs, then least mean time, then id). */
function takingEntries(entries: readonly ClaimEntry[]): { taking: ClaimEntry[]; truncated: boolean; total: number } {
  // Counted without an array per entry: a campaign of 100,000 runs passes here at every read.
  const withPoint: { e: ClaimEntry; complete: number; timeS: number }[] = [];
  for (const e of entries) {
    let complete = 0;
    let timeS = 0;
    for (const r of e.runs) {
      if (!isNumber(r.timeS) || !isNumber(r.energyJ)) continue;
      complete++;
      timeS += r.timeS;
    }
    if (complete > 0) withPoint.push({ e, complete, timeS });
  }
  if (withPoint.length <= MAX_CLAIM_ENTRIES) return { taking: withPoint.map((x) => x.e), truncated: false, total: withPoint.length };
  // The order with each entry's mean time at hand (a lookup per comparison cost more than the sort).
  const ranked = withPoint.map((x, at) => ({ e: x.e, complete: x.complete, meanTimeS: x.timeS / x.complete, at }));
  ranked.sort((x, y) => y.complete - x.complete || x.meanTimeS - y.meanTimeS || compareIds(x.e.id, y.e.id));
  // The kept ones in the results' order.
  const kept = ranked.slice(0, MAX_CLAIM_ENTRIES).sort((x, y) => x.at - y.at);
  return { taking: kept.map((x) => x.e), truncated: true, total: withPoint.length };
}

function samplesOf(entries: readonly ClaimEntry[]): Samples {
  const samples: Samples = new Map();
  for (const e of entries) {
    const own = new Map<ClaimObjective, Sample>();
    for (const o of RANK_OBJECTIVES) {
      const values: number[] = [];
      const blocks: (number | null)[] = [];
      for (const r of e.runs) {
        const v = FIGURE[o](r);
        if (!isNumber(v)) continue;
        values.push(v);
        blocks.push(typeof r.repetition === 'number' ? r.repetition : null);
      }
      own.set(o, { values, blocks, mean: values.length === 0 ? null : values.reduce((s, v) => s + v, 0) / values.length });
    }
    samples.set(e.id, own);
  }
  return samples;
}

/**
 * The comparisons of a campaign, one per objective and unordered pair of entries, and Holm's
 * adjustment over those that could be tested.
 */
class Family {
  private readonly byPair = new Map<string, Comparison>();
  private readonly ids = new Set<string>();

  constructor(
    private readonly samples: Samples,
    private readonly confidence: number,
    private readonly blocked: boolean,
  ) {}

  /** The comparison of `other` against `reference` on `objective`; made once per pair, whichever claim asks first orients it. */
  compare(objective: ClaimObjective, reference: string, other: string): Comparison {
    const [a, b] = compareIds(reference, other) <= 0 ? [reference, other] : [other, reference];
    const pair = JSON.stringify([objective, a, b]);
    const known = this.byPair.get(pair);
    if (known) return known;
    let id = `${objective}:${a}|${b}`;
    // Entry ids may hold '|' themselves: two pairs could then read the same.
    for (let k = 2; this.ids.has(id); k++) id = `${objective}:${a}|${b}#${k}`;
    this.ids.add(id);
    const r = this.sample(reference, objective);
    const x = this.sample(other, objective);
    const pairs = this.blocked ? pairsOf(r, x) : null;
    const c = comparison(id, objective, reference, other, r.values, x.values, this.confidence, pairs && pairs.reference.length >= 2 ? pairs : null);
    this.byPair.set(pair, c);
    return c;
  }

  /** The comparisons that could be tested: Holm's m. */
  size(): number {
    let m = 0;
    for (const c of this.byPair.values()) if (c.p !== null) m++;
    return m;
  }

  all(): Comparison[] {
    return [...this.byPair.values()];
  }

  /**
   * Holm's step-down adjustment over the tested comparisons, filled into each of them in place (the
   * claims hold the same objects): distinguishable where the adjusted p is below 1 − confidence.
   */
  adjust(): void {
    const tested = this.all().filter((c) => c.p !== null);
    const adjusted = holm(tested.map((c) => c.p!));
    tested.forEach((c, i) => {
      c.pAdjusted = adjusted[i]!;
      c.distinguishable = adjusted[i]! < 1 - this.confidence;
    });
  }

  private sample(id: string, objective: ClaimObjective): Sample {
    return this.samples.get(id)?.get(objective) ?? { values: [], blocks: [], mean: null };
  }
}

/**
 * The two entries' values in the blocks both have (a block counted once per entry: its first run),
 * in block order: the pairs a blocked comparison is made over.
 */
function pairsOf(reference: Sample, other: Sample): { reference: number[]; other: number[] } {
  const firstPerBlock = (s: Sample) => {
    const m = new Map<number, number>();
    s.blocks.forEach((b, i) => {
      if (b !== null && !m.has(b)) m.set(b, s.values[i]!);
    });
    return m;
  };
  const r = firstPerBlock(reference);
  const x = firstPerBlock(other);
  const both = [...r.keys()].filter((b) => x.has(b)).sort((a, b) => a - b);
  return { reference: both.map((b) => r.get(b)!), other: both.map((b) => x.get(b)!) };
}

/**
 * Holm's adjusted p-values, in the order given: with p sorted ascending, p̃(i) = max over j ≤ i of
 * min(1, (m − j + 1)·p(j)). Rejecting where p̃ < α is Holm's step-down procedure at level α.
 */
export function holm(ps: readonly number[]): number[] {
  const m = ps.length;
  const order = ps.map((p, i) => ({ p, i })).sort((x, y) => x.p - y.p || x.i - y.i);
  const adjusted = new Array<number>(m);
  let running = 0;
  order.forEach(({ p, i }, rank) => {
    running = Math.max(running, Math.min(1, (m - rank) * p));
    adjusted[i] = running;
  });
  return adjusted;
}

/**
 * One comparison before Holm's adjustment (pAdjusted null, distinguishable false until
 * Family.adjust): over the `pairs` (blocked: at least 2 blocks both entries have) or, without
 * them, over every value of each.
 */
function comparison(
  id: string, objective: ClaimObjective, reference: string, other: string, all: number[], allOther: number[], confidence: number,
  pairs: { reference: number[]; other: number[] } | null,
): Comparison {
  const r = pairs ? pairs.reference : all;
  const x = pairs ? pairs.other : allOther;
  // In the schema's order: the API writes keys as the schema lists them, and so does the CLI's JSON.
  const made = (ratio: number | null, interval: [number, number] | null, p: number | null, note: string | null): Comparison => ({
    id, objective, reference, other, ratio, interval, p, pAdjusted: null, distinguishable: false, n: [r.length, x.length], paired: pairs !== null, note,
  });
  const lacking = r.length === 0 ? reference : x.length === 0 ? other : null;
  if (lacking !== null) return made(null, null, null, `${lacking} has no run with ${FIGURE_WORDS[objective]}: no ratio`);
  const test = pairs ? pairedLogRatioOfMeans(r, x) : logRatioOfMeans(r, x);
  if (!test.ok && test.reason === 'non_positive_mean') return made(null, null, null, `a mean ${objective} is not positive: no ratio`);
  const ratio = mean(x) / mean(r);
  if (!test.ok) {
    const few = r.length < 2 ? reference : other;
    return made(ratio, null, null, `${few} has fewer than 2 runs with ${FIGURE_WORDS[objective]}: its spread is unknown, so the difference cannot be tested`);
  }
  // Both samples constant: equal means carry no evidence of a difference, different ones are certain.
  if (test.se === 0) return made(ratio, [ratio, ratio], test.logRatio === 0 ? 1 : 0, null);
  const half = studentTQuantile((1 + confidence) / 2, test.df) * test.se;
  return made(ratio, [Math.exp(test.logRatio - half), Math.exp(test.logRatio + half)], studentTTwoSided(test.logRatio / test.se, test.df), null);
}

/** A rank before the adjustment: its best and the comparisons with every other entry having the figure. */
interface RankPlan {
  objective: ClaimObjective;
  best: string;
  comparisons: Comparison[];
}

/** The rank on one objective; null when fewer than 2 entries have its figure. */
function planRank(objective: ClaimObjective, entries: readonly ClaimEntry[], samples: Samples, family: Family): RankPlan | null {
  const having = entries.filter((e) => samples.get(e.id)!.get(objective)!.mean !== null);
  if (having.length < 2) return null;
  const meanOf = (id: string, o: ClaimObjective) => samples.get(id)!.get(o)!.mean ?? Number.POSITIVE_INFINITY;
  const before = (x: ClaimEntry, y: ClaimEntry) => {
    for (const o of [objective, ...TIE_BREAKS[objective]]) {
      const d = meanOf(x.id, o) - meanOf(y.id, o);
      if (d !== 0) return d;
    }
    return compareIds(x.id, y.id);
  };
  const best = having.reduce((b, e) => (before(e, b) < 0 ? e : b));
  return { objective, best: best.id, comparisons: having.filter((e) => e !== best).map((e) => family.compare(objective, best.id, e.id)) };
}

function rankClaim(plan: RankPlan): RankClaim {
  const tiedWith = plan.comparisons.filter((c) => !c.distinguishable).map((c) => (c.other === plan.best ? c.reference : c.other));
  return { objective: plan.objective, best: plan.best, tiedWith, distinguishable: tiedWith.length === 0, comparisons: plan.comparisons.map((c) => c.id) };
}

/** An entry's place on the front before the adjustment, with the comparisons it rests on. */
interface ParetoPlan {
  id: string;
  onFront: boolean;
  against: string | null;
  /** Off the front: its two comparisons with `against`. On it: per neighbour, the two comparisons with it. */
  comparisons: Comparison[];
  neighbours: { id: string; comparisons: [Comparison, Comparison] }[];
}

/**
 * Every entry with a mean of both front objectives: on the front of the means (compared with its
 * neighbours along the front), or off it (compared with its closest dominator: of the front
 * members that dominate it, the one whose worse ratio is least, the hardest to tell it apart from).
 */
function planPareto(entries: readonly ClaimEntry[], objectives: readonly [Objective, Objective], family: Family): ParetoPlan[] {
  const [a, b] = objectives;
  const points = entries.flatMap((e) => {
    const both = e.runs.filter((r) => isNumber(FIGURE[a](r)) && isNumber(FIGURE[b](r)));
    if (both.length === 0) return [];
    return [{ key: e.id, a: mean(both.map((r) => FIGURE[a](r)!)), b: mean(both.map((r) => FIGURE[b](r)!)) }];
  });
  const front = paretoFrontOf(points);
  const at = new Map(points.map((p) => [p.key, p]));
  const members = front.map((id) => at.get(id)!);
  // Adjacent members along the front (sorted by a): the left one is better on a, the right one on b.
  const links = members.slice(1).map((right, i) => {
    const left = members[i]!;
    return { left: left.key, right: right.key, comparisons: [family.compare(a, left.key, right.key), family.compare(b, right.key, left.key)] as [Comparison, Comparison] };
  });
  const onFront = new Set(front);
  return points.map((p): ParetoPlan => {
    if (onFront.has(p.key)) {
      const neighbours = links.filter((l) => l.left === p.key || l.right === p.key).map((l) => ({ id: l.left === p.key ? l.right : l.left, comparisons: l.comparisons }));
      return { id: p.key, onFront: true, against: null, comparisons: neighbours.flatMap((n) => n.comparisons), neighbours };
    }
    const closeness = (d: { a: number; b: number }) => (d.a > 0 && d.b > 0 ? Math.max(p.a / d.a, p.b / d.b) : Number.POSITIVE_INFINITY);
    const dominators = members.filter((d) => d.a <= p.a && d.b <= p.b && (d.a < p.a || d.b < p.b));
    const closest = dominators.reduce((best, d) => (closeness(d) < closeness(best) ? d : best));
    return { id: p.key, onFront: false, against: closest.key, comparisons: [family.compare(a, closest.key, p.key), family.compare(b, closest.key, p.key)], neighbours: [] };
  });
}

function paretoClaim(plan: ParetoPlan): ParetoClaim {
  const told = (c: Comparison) => c.distinguishable;
  const ids = plan.comparisons.map((c) => c.id);
  if (plan.onFront) {
    const tiedWith = plan.neighbours.filter((n) => !n.comparisons.some(told)).map((n) => n.id);
    return { id: plan.id, status: 'front', against: null, tiedWith, comparisons: ids };
  }
  return { id: plan.id, status: plan.comparisons.some(told) ? 'dominated' : 'tied_with_front', against: plan.against, tiedWith: [], comparisons: ids };
}

interface TradeoffPlan {
  fastest: string;
  mostFrugal: string;
  time: Comparison;
  energy: Comparison;
}

/** The trade-off between the fastest and the most frugal entry; null when they are one. */
function planTradeoff(fastest: string | null, mostFrugal: string | null, family: Family): TradeoffPlan | null {
  if (fastest === null || mostFrugal === null || fastest === mostFrugal) return null;
  return { fastest, mostFrugal, time: family.compare('time', fastest, mostFrugal), energy: family.compare('energy', mostFrugal, fastest) };
}

function tradeoffClaim(plan: TradeoffPlan, confidence: number): TradeoffClaim {
  const { time, energy } = plan;
  const distinguishable = time.distinguishable && energy.distinguishable;
  // T(frugal)/T(fastest) − 1 is the time it costs; 1 − E(frugal)/E(fastest) the energy it saves.
  const more = oriented(time, plan.fastest);
  const saves = oriented(energy, plan.fastest);
  const saving = saves && { point: saves.ratio === null ? null : 1 - saves.ratio, interval: saves.interval && ([1 - saves.interval[1], 1 - saves.interval[0]] as [number, number]) };
  const longer = more && { point: more.ratio === null ? null : more.ratio - 1, interval: more.interval && ([more.interval[0] - 1, more.interval[1] - 1] as [number, number]) };
  const energyText = `${effectText(saving)} energy${rangeText(saving)}`;
  const timeText = `${effectText(longer)} more time${rangeText(longer)}`;
  const statement = distinguishable
    ? `choosing ${plan.mostFrugal} over ${plan.fastest} saves ${energyText} for ${timeText}`
    : `no distinguishable trade-off between ${plan.fastest} (fastest) and ${plan.mostFrugal} (most frugal) at ${level(confidence)}: ` +
      `choosing ${plan.mostFrugal} saves ${energyText} (${verdictWord(energy)}) for ${timeText} (${verdictWord(time)})`;
  return { fastest: plan.fastest, mostFrugal: plan.mostFrugal, time: time.id, energy: energy.id, distinguishable, statement };
}

/** A comparison as mean(frugal) / mean(fastest) on its objective — whichever way the family oriented it. */
function oriented(c: Comparison, fastest: string): { ratio: number | null; interval: [number, number] | null } | null {
  if (c.reference === fastest) return { ratio: c.ratio, interval: c.interval };
  return { ratio: c.ratio === null ? null : 1 / c.ratio, interval: c.interval && [1 / c.interval[1], 1 / c.interval[0]] };
}

/** An effect's point as a percentage ("12 %"). */
function effectText(effect: { point: number | null } | null): string {
  return effect?.point == null ? 'an unknown share of' : percent(effect.point);
}

/** An effect's interval, " [8 %, 16 %]", or " (not tested)". */
function rangeText(effect: { interval: [number, number] | null } | null): string {
  return effect?.interval ? ` [${percent(effect.interval[0])}, ${percent(effect.interval[1])}]` : ' (not tested)';
}

function verdictWord(c: Comparison): string {
  return c.distinguishable ? 'distinguishable' : c.p === null ? `not tested: ${c.note}` : 'not distinguishable';
}

/** What the summary needs of the claims. */
interface SummaryInput {
  ranks: readonly RankClaim[];
  pareto: readonly ParetoClaim[];
  tradeoff: TradeoffClaim | null;
  distinguishable: boolean;
  family: number;
  confidence: number;
  truncated: boolean;
}

/**
 * The claims in a sentence: with nothing distinguishable, that there is no distinguishable
 * difference between the N entries at the confidence (an A/A campaign reads exactly this);
 * otherwise the best per objective with who it is tied with, the front, and the trade-off.
 */
function summaryOf(claims: SummaryInput, n: number, total: number, objectives: readonly [Objective, Objective], noun: string): string {
  const over = claims.truncated ? ` (claims over the ${n} with the most runs of ${total})` : '';
  const at = `at ${level(claims.confidence)} (Holm over ${claims.family} comparison${claims.family === 1 ? '' : 's'})`;
  if (!claims.distinguishable) {
    const untested = claims.family === 0 ? '; none could be tested: an entry needs at least 2 runs per figure' : '';
    return `no distinguishable difference between the ${n} ${noun} ${at}${over}${untested}`;
  }
  const ranks = claims.ranks.map((r) => `${BEST_WORDS[r.objective]} ${r.best}${r.tiedWith.length > 0 ? `, tied with ${names(r.tiedWith)}` : ''}`);
  const front = claims.pareto.filter((p) => p.status === 'front').map((p) => p.id);
  const tied = claims.pareto.filter((p) => p.status === 'tied_with_front').map((p) => p.id);
  const dominated = claims.pareto.filter((p) => p.status === 'dominated').map((p) => p.id);
  const off = [...(tied.length > 0 ? [`not told apart from it: ${names(tied)}`] : []), ...(dominated.length > 0 ? [`dominated: ${names(dominated)}`] : [])];
  const pareto = `Pareto front of (${objectives.join(', ')}): ${names(front)}${off.length > 0 ? ` (${off.join('; ')})` : ''}`;
  const tradeoff = claims.tradeoff ? [claims.tradeoff.distinguishable ? claims.tradeoff.statement : 'no distinguishable trade-off between the fastest and the most frugal'] : [];
  return `${at}${over}: ${[...ranks, pareto, ...tradeoff].join('; ')}`;
}

/** "a", "a and b", "a, b, c and 4 more". */
function names(ids: readonly string[]): string {
  if (ids.length <= 1) return ids.join('');
  if (ids.length <= NAMES_SHOWN) return `${ids.slice(0, -1).join(', ')} and ${ids[ids.length - 1]}`;
  return `${ids.slice(0, NAMES_SHOWN).join(', ')} and ${ids.length - NAMES_SHOWN} more`;
}

function mean(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

function compareIds(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}

function isNumber(x: number | null | undefined): x is number {
  return typeof x === 'number' && Number.isFinite(x);
}
