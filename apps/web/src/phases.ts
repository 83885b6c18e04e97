// Where the energy went, as the pages draw it: a run's phases as bands over its power trace (from
// GET /v1/runs/:id/phases `segments`) and as a table (its RunPhases), a campaign's self energy per
// phase stacked per configuration, and the per-phase difference between its runtime- and
// energy-optimal configurations (CampaignResults.phases). Pure, for the React layer and the tests.
//
// Words (packages/spec/src/phases.ts): a phase's *inclusive* energy counts the phases nested in
// it, its *self* energy does not; self energies and the unmarked time add up to the run's energy,
// which is why the stacks and the comparison use them.
import { renderCsv } from './csv';
import { stackLayout, type StackLayout } from './stacked';
import type { CampaignPhases, PhaseComparison, RunPhases, RunPhasesView } from './types';

/**
 * The name of the time inside no phase in lists of phases: @erg/spec's UNMARKED_PHASE (a test
 * holds the two equal; the spec's module brings zod, which the bundle leaves out).
 */
export const UNMARKED = '(unmarked)';

/** More nodes than this and the trace shows the first node's bands only (lanes would be too thin to read). */
export const MAX_BAND_LANES = 4;

/**
 * One pattern index per phase name, the same wherever the page draws that phase (bands, legend,
 * table): the names sorted, numbered in that order. The unmarked time has none: it is left blank.
 */
export function phasePalette(names: Iterable<string>): Map<string, number> {
  const sorted = [...new Set(names)].filter((n) => n !== UNMARKED).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return new Map(sorted.map((n, i) => [n, i]));
}

/** Every phase name a run's page shows: its table's and its segments'. */
export function runPhaseNames(view: Pick<RunPhasesView, 'phases' | 'segments'>): string[] {
  const names = new Set<string>();
  for (const p of view.phases?.phases ?? []) names.add(p.name);
  for (const s of view.segments) if (s.phase !== null) names.add(s.phase);
  return [...phasePalette(names).keys()];
}

export interface PhaseBand {
  /** The innermost open phase. */
  phase: string;
  /** Every phase open, outermost first. */
  open: string[];
  fromMs: number;
  toMs: number;
  /** Its pattern (phasePalette). */
  index: number;
}

export interface PhaseLane {
  node: string;
  bands: PhaseBand[];
}

export interface PhaseBands {
  /** Top to bottom; one lane (the whole plot height) for one node or when there are too many to draw. */
  lanes: PhaseLane[];
  /** The phases drawn with their patterns, for the legend, in palette order. */
  legend: { name: string; index: number }[];
  /** What the bands leave out (other nodes, segments beyond the API's limit); null when nothing. */
  note: string | null;
}

/**
 * The bands over a run's power trace: per node (up to MAX_BAND_LANES, else the first node's
 * with a note), one band per stretch with an innermost phase, adjacent stretches of the same
 * phases merged; stretches inside no phase are left out (the trace shows blank there).
 */
export function phaseBands(view: Pick<RunPhasesView, 'segments' | 'segmentsTruncated'>, palette: ReadonlyMap<string, number>, maxLanes = MAX_BAND_LANES): PhaseBands {
  const byNode = new Map<string, PhaseBand[]>();
  for (const s of view.segments) {
    let bands = byNode.get(s.node);
    if (!bands) byNode.set(s.node, (bands = []));
    if (s.phase === null || !(s.toMs > s.fromMs)) continue;
    const last = bands[bands.length - 1];
    if (last && last.phase === s.phase && last.toMs === s.fromMs && sameList(last.open, s.open)) {
      last.toMs = s.toMs;
      continue;
    }
    bands.push({ phase: s.phase, open: [...s.open], fromMs: s.fromMs, toMs: s.toMs, index: palette.get(s.phase) ?? 0 });
  }
  const nodes = [...byNode.keys()];
  const shown = nodes.length > maxLanes ? nodes.slice(0, 1) : nodes;
  const lanes = shown.map((node) => ({ node, bands: byNode.get(node)! }));
  const drawn = new Set(lanes.flatMap((l) => l.bands.map((b) => b.phase)));
  const notes: string[] = [];
  if (shown.length < nodes.length) notes.push(`Bands of ${shown[0]}, the first of ${nodes.length} nodes that marked phases; the table counts every node.`);
  if (view.segmentsTruncated) notes.push(`The run has more stretches than the API returns (${view.segments.length}): the bands stop after the last one returned.`);
  return {
    lanes,
    legend: [...palette].filter(([n]) => drawn.has(n)).map(([name, index]) => ({ name, index })),
    note: notes.length === 0 ? null : notes.join(' '),
  };
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** One row of a run's per-phase table. */
export interface PhaseRow {
  name: string;
  /** The unmarked row: no occurrences, self and inclusive the same. */
  unmarked: boolean;
  occurrences: number | null;
  /** Node-seconds, inclusive and self. */
  timeS: number;
  selfTimeS: number;
  energyJ: number;
  /** Half-widths of the 95 % intervals; null where the energy was attributed proportionally. */
  ci95J: number | null;
  selfEnergyJ: number;
  selfCi95J: number | null;
  meanPowerW: number | null;
  /** Inclusive energy ÷ the run's (nested phases' shares overlap their parents'). */
  share: number | null;
  /** Self energy ÷ the run's: these add up to 1 over the rows. */
  selfShare: number | null;
  method: RunPhases['method'];
}

/** The table's rows: the phases as the API orders them (inclusive energy, largest first), then the unmarked time. */
export function phaseRows(phases: RunPhases): PhaseRow[] {
  const of = (j: number) => (phases.energyJ > 0 ? j / phases.energyJ : null);
  const rows: PhaseRow[] = phases.phases.map((p) => ({
    name: p.name, unmarked: false, occurrences: p.occurrences, timeS: p.timeS, selfTimeS: p.selfTimeS,
    energyJ: p.energyJ, ci95J: p.ci95J, selfEnergyJ: p.selfEnergyJ, selfCi95J: p.selfCi95J,
    meanPowerW: p.meanPowerW, share: p.share, selfShare: of(p.selfEnergyJ), method: p.method,
  }));
  const u = phases.unmarked;
  rows.push({
    name: UNMARKED, unmarked: true, occurrences: null, timeS: u.timeS, selfTimeS: u.timeS,
    energyJ: u.energyJ, ci95J: u.ci95J, selfEnergyJ: u.energyJ, selfCi95J: u.ci95J,
    meanPowerW: u.meanPowerW, share: u.share, selfShare: of(u.energyJ), method: u.method,
  });
  return rows;
}

/** The phase names of a campaign's stacks: sorted, the unmarked time last (on top of each stack). */
export function campaignPhaseNames(phases: CampaignPhases): string[] {
  const names = [...phasePalette(phases.configurations.flatMap((c) => c.phases.map((p) => p.name))).keys()];
  return phases.configurations.some((c) => c.phases.some((p) => p.name === UNMARKED)) ? [...names, UNMARKED] : names;
}

/**
 * Mean self energy per phase, stacked per configuration: the stack is the configuration's mean
 * energy (over its runs with phases). Configurations in `order` (the results table's) when given.
 */
export function phaseStackedBars(phases: CampaignPhases, width = 640, labelWidth = 220, order: readonly string[] = []): StackLayout {
  const rank = new Map(order.map((k, i) => [k, i]));
  const configurations = [...phases.configurations]
    .filter((c) => c.n > 0)
    .sort((a, b) => (rank.get(a.key) ?? order.length) - (rank.get(b.key) ?? order.length));
  const rows = configurations.map((c) => ({ key: c.key, values: Object.fromEntries(c.phases.map((p) => [p.name, p.selfEnergyJ.mean])) }));
  return stackLayout(rows, campaignPhaseNames(phases), width, labelWidth);
}

export interface DifferenceRow {
  name: string;
  runtimeOptimalJ: number;
  energyOptimalJ: number;
  differenceJ: number;
  shareOfDifference: number | null;
  /** The bar in a cell `width` wide: from x, this wide, left of zeroX when the phase used less in the fastest configuration. */
  x: number;
  width: number;
  negative: boolean;
}

export interface DifferenceBars {
  width: number;
  /** Mean energy per run of each configuration: the sums of its phases' self energies. */
  runtimeOptimalJ: number;
  energyOptimalJ: number;
  /** Where 0 J is: the left edge when no difference is negative, the right edge when none is positive, else the middle. */
  zeroX: number;
  rows: DifferenceRow[];
}

/**
 * The "where did the energy go" rows: per phase, what the runtime-optimal configuration spent
 * beyond the energy-optimal one (self energies, so they add up to the difference of the means),
 * in the API's order (the largest in the direction of the total first), each with a bar on a
 * common scale of |difference|.
 */
export function differenceBars(comparison: PhaseComparison, width = 160): DifferenceBars {
  const ds = comparison.phases.map((p) => p.differenceJ);
  const max = Math.max(1e-9, ...ds.map(Math.abs));
  const anyNegative = ds.some((d) => d < 0);
  const anyPositive = ds.some((d) => d > 0);
  const zeroX = anyNegative && anyPositive ? width / 2 : anyNegative ? width : 0;
  const room = anyNegative && anyPositive ? width / 2 : width;
  return {
    width, zeroX,
    runtimeOptimalJ: comparison.phases.reduce((a, p) => a + p.runtimeOptimalJ, 0),
    energyOptimalJ: comparison.phases.reduce((a, p) => a + p.energyOptimalJ, 0),
    rows: comparison.phases.map((p) => {
      const w = (Math.abs(p.differenceJ) / max) * room;
      return { ...p, x: p.differenceJ < 0 ? zeroX - w : zeroX, width: w, negative: p.differenceJ < 0 };
    }),
  };
}

/** A run's per-phase table as CSV: raw SI numbers, empty where there is none (the unmarked row's occurrences, a proportional ±). */
export function phasesCsv(phases: RunPhases): string {
  const header = ['phase', 'occurrences', 'time_s', 'self_time_s', 'energy_j', 'energy_ci95_half_j', 'self_energy_j', 'self_energy_ci95_half_j', 'mean_power_w', 'share', 'self_share', 'method'];
  return renderCsv([
    header,
    ...phaseRows(phases).map((r) => [r.name, r.occurrences, r.timeS, r.selfTimeS, r.energyJ, r.ci95J, r.selfEnergyJ, r.selfCi95J, r.meanPowerW, r.share, r.selfShare, r.method]),
  ]);
}
