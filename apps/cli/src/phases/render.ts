// One run's energy per phase as `erg phases` prints it: a header line (window, method, the
// sensors' resolution, the marks), the phases with the time inside none last, the steps, the
// warnings. Pure: the command fetches GET /v1/runs/:id/phases, this renders; the figures' meaning
// is packages/spec/src/phases.ts.
import { formatCount, formatEnergy, formatPercent, formatPower, formatTime, NO_VALUE, plural } from '@erg/format';
import { UNMARKED_PHASE } from '@erg/spec';
import type { RunPhases, RunPhasesView } from '../api-types';
import type { Colors } from '../output/color';
import { renderTable, type Column } from '../output/table';

/** The three ways a workload marks phases, for every place that finds none (`erg phases`, `erg results --by-phase`). */
export const PHASE_MARKERS: readonly { how: string; where: string }[] = [
  { how: 'erg-mark begin NAME … erg-mark end NAME', where: 'in a job script (erg-mark step [NAME] counts steps)' },
  { how: 'import erg; with erg.phase("NAME"): …', where: 'in Python (erg.step() counts steps)' },
  { how: 'phases: [{ name: NAME, begin: REGEX, end: REGEX }]', where: "in the campaign spec, to read them from the workload's log" },
];

/** PHASE_MARKERS as indented, aligned lines under a lead-in. */
export function howToMarkText(): string {
  const width = Math.max(...PHASE_MARKERS.map((m) => m.how.length));
  return ['To measure phases, have the workload mark them:', ...PHASE_MARKERS.map((m) => `  ${m.how.padEnd(width)}  ${m.where}`)].join('\n') + '\n';
}

/** The run's phases, or why there are none yet (the API's 409: not ended, no telemetry). */
export type RunPhasesAnswer = { view: RunPhasesView } | { view: null; why: string };

/** Most nodes named in the header line; a larger allocation is counted. */
const NODES_NAMED = 4;

/** `a, b, c` or, past `most`, `a, b, c, d, … (12 in all)`. */
function someOf(items: readonly string[], most: number): string {
  if (items.length <= most) return items.join(', ');
  return `${items.slice(0, most).join(', ')}, … (${items.length} in all)`;
}

function ci(value: number | null): string {
  return value === null ? NO_VALUE : `± ${formatEnergy(value)}`;
}

/** The marks, in words: `4,256 marks by py, sh on nid001, nid002`. */
export function marksText(marks: RunPhasesView['marks']): string {
  if (marks.count === 0) return 'no marks';
  const writers = marks.writers.length === 0 ? '' : ` by ${marks.writers.join(', ')}`;
  const nodes = marks.nodes.length === 0 ? '' : ` on ${someOf(marks.nodes, NODES_NAMED)}`;
  return `${plural(marks.count, 'mark')}${writers}${nodes}`;
}

/** The header line: what the figures are of and how they were obtained. */
export function phasesHeader(view: RunPhasesView): string {
  const windowS = (view.window.endMs - view.window.startMs) / 1000;
  const parts = [`Run ${view.runId}`, `window ${formatTime(windowS)}`];
  const p = view.phases;
  if (p) {
    parts.push(formatEnergy(p.energyJ), p.method === 'regression' ? 'attributed by regression' : 'attributed proportionally');
    parts.push(p.resolutionMs === null ? "sensors' resolution unknown (no readings)" : `sensors' resolution ${formatTime(p.resolutionMs / 1000)}`);
  }
  parts.push(marksText(view.marks));
  return parts.join(' · ');
}

const PHASE_COLUMNS: Column[] = [
  { header: 'phase' },
  { header: 'occurrences', align: 'right' },
  { header: 'time', align: 'right' },
  { header: 'self energy', align: 'right' },
  { header: 'energy', align: 'right' },
  { header: '± 95 %', align: 'right' },
  { header: 'mean power', align: 'right' },
  { header: 'share', align: 'right' },
];

/** The phases' rows, largest inclusive energy first (the API's order), the time inside none last. */
export function phaseRows(p: RunPhases): string[][] {
  const rows = p.phases.map((ph) => [
    ph.name, formatCount(ph.occurrences), formatTime(ph.timeS), formatEnergy(ph.selfEnergyJ), formatEnergy(ph.energyJ), ci(ph.ci95J), formatPower(ph.meanPowerW), formatPercent(ph.share),
  ]);
  const u = p.unmarked;
  rows.push([UNMARKED_PHASE, NO_VALUE, formatTime(u.timeS), formatEnergy(u.energyJ), formatEnergy(u.energyJ), ci(u.ci95J), formatPower(u.meanPowerW), formatPercent(u.share)]);
  return rows;
}

const STEP_COLUMNS: Column[] = [
  { header: 'step' },
  { header: 'count', align: 'right' },
  { header: 'J/step', align: 'right' },
  { header: '± std', align: 'right' },
  { header: 'p50', align: 'right' },
  { header: 'p95', align: 'right' },
  { header: 'time/step', align: 'right' },
  { header: 'below resolution', align: 'right' },
];

export function stepRows(p: RunPhases): string[][] {
  return p.steps.map((s) => [
    s.name,
    formatCount(s.count),
    formatEnergy(s.energyJ.mean),
    s.energyJ.std === null ? NO_VALUE : `± ${formatEnergy(s.energyJ.std)}`,
    formatEnergy(s.energyJ.p50),
    formatEnergy(s.energyJ.p95),
    formatTime(s.timeS.mean),
    `${formatCount(s.belowResolution)} of ${formatCount(s.energyJ.n)}`,
  ]);
}

function indent(text: string): string {
  return text
    .trimEnd()
    .split('\n')
    .map((line) => (line === '' ? line : `  ${line}`))
    .join('\n');
}

/** Why a run whose figures exist has no phases, and how to get them. */
export function noPhasesText(view: RunPhasesView): string {
  const why =
    view.marks.count === 0
      ? `Run ${view.runId} has no phases: its workload marked none.`
      : `Run ${view.runId} has no phases: its energy figures (computed ${view.computedAt}) hold none, though it has ${marksText(view.marks)}.`;
  return `${why}\n${howToMarkText()}`;
}

/** The whole report: header, phases, steps, warnings. */
export function phasesReport(answer: RunPhasesAnswer, color: Colors): string {
  if (answer.view === null) return `Phases: no figures yet — ${answer.why}\n`;
  const view = answer.view;
  const p = view.phases;
  if (p === null) return noPhasesText(view);
  const lines = [phasesHeader(view), ''];
  lines.push(renderTable(PHASE_COLUMNS, phaseRows(p), { header: color.bold }).trimEnd());
  lines.push(
    '',
    color.dim(`Self energy excludes nested phases (the self energies and ${UNMARKED_PHASE} add up to the run's ${formatEnergy(p.energyJ)}), energy includes them; share is energy ÷ the run's.`),
    color.dim('Times are node-seconds (summed over nodes); ± is the half-width of the 95 % interval of the attribution, — where it was proportional.'),
  );
  lines.push('');
  if (p.steps.length === 0) {
    lines.push('Steps: none marked (erg-mark step [NAME], erg.step() in Python).');
  } else {
    lines.push('Steps', indent(renderTable(STEP_COLUMNS, stepRows(p), { header: color.bold })));
    lines.push(color.dim("  J/step and time/step per node; below resolution: steps shorter than 2 sampling intervals of their node's slowest sensor."));
  }
  if (p.warnings.length > 0) lines.push('', `Warnings (${p.warnings.length}):`, ...p.warnings.map((w) => `  ${color.yellow(w)}`));
  return lines.join('\n') + '\n';
}
