import { DEFAULT_CONFIDENCE, DEFAULT_OBJECTIVES, type CampaignResults as CampaignResultsView, type ConfigurationResult as ConfigurationResultView, type Exclusion, type Objective, type RunFlag } from '@erg/spec';
import { campaignClaims } from './claims';
import { EnergyInputError } from './errors';
import { campaignNodes } from './node-effects';
import { bestOf, paretoFront, paretoFrontOf, tradeoff, type BestOf, type ObjectivePoint, type Tradeoff, type TradeoffPoint } from './pareto';
import { FIGURE, type RunFigures } from './run-figures';
import { summarize, type Summary } from './stats';

export type { RunFigures } from './run-figures';

/** One configuration with its runs (repetitions). */
export interface ConfigurationRuns<P = Record<string, unknown>> {
  key: string;
  parameters: P;
  runs: readonly RunFigures[];
}

/**
 * One configuration's results over its repetitions: the API's ConfigurationResult (field
 * meanings there, in @erg/spec), typed by the configuration's parameters.
 */
export type ConfigurationResult<P = Record<string, unknown>> = Omit<ConfigurationResultView, 'parameters'> & { parameters: P };

/**
 * A campaign's results (the API's CampaignResults without the campaign id, the runs left out,
 * the power note, the phases, the data movement, the currency, the validity, the design and a search's unmeasured count, which the caller adds): per configuration, the Pareto front and the best configurations.
 */
export type CampaignResults<P = Record<string, unknown>> = Omit<CampaignResultsView, 'campaignId' | 'configurations' | 'runsLeftOut' | 'power' | 'phases' | 'dataMovement' | 'currency' | 'validity' | 'design' | 'unmeasured'> & {
  configurations: ConfigurationResult<P>[];
};

/** How campaignResults groups runs, and what it knows of the fingerprint classes. */
export interface CampaignResultsOptions {
  /**
   * configuration (the default): one entry per configuration. fingerprint: one entry per
   * configuration and fingerprint class its runs ran on (runs of unknown class in one entry of
   * their own), so that runs on different kinds of machine are never averaged together.
   */
  groupBy?: 'configuration' | 'fingerprint';
  /** Per fingerprint class id, the class's fields flattened to strings (`driverVersion`, `gpus[0].name`, …): what fingerprintDifferences compares. */
  fingerprintClasses?: ReadonlyMap<string, Readonly<Record<string, string>>>;
  /**
   * The two objectives the Pareto front (paretoFront, paretoOptimal, and excluded) is decided on;
   * default time and energy. best, tradeoff and each entry's point are on time and energy whatever they are.
   */
  objectives?: readonly [Objective, Objective];
  /** The confidence of the claims and the node effects (the campaign's design.confidence); default 0.95. */
  confidence?: number;
  /**
   * The campaign's run order has blocks (design.order randomized-blocks or blocks): the claims then
   * compare two entries block by block (each run's `repetition` is its block). Default false.
   */
  blocked?: boolean;
}

/** At most this many lines of fingerprintDifferences per configuration. */
export const MAX_FINGERPRINT_DIFFERENCES = 20;

/**
 * The id an entry has in paretoFront, best, tradeoff and excluded when results are grouped by
 * fingerprint: `<key>@<first 12 characters of its class>`, or `<key>@none` for runs of unknown
 * class. (Grouped by configuration, those lists hold the configuration keys.) A client relates
 * an entry to them by this function of its `key` and `fingerprint`.
 */
export function groupEntryId(key: string, fingerprint: string | null): string {
  return `${key}@${fingerprint === null ? 'none' : fingerprint.slice(0, 12)}`;
}

/** A configuration left out of the front and the best-of picks, and why. */
export type { Exclusion } from '@erg/spec';

/**
 * Summarises every configuration's repetitions and compares the configurations. The front
 * uses, per configuration, the mean time and mean energy over the runs that measured BOTH, so
 * that each point's T and E describe the same runs; a configuration without such a run is left
 * out of the comparison and listed in `excluded` with the reason.
 *
 * Each configuration also says on how many kinds of machine (fingerprint classes) its runs ran
 * and how those differ. With `groupBy: 'fingerprint'` every configuration is split by class and
 * the comparison is between those entries: paretoFront, best, tradeoff and excluded then name
 * entries by groupEntryId (`<key>@<class prefix>`), not by configuration key.
 *
 * The claims (claims.ts) say which of those picks and front memberships are distinguishable at
 * `confidence`, and the node effects (node-effects.ts) how the nodes the runs ran on differ.
 */
export function campaignResults<P = Record<string, unknown>>(configs: readonly ConfigurationRuns<P>[], options: CampaignResultsOptions = {}): CampaignResults<P> {
  const groupedBy = options.groupBy ?? 'configuration';
  const seen = new Set<string>();
  for (const c of configs) {
    if (seen.has(c.key)) throw new EnergyInputError('ERG_ENERGY_BAD_ARGUMENT', `configuration key ${JSON.stringify(c.key)} appears twice; keys must be unique`);
    seen.add(c.key);
  }
  const entries = groupedBy === 'fingerprint' ? configs.flatMap(splitByFingerprint) : configs.map(configurationEntry);
  const ids = new Set<string>();
  for (const e of entries) {
    // Only reachable by fingerprint: two classes sharing their first 12 characters, or a key that
    // contains '@' meeting another's entry id.
    if (ids.has(e.id)) throw new EnergyInputError('ERG_ENERGY_BAD_ARGUMENT', `entry id ${JSON.stringify(e.id)} appears twice when grouped by fingerprint; entry ids must be unique`);
    ids.add(e.id);
  }
  const objectives: [Objective, Objective] = [...(options.objectives ?? DEFAULT_OBJECTIVES)] as [Objective, Objective];
  const [a, b] = objectives;
  if (a === b) throw new EnergyInputError('ERG_ENERGY_BAD_ARGUMENT', `the objectives are ${a} twice; a front needs two distinct ones`);
  const onTimeAndEnergy = a === 'time' && b === 'energy';
  const excluded: Exclusion[] = [];
  const points: TradeoffPoint[] = [];
  const objectivePoints: ObjectivePoint[] = [];
  const results = entries.map((e) => {
    const { point, why, result } = summarizedEntry(e, options.fingerprintClasses);
    if (point) points.push({ key: e.id, timeS: point.timeS, energyJ: point.energyJ });
    if (onTimeAndEnergy) {
      if (!point) excluded.push({ key: e.id, why: why! });
    } else {
      const on = objectivePoint(e.runs, a, b);
      if (on.point) objectivePoints.push({ key: e.id, ...on.point });
      else excluded.push({ key: e.id, why: on.why! });
    }
    return { id: e.id, result };
  });
  // On time and energy exactly as it always was (paretoFront checks the points as before).
  const front = onTimeAndEnergy ? paretoFront(points) : paretoFrontOf(objectivePoints);
  const onFront = new Set(front);
  for (const r of results) r.result.paretoOptimal = onFront.has(r.id);
  const configurations = results.map((r) => r.result);
  const best = bestOf(points);
  const confidence = options.confidence ?? DEFAULT_CONFIDENCE;
  return {
    configurations, paretoFront: front, best: best && { ...best, carbon: leastMean(configurations, 'carbon'), cost: leastMean(configurations, 'cost') },
    tradeoff: tradeoff(points), excluded, groupedBy, objectives,
    // The claims compare what the results compare (entries); a node's effect is on configurations, whatever the grouping.
    claims: campaignClaims(entries, { confidence, objectives, noun: groupedBy === 'fingerprint' ? 'entries' : 'configurations', blocked: options.blocked === true }),
    nodes: campaignNodes(configs, { confidence }),
  };
}

/** What a run lacks when it has no figure for an objective, for `excluded`. */
const HAVING: Record<Objective, string> = {
  time: 'a measured time',
  energy: 'a measured energy',
  edp: 'a measured EDP',
  carbon: "a carbon figure (its energy measured, on a cluster with carbon settings)",
  cost: "a cost (on a cluster with a price)",
};

/** The means of two objectives over the runs that have both; else why the entry cannot be compared on them. */
function objectivePoint(runs: readonly RunFigures[], a: Objective, b: Objective): { point: { a: number; b: number } | null; why: string | null } {
  const complete = runs.filter((r) => isNumber(FIGURE[a](r)) && isNumber(FIGURE[b](r)));
  if (complete.length > 0) return { point: { a: summarize(complete.map(FIGURE[a])).mean!, b: summarize(complete.map(FIGURE[b])).mean! }, why: null };
  const why = runs.length === 0 ? 'no completed runs' : `none of its ${runs.length} completed run(s) has both ${HAVING[a]} and ${HAVING[b]} (see the runs left out)`;
  return { point: null, why };
}

/** The entry with the least mean of a figure (ties: less mean time, then id); null when none has it. */
function leastMean(configurations: readonly ConfigurationResult<unknown>[], figure: 'carbon' | 'cost'): string | null {
  const time = (c: ConfigurationResult<unknown>) => c.timeS.mean ?? Number.POSITIVE_INFINITY;
  const before = (x: ConfigurationResult<unknown>, y: ConfigurationResult<unknown>) =>
    (x[figure].mean! - y[figure].mean! || time(x) - time(y) || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0)) < 0;
  let best: ConfigurationResult<unknown> | null = null;
  for (const c of configurations) if (c[figure].mean !== null && (best === null || before(c, best))) best = c;
  return best?.id ?? null;
}

/**
 * A configuration as its entry when grouped by configuration; the same entry for the same
 * configuration object (a reader that keeps its runs' figures between reads passes an unchanged
 * configuration again as the same object: its entry is then known unchanged without comparing its runs).
 */
const entries = new WeakMap<ConfigurationRuns<unknown>, Entry<unknown>>();

function configurationEntry<P>(c: ConfigurationRuns<P>): Entry<P> {
  let e = entries.get(c) as Entry<P> | undefined;
  if (!e) entries.set(c, (e = { ...c, id: c.key, fingerprint: null }) as Entry<unknown>);
  return e;
}

/** One entry to summarise: a configuration, or its runs on one fingerprint class. */
interface Entry<P> extends ConfigurationRuns<P> {
  /** Its name in the front and the picks. */
  id: string;
  /** Its class when grouped by fingerprint; null otherwise and for runs of unknown class. */
  fingerprint: string | null;
}

/** A configuration's entries by fingerprint class, in the order the classes first appear; one (of unknown class) when it has no runs. */
function splitByFingerprint<P>(c: ConfigurationRuns<P>): Entry<P>[] {
  const byClass = new Map<string | null, RunFigures[]>();
  for (const r of c.runs) {
    const cls = typeof r.fingerprintClass === 'string' ? r.fingerprintClass : null;
    const runs = byClass.get(cls) ?? [];
    runs.push(r);
    byClass.set(cls, runs);
  }
  if (byClass.size === 0) byClass.set(null, []);
  return [...byClass].map(([fingerprint, runs]) => ({ key: c.key, parameters: c.parameters, runs, id: groupEntryId(c.key, fingerprint), fingerprint }));
}

/** An entry's point and summary as summarizedEntry last made them, with what they were made from. */
interface SummarizedEntry<P> {
  entry: Entry<P>;
  point: ConfigurationResultView['point'];
  why: string | null;
  result: ConfigurationResult<P>;
}

/**
 * Entries summarised before, by their first run: a reader that keeps its runs' figures between
 * reads (the API's results worker keeps every run's RunFigures object while the run is unchanged)
 * passes the same objects again, and an entry whose runs are all the same objects, in the same
 * order, is not summarised again — with 10,000 configurations and one run changed, one is. Run
 * figures are never changed after they are made, so the same objects mean the same figures; the
 * fingerprint classes a summary compares are named by content-derived ids, fixed for the same runs.
 * The summary object itself is shared between such calls: its paretoOptimal is set by each call.
 */
const summarized = new WeakMap<RunFigures, SummarizedEntry<unknown>>();

function summarizedEntry<P>(e: Entry<P>, classes: CampaignResultsOptions['fingerprintClasses']): SummarizedEntry<P> {
  const first = e.runs[0];
  const before = first === undefined ? undefined : (summarized.get(first) as SummarizedEntry<P> | undefined);
  if (before && sameEntry(before.entry, e)) return before;
  const { point, why } = tradeoffPoint(e.runs);
  const made: SummarizedEntry<P> = { entry: e, point, why, result: summarizeEntry(e, point, classes) };
  if (first !== undefined) summarized.set(first, made as SummarizedEntry<unknown>);
  return made;
}

function sameEntry<P>(a: Entry<P>, b: Entry<P>): boolean {
  if (a === b) return true;
  if (a.id !== b.id || a.key !== b.key || a.fingerprint !== b.fingerprint || a.parameters !== b.parameters || a.runs.length !== b.runs.length) return false;
  for (let i = 0; i < a.runs.length; i++) if (a.runs[i] !== b.runs[i]) return false;
  return true;
}

/** Mean time and energy over the runs that measured both; else why the entry cannot be compared. */
function tradeoffPoint(runs: readonly RunFigures[]): { point: ConfigurationResultView['point']; why: string | null } {
  const complete = runs.filter((r) => isNumber(r.timeS) && isNumber(r.energyJ));
  if (complete.length > 0) {
    const point = { timeS: summarize(complete.map((r) => r.timeS)).mean!, energyJ: summarize(complete.map((r) => r.energyJ)).mean!, n: complete.length };
    return { point, why: null };
  }
  const why = runs.length === 0 ? 'no completed runs' : `none of its ${runs.length} completed run(s) has both a measured time and a measured energy (see the runs left out)`;
  return { point: null, why };
}

function summarizeEntry<P>(e: Entry<P>, point: ConfigurationResultView['point'], classes: CampaignResultsOptions['fingerprintClasses']): ConfigurationResult<P> {
  const runs = e.runs;
  const names: string[] = [];
  for (const r of runs) for (const name of Object.keys(r.metrics ?? {})) if (!names.includes(name)) names.push(name);
  const metrics: Record<string, Summary> = {};
  for (const name of names) metrics[name] = summarize(runs.map((r) => r.metrics?.[name]));
  const kinds: string[] = [];
  for (const r of runs) for (const kind of Object.keys(r.components ?? {})) if (!kinds.includes(kind)) kinds.push(kind);
  const components: Record<string, Summary> = {};
  for (const kind of kinds) components[kind] = summarize(runs.map((r) => r.components?.[kind]));
  const runsPerClass = countClasses(runs);
  return {
    key: e.key,
    parameters: e.parameters,
    n: runs.length,
    timeS: summarize(runs.map((r) => r.timeS)),
    energyJ: summarize(runs.map((r) => r.energyJ)),
    edpJs: summarize(runs.map((r) => r.edpJs)),
    ed2pJs2: summarize(runs.map((r) => r.ed2pJs2)),
    avgPowerW: summarize(runs.map((r) => r.avgPowerW)),
    metrics,
    components,
    point,
    paretoOptimal: false,
    flaggedRuns: countFlags(runs),
    fingerprints: runsPerClass.size,
    fingerprintDifferences: fingerprintDifferences(runsPerClass, classes),
    fingerprint: e.fingerprint,
    id: e.id,
    carbon: summarize(runs.map((r) => r.carbonG)),
    cost: summarize(runs.map((r) => r.cost)),
  };
}

/** Runs per known fingerprint class, in the order the classes first appear. */
function countClasses(runs: readonly RunFigures[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of runs) if (typeof r.fingerprintClass === 'string') counts.set(r.fingerprintClass, (counts.get(r.fingerprintClass) ?? 0) + 1);
  return counts;
}

/**
 * How the classes a configuration's runs ran on differ: per field (by name) whose value is not
 * the same in all of them, each value with its runs, the most runs first —
 * "driverVersion: 550.54.15 (2 runs) vs 535.104.05 (1 run)". A field one class lacks reads
 * "(none)". Classes whose fields are not given cannot be compared; one line says so. At most
 * MAX_FINGERPRINT_DIFFERENCES lines, the last saying how many more there were.
 */
function fingerprintDifferences(runsPerClass: ReadonlyMap<string, number>, classes: CampaignResultsOptions['fingerprintClasses']): string[] {
  if (runsPerClass.size <= 1) return [];
  const known = [...runsPerClass].filter(([cls]) => classes?.has(cls)).map(([cls, n]) => ({ fields: classes!.get(cls)!, n }));
  const unknown = [...runsPerClass].filter(([cls]) => !classes?.has(cls));
  const names = [...new Set(known.flatMap((k) => Object.keys(k.fields)))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const lines: string[] = [];
  for (const name of names) {
    const runsPerValue = new Map<string, number>();
    for (const k of known) {
      const value = Object.hasOwn(k.fields, name) ? k.fields[name]! : '(none)';
      runsPerValue.set(value, (runsPerValue.get(value) ?? 0) + k.n);
    }
    if (runsPerValue.size <= 1) continue;
    const values = [...runsPerValue].sort(([va, na], [vb, nb]) => nb - na || (va < vb ? -1 : va > vb ? 1 : 0));
    lines.push(`${name}: ${values.map(([v, n]) => `${v} (${runs(n)})`).join(' vs ')}`);
  }
  if (unknown.length > 0) {
    const n = unknown.reduce((s, [, k]) => s + k, 0);
    lines.push(`${runs(n)} ran on ${unknown.length === 1 ? 'a kind of machine' : `${unknown.length} kinds of machine`} whose fingerprint is not known (${unknown.map(([cls]) => cls.slice(0, 12)).join(', ')})`);
  }
  if (lines.length <= MAX_FINGERPRINT_DIFFERENCES) return lines;
  const kept = lines.slice(0, MAX_FINGERPRINT_DIFFERENCES - 1);
  return [...kept, `… and ${lines.length - kept.length} more differences`];
}

function runs(n: number): string {
  return `${n} run${n === 1 ? '' : 's'}`;
}

/** How many runs carry each flag; only flags some run carries. */
function countFlags(runs: readonly RunFigures[]): Partial<Record<RunFlag, number>> {
  const counts: Partial<Record<RunFlag, number>> = {};
  for (const r of runs) for (const f of new Set(r.flags ?? [])) counts[f] = (counts[f] ?? 0) + 1;
  return counts;
}

function isNumber(x: number | null | undefined): x is number {
  return typeof x === 'number' && Number.isFinite(x);
}
