import type { CampaignRunDataMovementRow, CampaignRunPhasesRow, ConfigurationEnergyRow, findCampaignPowerContext, RunNodeRecord } from '@erg/db';
import {
  addValidityTallies, campaignDataMovement, campaignPhases, campaignResults, countedFigures, tallyValidity, validityOfTally, type CountedFigures, type CountingOptions, type RunFigures,
  type StoredFigures, type ValidityTally,
} from '@erg/energy';
import { DEFAULT_CONFIDENCE, RunDataMovement, RunPhases, type CampaignDataMovement, type CampaignPhases, type CampaignResults, type Objective, type RunLeftOut } from '@erg/spec';
import { campaignDesignView } from './design-view';
import { runFingerprintClasses } from './fingerprint-classes';
import { runNodeOf } from './run-node';

/**
 * A campaign's results from everything they depend on, and nothing else: the pure half of
 * campaignResultsView (load-campaign-results.ts reads the inputs from the database). `erg verify`
 * recomputes a bundle's results with it offline, from the runs' recomputed figures. This module
 * imports no database code (types only), so the CLI can bundle it.
 */

/** Everything a campaign's results are computed from: the five reads of readCampaignFigureInputs. */
export interface CampaignFigureInputs {
  /** Every configuration with its completed runs' figures that count (listConfigurationEnergies). */
  rows: ConfigurationEnergyRow[];
  /** The nodes of every run, with their fingerprints, by run id. */
  runNodes: Map<string, RunNodeRecord[]>;
  /** The campaign's spec, the run order its runs followed (its design columns) and its cluster's capabilities (whether erg set the power state). */
  context: Awaited<ReturnType<typeof findCampaignPowerContext>>;
  /** The stored energy per phase of the completed runs that have it. */
  phaseRows: CampaignRunPhasesRow[];
  /** The stored data movement of the completed runs that have it. */
  movementRows: CampaignRunDataMovementRow[];
}

/**
 * Each configuration's completed runs with the figures that count (countedFigures; `counting`: valid
 * runs only, where the reader asks), and the runs left out and why. Costs count in one currency,
 * the one most of them are in (ties: the first alphabetically); a run priced in another has its
 * cost left out of the statistics. Each run carries its fingerprint class (`fingerprintOf`) and its
 * node (runNodeOf: the nodes its agents reported from, `nodesOf`, else Slurm's node list). With
 * them, the completed runs' validity tallied (campaignValidity's counts, validityOfTally).
 */
export function countedRuns(
  rows: readonly ConfigurationEnergyRow[], fingerprintOf: ReadonlyMap<string, string | null> = new Map(), nodesOf: ReadonlyMap<string, readonly RunNodeRecord[]> = new Map(),
  counting: CountingOptions = {},
): {
  configs: { key: string; parameters: Record<string, unknown>; runs: RunFigures[] }[];
  runsLeftOut: RunLeftOut[];
  currency: string | null;
  validity: ValidityTally;
} {
  const configs: CountedConfiguration[] = [];
  const tallies: ValidityTally[] = [];
  const runsLeftOut: RunLeftOut[] = [];
  // Runs per cost currency: most campaigns have one (or none), and then nothing more is done.
  const currencies = new Map<string, number>();
  const validOnly = counting.validOnly === true;
  // A configuration's rows come together (listConfigurationEnergies): each stretch of one key is counted as one.
  for (let start = 0; start < rows.length; ) {
    let end = start + 1;
    while (end < rows.length && rows[end]!.key === rows[start]!.key) end++;
    const group = countedGroup(rows, start, end, validOnly, fingerprintOf, nodesOf);
    configs.push(group.configuration);
    tallies.push(group.validity);
    for (const leftOut of group.runsLeftOut) runsLeftOut.push(leftOut);
    for (const [c, n] of group.currencies) currencies.set(c, (currencies.get(c) ?? 0) + n);
    start = end;
  }
  const currency = mostCommon(currencies);
  // Costs in two currencies cannot be averaged: those in another than most are left out (cost.n
  // says how many count; runsLeftOut names runs left out of energy or wholly, not of cost alone).
  // Copies: the configurations and their runs' figures are shared with later reads (countedGroup).
  if (currencies.size > 1) {
    configs.forEach((k, i) => {
      if (!k.runs.some((r) => typeof r.costCurrency === 'string' && r.costCurrency !== currency)) return;
      configs[i] = { ...k, runs: k.runs.map((r) => (typeof r.costCurrency === 'string' && r.costCurrency !== currency ? { ...r, cost: null } : r)) };
    });
  }
  // Two stretches of one key (rows not grouped by configuration) are one configuration.
  return { configs: mergeRepeatedKeys(configs), runsLeftOut, currency, validity: addValidityTallies(tallies) };
}

type CountedConfiguration = { key: string; parameters: Record<string, unknown>; runs: RunFigures[] };

/** One configuration's rows counted: its configuration with its runs' figures, its runs left out, its runs per cost currency. */
interface CountedGroup {
  /** What it was counted from: the rows (the same objects), and each row's nodes and fingerprint class. */
  rows: ConfigurationEnergyRow[];
  nodes: (readonly RunNodeRecord[] | undefined)[];
  classes: (string | null)[];
  validOnly: boolean;
  configuration: CountedConfiguration;
  runsLeftOut: RunLeftOut[];
  currencies: Map<string, number>;
  /** Its completed runs' validity. */
  validity: ValidityTally;
}

/**
 * Configurations counted before, by their first row: the API's results worker keeps every row of
 * an unchanged configuration between reads (inputs-snapshot.ts), so with 10,000 configurations and
 * one run changed, one is counted again and the others are the same objects as at the last read —
 * the same configuration object, which campaignResults then summarises no more. Never changed once
 * made (a cost left out is a copy).
 */
const countedGroups = new WeakMap<ConfigurationEnergyRow, CountedGroup>();

function countedGroup(
  rows: readonly ConfigurationEnergyRow[], start: number, end: number, validOnly: boolean,
  fingerprintOf: ReadonlyMap<string, string | null>, nodesOf: ReadonlyMap<string, readonly RunNodeRecord[]>,
): CountedGroup {
  const before = countedGroups.get(rows[start]!);
  if (before && sameGroup(before, rows, start, end, validOnly, fingerprintOf, nodesOf)) return before;
  const first = rows[start]!;
  const nodesOfRows: CountedGroup['nodes'] = [];
  const classes: CountedGroup['classes'] = [];
  const runs: RunFigures[] = [];
  const runsLeftOut: RunLeftOut[] = [];
  const currencies = new Map<string, number>();
  const completed: (StoredFigures | null)[] = [];
  for (let i = start; i < end; i++) {
    const row = rows[i]!;
    const nodes = row.runId ? nodesOf.get(row.runId) : undefined;
    const fingerprintClass = row.runId ? (fingerprintOf.get(row.runId) ?? null) : null;
    nodesOfRows.push(nodes);
    classes.push(fingerprintClass);
    if (!row.runId) continue;
    completed.push(row.result as StoredFigures | null);
    const { run, leftOut } = countedRow(row, validOnly, nodes, fingerprintClass);
    if (leftOut) runsLeftOut.push(leftOut);
    runs.push(run);
    if (typeof run.costCurrency === 'string') currencies.set(run.costCurrency, (currencies.get(run.costCurrency) ?? 0) + 1);
  }
  const made: CountedGroup = {
    rows: rows.slice(start, end), nodes: nodesOfRows, classes, validOnly,
    configuration: { key: first.key, parameters: first.parameters, runs }, runsLeftOut, currencies, validity: tallyValidity(completed, { validOnly }),
  };
  countedGroups.set(first, made);
  return made;
}

function sameGroup(
  g: CountedGroup, rows: readonly ConfigurationEnergyRow[], start: number, end: number, validOnly: boolean,
  fingerprintOf: ReadonlyMap<string, string | null>, nodesOf: ReadonlyMap<string, readonly RunNodeRecord[]>,
): boolean {
  if (g.validOnly !== validOnly || g.rows.length !== end - start) return false;
  for (let i = start; i < end; i++) {
    const row = rows[i]!;
    const k = i - start;
    if (g.rows[k] !== row) return false;
    if (row.runId && (g.nodes[k] !== nodesOf.get(row.runId) || g.classes[k] !== (fingerprintOf.get(row.runId) ?? null))) return false;
  }
  return true;
}

/** Configurations of one key joined, in the order their keys first appear (rows of one configuration that did not come together). */
function mergeRepeatedKeys(configs: CountedConfiguration[]): CountedConfiguration[] {
  const keys = new Set<string>();
  let repeated = false;
  for (const c of configs) {
    if (keys.has(c.key)) repeated = true;
    keys.add(c.key);
  }
  if (!repeated) return configs;
  const byKey = new Map<string, CountedConfiguration>();
  for (const c of configs) {
    const had = byKey.get(c.key);
    byKey.set(c.key, had ? { ...had, runs: [...had.runs, ...c.runs] } : c);
  }
  return [...byKey.values()];
}

/** A run's figures that count and what is left out of them, with what they were made from (countedRow). */
interface CountedRow {
  validOnly: boolean;
  nodes: readonly RunNodeRecord[] | undefined;
  fingerprintClass: string | null;
  run: RunFigures;
  leftOut: RunLeftOut | null;
}

/**
 * A run's figures as one shape for every run, its optional members present as undefined: the
 * statistics read each member of 100,000 of them at every read, and objects of one shape are read
 * several times faster than the dozen shapes spreading countedFigures' optional members made.
 */
function runFiguresOf(f: CountedFigures['figures'], metrics: Record<string, number | null>, fingerprintClass: string | null, node: string | null, repetition: number | null): RunFigures {
  return {
    timeS: f.timeS, energyJ: f.energyJ, edpJs: f.edpJs, ed2pJs2: f.ed2pJs2, avgPowerW: f.avgPowerW, metrics,
    components: f.components, flags: f.flags, fingerprintClass, carbonG: f.carbonG, cost: f.cost, costCurrency: f.costCurrency, node, repetition,
  };
}

/**
 * Rows counted before: the API's results worker keeps each unchanged run's row (the same object)
 * between reads (inputs-snapshot.ts), so its RunFigures is made once and is the same object at the
 * next read — which lets campaignResults skip configurations whose runs are all unchanged. Never
 * changed once made (a cost left out is a copy).
 */
const countedRows = new WeakMap<ConfigurationEnergyRow, CountedRow>();

function countedRow(row: ConfigurationEnergyRow, validOnly: boolean, nodes: readonly RunNodeRecord[] | undefined, fingerprintClass: string | null): CountedRow {
  const before = countedRows.get(row);
  if (before && before.validOnly === validOnly && before.nodes === nodes && before.fingerprintClass === fingerprintClass) return before;
  // Stored by refreshRunEnergy (store-run-energy.ts) in the shape of @erg/spec's RunEnergy.
  const counted = countedFigures(row.result as StoredFigures | null, { validOnly });
  const made: CountedRow = {
    validOnly, nodes, fingerprintClass,
    run: runFiguresOf(counted.figures, row.metrics ?? {}, fingerprintClass, runNodeOf(nodes, row.nodeList), row.repetition),
    leftOut: counted.leftOut ? { runId: row.runId!, key: row.key, repetition: row.repetition ?? 0, leftOut: counted.leftOut.what, why: counted.leftOut.why } : null,
  };
  countedRows.set(row, made);
  return made;
}

/** The value most of them are, from how many each is (ties: the first in sort order); null for none. */
function mostCommon(counts: ReadonlyMap<string, number>): string | null {
  let best: string | null = null;
  for (const [v, n] of counts) if (best === null || n > counts.get(best)! || (n === counts.get(best)! && v < best)) best = v;
  return best;
}

/** Whether the figures were measured at a power state erg set, in a sentence for the results. */
function powerNote(context: Awaited<ReturnType<typeof findCampaignPowerContext>>): CampaignResults['power'] {
  const requested = context !== null && context.spec.power !== undefined;
  const cluster = context?.cluster;
  if (requested) {
    return { requested, controlled: true, note: `erg set each configuration's power state through ${cluster ? `cluster ${cluster.name}'s` : 'the'} node helper; see each run's power for what was in force` };
  }
  const knobs = cluster?.capabilities?.powerHelper ? 'has a node helper, but this campaign set no power state' : 'has no power knobs erg can set (no node helper)';
  return {
    requested,
    controlled: false,
    note: cluster ? `cluster ${cluster.name} ${knobs}: runs ran at whatever power state its nodes were in` : 'imported measurements: erg set no power state',
  };
}

/** How the results are asked for: grouped by configuration or fingerprint, on which two objectives, valid runs only. */
export interface CampaignFigureOptions {
  groupBy?: 'configuration' | 'fingerprint';
  objectives?: readonly [Objective, Objective];
  validOnly?: boolean;
}

/**
 * A campaign's results: per configuration, statistics over its completed runs by the one rule of
 * which figures count (a run whose energy was not measured never enters them as 0 J); the Pareto
 * front on (mean time, mean energy); the best configurations and the trade-off between the fastest
 * and the most frugal; the runs left out and why; how many kinds of machine each configuration
 * ran on (grouped by them with groupBy 'fingerprint'); whether erg set the power state; the
 * energy per phase where runs marked phases; data movement where nodes measured it; carbon and
 * cost, and the front on other objectives (`objectives`, default time and energy); the claims with
 * their uncertainty at the spec's design.confidence, and the node effects; the runs' validity and
 * whether the results are publishable (`validOnly`: invalid runs left out, as the spec's
 * validity.excludeInvalid does).
 */
export function campaignFiguresOf(inputs: CampaignFigureInputs, options: CampaignFigureOptions = {}) {
  const { rows, runNodes, context, phaseRows, movementRows } = inputs;
  const { byRun, classes } = runFingerprintClasses(runNodes);
  const counting = { validOnly: options.validOnly === true };
  const { configs, runsLeftOut, currency, validity: tally } = countedRuns(rows, byRun, runNodes, counting);
  const groupBy = options.groupBy ?? 'configuration';
  const confidence = context?.spec.design.confidence ?? DEFAULT_CONFIDENCE;
  // Runs placed in blocks (repetition r of every configuration side by side) are compared block by block.
  const blocked = context !== null && context.design.order !== 'configuration-major' && context.spec.execution === 'slurm';
  const results = campaignResults(configs, { groupBy, fingerprintClasses: classes, confidence, blocked, ...(options.objectives ? { objectives: options.objectives } : {}) });
  // The comparison names configurations; grouped by fingerprint the best are entries, so it is left out.
  const optimal = groupBy === 'configuration' && results.best ? { time: results.best.time, energy: results.best.energy } : null;
  // Only runs with phases or data movement are looked up in it (most campaigns have neither).
  const countingIds = phaseRows.length + movementRows.length > 0 ? countingRunIds(rows, counting) : new Set<string>();
  const phases = byConfiguration(phaseRows.map((r) => ({ ...r, value: r.phases })), countingIds, RunPhases);
  const movement = byConfiguration(movementRows.map((r) => ({ ...r, value: r.dataMovement })), countingIds, RunDataMovement);
  const validity = validityOfTally(tally, counting);
  return {
    ...results, runsLeftOut, power: powerNote(context), phases: phasesByConfiguration(phases, optimal), dataMovement: dataMovementByConfiguration(movement), currency, validity, design: campaignDesignView(context),
  };
}

/** The runs whose figures count (countedFigures): per-phase and data-movement figures follow the same rule. */
function countingRunIds(rows: readonly ConfigurationEnergyRow[], counting: CountingOptions): Set<string> {
  const ids = new Set<string>();
  for (const r of rows) {
    if (r.runId === null) continue;
    // countedRuns counted these rows just before: the kept answer, without counting again.
    const before = countedRows.get(r);
    const leftOut = before && before.validOnly === (counting.validOnly === true) ? before.leftOut : countedFigures(r.result as StoredFigures | null, counting).leftOut;
    if (!leftOut) ids.add(r.runId);
  }
  return ids;
}

/**
 * One stored member of each counting run (its phases, its data movement), validated and grouped by
 * configuration in the rows' order; a run left out of the figures, or whose member does not parse
 * (stored by an older erg), is left out here too.
 */
function byConfiguration<T>(rows: readonly { runId: string; key: string; value: unknown }[], counting: ReadonlySet<string>, schema: { safeParse(value: unknown): { success: true; data: T } | { success: false } }): Map<string, T[]> {
  const byKey = new Map<string, T[]>();
  let parsedBefore = parsedMembers.get(schema);
  if (!parsedBefore) parsedMembers.set(schema, (parsedBefore = new WeakMap()));
  for (const r of rows) {
    if (!counting.has(r.runId)) continue;
    // A stored member read before (the same object, kept by the results worker) is not parsed again.
    const value = r.value;
    let parsed = typeof value === 'object' && value !== null ? (parsedBefore.get(value) as { success: true; data: T } | { success: false } | undefined) : undefined;
    if (!parsed) {
      parsed = schema.safeParse(value);
      if (typeof value === 'object' && value !== null) parsedBefore.set(value, parsed);
    }
    if (!parsed.success) continue;
    const list = byKey.get(r.key);
    if (list) list.push(parsed.data);
    else byKey.set(r.key, [parsed.data]);
  }
  return byKey;
}

/** Stored members parsed before, per schema, by the stored value. */
const parsedMembers = new WeakMap<object, WeakMap<object, unknown>>();

/** Data movement per configuration; null when no counting run measured any. */
function dataMovementByConfiguration(byKey: ReadonlyMap<string, RunDataMovement[]>): CampaignDataMovement | null {
  return byKey.size === 0 ? null : campaignDataMovement([...byKey].map(([key, runs]) => ({ key, runs })));
}

/**
 * Energy per phase per configuration, over the runs whose figures count (the same rule as the
 * other figures: a run left out of them is left out here) and that marked phases; null when none did.
 */
function phasesByConfiguration(byKey: ReadonlyMap<string, RunPhases[]>, optimal: { time: string; energy: string } | null): CampaignPhases | null {
  if (byKey.size === 0) return null;
  const keys = new Set(byKey.keys());
  return campaignPhases(
    [...byKey].map(([key, runs]) => ({ key, runs })),
    optimal && keys.has(optimal.time) && keys.has(optimal.energy) ? optimal : null,
  );
}
