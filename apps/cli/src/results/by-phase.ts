// `erg results CAMPAIGN --by-phase`: the campaign's energy per configuration and phase (the API's
// `phases` member of GET /v1/campaigns/:id/results), then which phases account for what the
// runtime-optimal configuration spends beyond the energy-optimal one. Table and Markdown for
// people, CSV (raw SI numbers, one row per configuration × phase) and JSON for programs.
import { formatEnergy, formatPercent, formatTime, halfWidth, inConfigurationOrder, interval, isNumber, measuredConfigurations, NO_VALUE, renderCsv, type CsvValue } from '@erg/format';
import type { CampaignPhases, PhaseComparison, Summary } from '../api-types';
import type { Colors } from '../output/color';
import { mdCell, mdCode, renderMarkdownTable } from '../output/markdown';
import { renderTable, type Column } from '../output/table';
import { howToMarkText, PHASE_MARKERS } from '../phases/render';
import type { CampaignResults } from './model';
import type { ResultsFormat } from './render';

/** Phases of the comparison shown under the table; the others are counted (JSON has them all). */
export const COMPARISON_PHASES_SHOWN = 5;

/** What `--by-phase` writes: stdout, and a note for stderr where stdout must stay machine-readable. */
export interface PhaseResultsOutput {
  stdout: string;
  stderr: string;
}

/** The campaign's phases with configurations in the order of `results.configurations` (so --sort applies), unknown keys last. */
export function orderedPhases(results: CampaignResults): CampaignPhases | null {
  const phases = results.phases;
  if (!phases) return null;
  return { ...phases, configurations: inConfigurationOrder(results.configurations, phases.configurations) };
}

/** The inclusive energy of a phase as a fraction of its configuration's mean energy; null where that is unknown or 0. */
function shareOf(energy: Summary, configuration: Summary): number | null {
  return isNumber(energy.mean) && isNumber(configuration.mean) && configuration.mean !== 0 ? energy.mean / configuration.mean : null;
}

const COLUMNS: Column[] = [
  { header: 'configuration' },
  { header: 'phase' },
  { header: 'n', align: 'right' },
  { header: 'self energy', align: 'right' },
  { header: '± 95 %', align: 'right' },
  { header: 'energy', align: 'right' },
  { header: 'time', align: 'right' },
  { header: 'share', align: 'right' },
];

export const PHASE_LEGEND =
  "Means over each configuration's runs (a run without the phase counts 0); ± is the half-width of the 95 % interval of the mean self energy. " +
  "Self energy excludes nested phases (the self energies add up to the configuration's energy), energy includes them; time is node-seconds; share is energy ÷ the configuration's mean energy.";

/** One row per configuration and phase; the key only on a configuration's first row when `repeatKey` is false. */
export function phaseResultRows(phases: CampaignPhases, repeatKey: boolean): string[][] {
  return phases.configurations.flatMap((c) =>
    c.phases.map((p, i) => {
      const ci = halfWidth(p.selfEnergyJ);
      return [
        repeatKey || i === 0 ? c.key : '',
        p.name,
        String(p.selfEnergyJ.n),
        formatEnergy(p.selfEnergyJ.mean),
        ci === null ? NO_VALUE : `± ${formatEnergy(ci)}`,
        formatEnergy(p.energyJ.mean),
        formatTime(p.timeS.mean),
        formatPercent(shareOf(p.energyJ, c.energyJ)),
      ];
    }),
  );
}

function signedEnergy(joules: number): string {
  return joules > 0 ? `+${formatEnergy(joules)}` : formatEnergy(joules);
}

/** The comparison's sentence: how much more the runtime-optimal configuration spends, and the phase that accounts for most of it. */
export function comparisonSentence(c: PhaseComparison): string {
  if (c.runtimeOptimal === c.energyOptimal) return `The runtime-optimal configuration (${c.runtimeOptimal}) is also the energy-optimal one: no difference to account for.`;
  const more = c.differenceJ > 0 ? `${formatEnergy(c.differenceJ)} more than` : c.differenceJ < 0 ? `${formatEnergy(-c.differenceJ)} less than` : 'as much as';
  const head = `The runtime-optimal configuration (${c.runtimeOptimal}) spends ${more} the energy-optimal one (${c.energyOptimal})`;
  const top = c.phases[0];
  if (!top || top.shareOfDifference === null) return `${head}.`;
  return `${head}; phase ${top.name} accounts for ${formatPercent(top.shareOfDifference)} of it.`;
}

const COMPARISON_COLUMNS: Column[] = [
  { header: 'phase' },
  { header: 'runtime-optimal', align: 'right' },
  { header: 'energy-optimal', align: 'right' },
  { header: 'difference', align: 'right' },
  { header: 'share of it', align: 'right' },
];

/** The comparison's phases (mean self energies on each side), the one that explains most first; at most COMPARISON_PHASES_SHOWN. */
export function comparisonRows(c: PhaseComparison): { rows: string[][]; more: number } {
  const shown = c.phases.slice(0, COMPARISON_PHASES_SHOWN);
  const rows = shown.map((p) => [p.name, formatEnergy(p.runtimeOptimalJ), formatEnergy(p.energyOptimalJ), signedEnergy(p.differenceJ), formatPercent(p.shareOfDifference)]);
  return { rows, more: c.phases.length - shown.length };
}

/** Measured configurations without phases (none of their runs marked any), by key. */
function withoutPhases(results: CampaignResults, phases: CampaignPhases): string[] {
  const marked = new Set(phases.configurations.map((c) => c.key));
  return measuredConfigurations(results)
    .map((c) => c.key)
    .filter((key) => !marked.has(key));
}

/** Comparison is worth showing when the two configurations differ. */
function distinct(c: PhaseComparison | null): c is PhaseComparison {
  return c !== null && c.runtimeOptimal !== c.energyOptimal;
}

export function noCampaignPhasesText(results: CampaignResults): string {
  return `No run of campaign ${results.campaignId} marked phases.\n${howToMarkText()}`;
}

export function phaseResultsTable(results: CampaignResults, color: Colors): string {
  const phases = orderedPhases(results);
  if (phases === null || phases.configurations.length === 0) return noCampaignPhasesText(results);
  const lines = [renderTable(COLUMNS, phaseResultRows(phases, false), { header: color.bold }).trimEnd(), '', color.dim(PHASE_LEGEND)];
  const c = phases.comparison;
  if (c) {
    lines.push('', comparisonSentence(c));
    if (distinct(c) && c.phases.length > 0) {
      const { rows, more } = comparisonRows(c);
      lines.push(...renderTable(COMPARISON_COLUMNS, rows, { header: color.bold }).trimEnd().split('\n').map((l) => `  ${l}`));
      if (more > 0) lines.push(`  … and ${more} more (--format json has them all)`);
    }
  }
  const without = withoutPhases(results, phases);
  if (without.length > 0) lines.push('', `Without phases (${without.length}): no run marked any`, ...without.map((k) => `  ${k}`));
  return lines.join('\n') + '\n';
}

export function phaseResultsMarkdown(results: CampaignResults): string {
  const parts = [`### Energy per phase, campaign ${mdCode(results.campaignId)}`, ''];
  const phases = orderedPhases(results);
  if (phases === null || phases.configurations.length === 0) {
    parts.push('No run of this campaign marked phases. To measure phases, have the workload mark them:', '', ...PHASE_MARKERS.map((m) => `- ${mdCode(m.how)} ${mdCell(m.where)}`));
    return parts.join('\n') + '\n';
  }
  const rows = phaseResultRows(phases, false).map((row) => row.map((cell, i) => (i === 0 && cell !== '' ? mdCode(cell) : mdCell(cell))));
  parts.push(renderMarkdownTable(COLUMNS, rows).trimEnd(), '', `_${mdCell(PHASE_LEGEND)}_`);
  const c = phases.comparison;
  if (c) {
    parts.push('', mdCell(comparisonSentence(c)));
    if (distinct(c) && c.phases.length > 0) {
      const { rows: cRows, more } = comparisonRows(c);
      parts.push('', renderMarkdownTable(COMPARISON_COLUMNS, cRows.map((r) => r.map(mdCell))).trimEnd());
      if (more > 0) parts.push('', `… and ${more} more phases (\`--format json\` has them all)`);
    }
  }
  const without = withoutPhases(results, phases);
  if (without.length > 0) parts.push('', `**Without phases (${without.length}):** no run marked any`, '', ...without.map((k) => `- ${mdCode(k)}`));
  return parts.join('\n') + '\n';
}

/** The CSV's columns: raw SI numbers, one row per configuration × phase; share a fraction (0–1). */
export const PHASE_CSV_COLUMNS = [
  'key', 'phase', 'n', 'self_energy_j', 'self_energy_ci95_low', 'self_energy_ci95_high', 'energy_j', 'energy_ci95_low', 'energy_ci95_high',
  'time_s', 'time_ci95_low', 'time_ci95_high', 'share',
] as const;

export function phaseResultsCsv(results: CampaignResults): string {
  const rows: CsvValue[][] = [[...PHASE_CSV_COLUMNS]];
  for (const c of orderedPhases(results)?.configurations ?? []) {
    for (const p of c.phases) {
      const ends = (s: Summary): CsvValue[] => interval(s.ci95) ?? [null, null];
      rows.push([c.key, p.name, p.selfEnergyJ.n, p.selfEnergyJ.mean, ...ends(p.selfEnergyJ), p.energyJ.mean, ...ends(p.energyJ), p.timeS.mean, ...ends(p.timeS), shareOf(p.energyJ, c.energyJ)]);
    }
  }
  return renderCsv(rows);
}

/**
 * `--by-phase` in `format`. JSON is the API's `phases` member, its configurations reordered only
 * when `sorted` (--sort); the other formats follow the results' configuration order. Where there
 * are no phases, CSV is its header and JSON `null`, with the note on stderr.
 */
export function renderPhaseResults(results: CampaignResults, format: ResultsFormat, color: Colors, options: { sorted?: boolean } = {}): PhaseResultsOutput {
  const none = !results.phases || results.phases.configurations.length === 0;
  const note = none ? noCampaignPhasesText(results) : '';
  switch (format) {
    case 'table':
      return { stdout: phaseResultsTable(results, color), stderr: '' };
    case 'markdown':
      return { stdout: phaseResultsMarkdown(results), stderr: '' };
    case 'csv':
      return { stdout: phaseResultsCsv(results), stderr: note };
    case 'json':
      return { stdout: JSON.stringify(options.sorted ? orderedPhases(results) : (results.phases ?? null), null, 2) + '\n', stderr: note };
  }
}
