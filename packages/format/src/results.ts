// What every view of a campaign's results derives from GET /v1/campaigns/:id/results — the CLI's
// table, markdown and CSV, the web app's table, plot and CSV: the marks (Pareto front, best), the
// "±" of each figure, the parameter columns, the CSV's rows, the carbon and cost columns where the
// runs have those figures. Typed by the fields they read, so both the generated client's types and
// the CLI's (tuples widened to arrays) fit.
import type { CsvValue } from './csv';
import { isNumber } from './units';

export interface SummaryFields {
  n: number;
  mean: number | null;
  ci95: readonly number[] | null;
}

export interface ConfigurationFields {
  key: string;
  /** What paretoFront, best and excluded name the entry by: its key, or `<key>@<12 chars>` when grouped by fingerprint. Absent: the key. */
  id?: string;
  /** The fingerprint class its runs share when grouped by fingerprint; null otherwise. */
  fingerprint?: string | null;
  parameters: Record<string, unknown>;
  n: number;
  paretoOptimal: boolean;
  timeS: SummaryFields;
  energyJ: SummaryFields;
  avgPowerW: SummaryFields;
  edpJs: SummaryFields;
  /** gCO2e per run; n = 0 where no run had carbon settings. Absent: an API older than carbon. */
  carbon?: SummaryFields;
  /** Cost per run in the results' currency; n = 0 where no run had a price. */
  cost?: SummaryFields;
}

export interface ResultsFields<C extends ConfigurationFields = ConfigurationFields> {
  configurations: C[];
  best: { time: string; energy: string; edp: string; carbon?: string | null; cost?: string | null } | null;
  excluded: { key: string; why?: string }[];
  /** configuration: one entry per configuration; fingerprint: one per configuration and kind of machine. Absent: configuration. */
  groupedBy?: 'configuration' | 'fingerprint';
  /** The two objectives the Pareto front was decided on (?objectives=). Absent: time, energy. */
  objectives?: readonly string[];
  /** The currency of every cost; null: no run has a cost. */
  currency?: string | null;
  /** A search campaign's candidates without a completed run: counted by the API, not listed. Absent for grid and adaptive campaigns. */
  unmeasured?: { configurations: number; list?: string } | undefined;
}

/** The name paretoFront, best, tradeoff and excluded give an entry: its id, which is its key unless results are grouped by fingerprint. */
export function entryId(c: Pick<ConfigurationFields, 'key' | 'id'>): string {
  return c.id ?? c.key;
}

/** Whether the results have one entry per configuration and kind of machine (`?groupBy=fingerprint`). */
export function groupedByFingerprint(results: Pick<ResultsFields, 'groupedBy'>): boolean {
  return results.groupedBy === 'fingerprint';
}

/** The two ends of a 95 % interval, or null when there is none (absent, or not finite). */
export function interval(ci95: readonly number[] | null | undefined): [number, number] | null {
  const lo = ci95?.[0];
  const hi = ci95?.[1];
  return lo === undefined || hi === undefined || !Number.isFinite(lo) || !Number.isFinite(hi) ? null : [lo, hi];
}

/** Half the width of a 95 % interval (the "±"), or null when there is no spread to speak of (n < 2). */
export function halfWidth(summary: SummaryFields): number | null {
  const ci = interval(summary.ci95);
  if (summary.n < 2 || !ci) return null;
  return (ci[1] - ci[0]) / 2;
}

/** How a configuration stands out: on the Pareto front, runtime-, energy- or EDP-optimal; carbon- or cost-optimal where a view shows those. */
export interface Marks {
  pareto: boolean;
  bestTime: boolean;
  bestEnergy: boolean;
  bestEdp: boolean;
  /** Least mean gCO2e (marksWithFootprintOf only). */
  bestCarbon?: boolean;
  /** Least mean cost (marksWithFootprintOf only). */
  bestCost?: boolean;
}

export function marksOf(results: Pick<ResultsFields, 'best'>, c: Pick<ConfigurationFields, 'key' | 'id' | 'paretoOptimal'>): Marks {
  const id = entryId(c);
  return {
    pareto: c.paretoOptimal,
    bestTime: results.best?.time === id,
    bestEnergy: results.best?.energy === id,
    bestEdp: results.best?.edp === id,
  };
}

/** marksOf and, for views with the carbon and cost columns, least carbon and cheapest (the API's best.carbon, best.cost). */
export function marksWithFootprintOf(
  results: Pick<ResultsFields, 'best'>,
  c: Pick<ConfigurationFields, 'key' | 'id' | 'paretoOptimal'>,
): Marks & Required<Pick<Marks, 'bestCarbon' | 'bestCost'>> {
  const id = entryId(c);
  return { ...marksOf(results, c), bestCarbon: results.best?.carbon === id, bestCost: results.best?.cost === id };
}

/** The marks as letters (P T E D, then C M where marked), which read the same without colour. */
export function markLetters(marks: Marks): string {
  return [marks.pareto && 'P', marks.bestTime && 'T', marks.bestEnergy && 'E', marks.bestEdp && 'D', marks.bestCarbon && 'C', marks.bestCost && 'M']
    .filter(Boolean)
    .join(' ');
}

const OBJECTIVE_WORDS: Record<string, string> = { time: 'time', energy: 'energy', edp: 'EDP', carbon: 'carbon', cost: 'cost' };

/** What the Pareto front was decided on, in words: `time, carbon` (the API's `objectives`; time, energy without them). */
export function objectivesText(results: Pick<ResultsFields, 'objectives'>): string {
  const objectives = results.objectives && results.objectives.length > 0 ? results.objectives : ['time', 'energy'];
  return objectives.map((o) => OBJECTIVE_WORDS[o] ?? o).join(', ');
}

/**
 * The legend of markLetters for these results: the front's objectives, and C and M only where
 * the results name a least-carbon or cheapest configuration.
 */
export function markLegend(results: Pick<ResultsFields, 'objectives' | 'best'>): string {
  const parts = [`P on the Pareto front of (${objectivesText(results)})`, 'T fastest', 'E least energy', 'D lowest energy-delay product'];
  if (typeof results.best?.carbon === 'string') parts.push('C least carbon');
  if (typeof results.best?.cost === 'string') parts.push('M cheapest');
  return parts.join(' · ');
}

/** The legend of marksOf's letters on the default front. */
export const MARK_LEGEND = markLegend({ best: null });

/** Whether some configuration has a carbon figure (the carbon columns are shown only then). */
export function hasCarbon(results: Pick<ResultsFields, 'configurations'>): boolean {
  return results.configurations.some((c) => (c.carbon?.n ?? 0) > 0);
}

/** Whether some configuration has a cost (the cost columns are shown only then). */
export function hasCost(results: Pick<ResultsFields, 'configurations'>): boolean {
  return results.configurations.some((c) => (c.cost?.n ?? 0) > 0);
}

/** The configurations with measurements; the others are listed in `results.excluded`. */
export function measuredConfigurations<C extends ConfigurationFields>(results: ResultsFields<C>): C[] {
  const excluded = new Set(results.excluded.map((e) => e.key));
  return results.configurations.filter((c) => !excluded.has(entryId(c)));
}

/**
 * Up to this many configurations without measurements are shown one each; more are folded into
 * one line per reason (a search leaves most of its space untried: 988 rows of "no completed runs"
 * would bury the dozen it measured).
 */
export const UNMEASURED_SHOWN = 10;

/** Why a search's untried candidates are not rows: the API counts them (`unmeasured`) and does not list them. */
export const UNTRIED = 'not tried by the search (counted, not listed)';

/**
 * The rows of a results table: every configuration while at most UNMEASURED_SHOWN lack
 * measurements (or when `showAll`); else the measured ones, and how many are folded away, per
 * reason — a search's untried candidates always folded (they are not in the answer to show).
 */
export function resultRows<C extends ConfigurationFields>(results: ResultsFields<C>, showAll = false): { rows: C[]; folded: { why: string; count: number }[] } {
  const untried = results.unmeasured?.configurations ?? 0;
  const untriedLine = untried > 0 ? [{ why: UNTRIED, count: untried }] : [];
  if (showAll || results.excluded.length <= UNMEASURED_SHOWN) return { rows: [...results.configurations], folded: untriedLine };
  const counts = new Map<string, number>();
  for (const e of results.excluded) counts.set(e.why ?? 'no measurements', (counts.get(e.why ?? 'no measurements') ?? 0) + 1);
  return { rows: measuredConfigurations(results), folded: [...[...counts].map(([why, count]) => ({ why, count })), ...untriedLine] };
}

/** The parameter names over all configurations, in order of first appearance. */
export function parameterNames(configurations: readonly { parameters: Record<string, unknown> }[]): string[] {
  const names: string[] = [];
  for (const c of configurations) for (const name of Object.keys(c.parameters)) if (!names.includes(name)) names.push(name);
  return names;
}

/**
 * Column headers for the parameters: each parameter's own name, or `param_<name>` where that
 * would clash with one of the fixed columns (a parameter called `n`, say).
 */
export function parameterHeaders(names: readonly string[], fixedColumns: readonly string[]): string[] {
  return names.map((name) => (fixedColumns.includes(name) ? `param_${name}` : name));
}

/** A parameter value in its text form (as in configuration keys); '' when the configuration lacks it. */
export function parameterText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** A parameter value as a CSV cell: numbers and booleans as they are (-5 stays a number), anything else as its text (which csvField neutralises). */
export function parameterCell(value: unknown): CsvValue {
  return typeof value === 'number' || typeof value === 'boolean' ? value : parameterText(value);
}

/** Figures per configuration in the results CSV after the key and the parameters. */
export const CSV_FIGURES = [
  'n', 'time_s', 'time_ci95_low', 'time_ci95_high', 'energy_j', 'energy_ci95_low', 'energy_ci95_high',
  'avg_power_w', 'edp_js', 'pareto', 'best_time', 'best_energy', 'best_edp',
] as const;

/** A column a view adds after CSV_FIGURES (the web app: the marks, the energy per component). */
export interface ExtraColumn<C> {
  header: string;
  value: (c: C) => CsvValue;
}

/**
 * The carbon and cost columns of the results CSV, as `extra` for resultsCsvRows: raw gCO2e and
 * amounts in `currency` with their 95 % intervals, and best_carbon / best_cost — carbon's only
 * when some configuration has a carbon figure, cost's only when some has a cost, so a CSV of
 * results without them keeps its columns.
 */
export function footprintCsvColumns<C extends ConfigurationFields>(results: ResultsFields<C>): ExtraColumn<C>[] {
  const ends = (s: SummaryFields | undefined) => interval(s?.ci95);
  const carbon: ExtraColumn<C>[] = [
    { header: 'carbon_gco2e', value: (c) => c.carbon?.mean ?? null },
    { header: 'carbon_ci95_low', value: (c) => ends(c.carbon)?.[0] ?? null },
    { header: 'carbon_ci95_high', value: (c) => ends(c.carbon)?.[1] ?? null },
  ];
  const cost: ExtraColumn<C>[] = [
    { header: 'cost', value: (c) => c.cost?.mean ?? null },
    { header: 'cost_ci95_low', value: (c) => ends(c.cost)?.[0] ?? null },
    { header: 'cost_ci95_high', value: (c) => ends(c.cost)?.[1] ?? null },
    { header: 'currency', value: (c) => (isNumber(c.cost?.mean) ? (results.currency ?? null) : null) },
  ];
  const withCarbon = hasCarbon(results);
  const withCost = hasCost(results);
  return [
    ...(withCarbon ? carbon : []),
    ...(withCost ? cost : []),
    ...(withCarbon ? [{ header: 'best_carbon', value: (c: C) => marksWithFootprintOf(results, c).bestCarbon }] : []),
    ...(withCost ? [{ header: 'best_cost', value: (c: C) => marksWithFootprintOf(results, c).bestCost }] : []),
  ];
}

/**
 * The rows of the results CSV, header first, one row per configuration (unmeasured ones with empty
 * figures): the key — and, grouped by fingerprint, the `fingerprint` class of the entry's runs —,
 * one column per parameter (named after it, or `param_<name>` if that would clash with another
 * column), CSV_FIGURES as raw SI numbers and true/false, then `extra`.
 */
export function resultsCsvRows<C extends ConfigurationFields>(results: ResultsFields<C>, extra: readonly ExtraColumn<C>[] = []): CsvValue[][] {
  const names = parameterNames(results.configurations);
  const leading = groupedByFingerprint(results) ? ['key', 'fingerprint'] : ['key'];
  const trailing = [...CSV_FIGURES, ...extra.map((e) => e.header)];
  const header = [...leading, ...parameterHeaders(names, [...leading, ...trailing]), ...trailing];
  const rows = results.configurations.map((c): CsvValue[] => {
    const marks = marksOf(results, c);
    return [
      c.key,
      ...(leading.length > 1 ? [c.fingerprint ?? null] : []),
      ...names.map((n) => parameterCell(c.parameters[n])),
      c.n,
      c.timeS.mean, ...(interval(c.timeS.ci95) ?? [null, null]),
      c.energyJ.mean, ...(interval(c.energyJ.ci95) ?? [null, null]),
      c.avgPowerW.mean, c.edpJs.mean,
      marks.pareto, marks.bestTime, marks.bestEnergy, marks.bestEdp,
      ...extra.map((e) => e.value(c)),
    ];
  });
  return [header, ...rows];
}

/** What of a run left out of the statistics does not count, and why: `energy not counted (its time is) — no power samples inside its window`. */
export function leftOutText(r: { leftOut: 'run' | 'energy'; why: string }): string {
  return `${r.leftOut === 'energy' ? 'energy not counted (its time is)' : 'not counted'} — ${r.why}`;
}

/** The configurations with runs that carry flags, each with how many of its runs carry which: `shared_node 2 of 3 run(s), …`. */
export function flaggedConfigurations<C extends { key: string; n: number; flaggedRuns?: Partial<Record<string, number>> }>(
  configurations: readonly C[],
  flagName: (flag: string) => string = (flag) => flag,
): { configuration: C; text: string }[] {
  return configurations
    .filter((c) => Object.keys(c.flaggedRuns ?? {}).length > 0)
    .map((c) => ({ configuration: c, text: Object.entries(c.flaggedRuns ?? {}).map(([flag, n]) => `${flagName(flag)} ${n} of ${c.n} run(s)`).join(', ') }));
}

/**
 * `items` (per-configuration members of the results: phases, data movement) in the order of the
 * results' `configurations` — so a sort of the results applies to them too —, those the results
 * do not list last, in their own order.
 */
export function inConfigurationOrder<T extends { key: string }>(configurations: readonly { key: string }[], items: readonly T[]): T[] {
  const position = new Map(configurations.map((c, i) => [c.key, i]));
  const at = (x: T) => position.get(x.key) ?? configurations.length;
  return [...items].sort((a, b) => at(a) - at(b));
}
