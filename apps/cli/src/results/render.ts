// The four output formats of `erg results`. Table and Markdown are for people (formatted units,
// marks, legend); CSV and JSON are for programs (raw SI numbers, no formatting).
import { z } from 'zod';
import { interval } from '../api-types';
import type { Colors } from '../output/color';
import { renderCsv } from '../output/csv';
import { mdCell, mdCode, renderMarkdownTable } from '../output/markdown';
import { renderTable } from '../output/table';
import { humanResults } from './human';
import { marksOf, parameterHeaders, parameterNames, parameterText, type CampaignResults } from './model';

export const ResultsFormat = z.enum(['table', 'csv', 'json', 'markdown']);
export type ResultsFormat = z.infer<typeof ResultsFormat>;

/** An aligned table for the terminal; marks in colour when colour is on. */
export function resultsTable(results: CampaignResults, color: Colors): string {
  const human = humanResults(results);
  if (human.rows.length === 0 && human.excluded.length === 0) return 'No configurations.\n';
  const lines: string[] = [];
  if (human.rows.length > 0) {
    const rows = human.rows.map((row) => [color.green(row[0]!), ...row.slice(1)]);
    lines.push(renderTable(human.columns, rows, { header: color.bold }).trimEnd(), '', color.dim(human.legend));
  } else {
    lines.push('No configuration has measurements yet.');
  }
  if (human.tradeoff) lines.push(human.tradeoff);
  if (human.excluded.length > 0) {
    lines.push('', `Without measurements (${human.excluded.length}):`, ...human.excluded.map((e) => `  ${e.key}: ${e.why}`));
  }
  return lines.join('\n') + '\n';
}

/** GitHub-flavoured Markdown: the same table, legend and exclusions, ready for a PR comment or a report. */
export function resultsMarkdown(results: CampaignResults): string {
  const human = humanResults(results);
  const parts: string[] = [`### Results of campaign ${mdCode(results.campaignId)}`, ''];
  if (human.rows.length > 0) {
    const rows = human.rows.map((row) => row.map((cell, i) => (i === 0 && cell !== '' ? `**${mdCell(cell)}**` : mdCell(cell))));
    parts.push(renderMarkdownTable(human.columns, rows).trimEnd(), '', `_${mdCell(human.legend)}_`);
  } else {
    parts.push('No configuration has measurements yet.');
  }
  if (human.tradeoff) parts.push('', mdCell(human.tradeoff));
  if (human.excluded.length > 0) {
    parts.push('', `**Without measurements (${human.excluded.length}):**`, '', ...human.excluded.map((e) => `- ${mdCode(e.key)}: ${mdCell(e.why)}`));
  }
  return parts.join('\n') + '\n';
}

/** Figures per configuration in the CSV, after the key and the parameters; SI units, named in the header. */
const CSV_FIGURES = [
  'n', 'time_s', 'time_ci95_low', 'time_ci95_high', 'energy_j', 'energy_ci95_low', 'energy_ci95_high',
  'avg_power_w', 'edp_js', 'pareto', 'best_time', 'best_energy', 'best_edp',
] as const;

/**
 * One header row, then one row per configuration (unmeasured ones with empty figures): the key,
 * one column per parameter (named after it, or `param_<name>` if that would clash with a figure's
 * column), then CSV_FIGURES as raw numbers and true/false.
 */
export function resultsCsv(results: CampaignResults): string {
  const names = parameterNames(results.configurations);
  const header = ['key', ...parameterHeaders(names, ['key', ...CSV_FIGURES]), ...CSV_FIGURES];
  const rows = results.configurations.map((c) => {
    const marks = marksOf(results, c);
    return [
      c.key,
      ...names.map((n) => parameterText(c.parameters[n])),
      c.n,
      c.timeS.mean, ...(interval(c.timeS.ci95) ?? [null, null]),
      c.energyJ.mean, ...(interval(c.energyJ.ci95) ?? [null, null]),
      c.avgPowerW.mean, c.edpJs.mean,
      marks.pareto, marks.bestTime, marks.bestEnergy, marks.bestEdp,
    ];
  });
  return renderCsv([header, ...rows]);
}

/** The API's object itself (sorted when asked), pretty-printed. */
export function resultsJson(results: CampaignResults): string {
  return JSON.stringify(results, null, 2) + '\n';
}

export function renderResults(results: CampaignResults, format: ResultsFormat, color: Colors): string {
  switch (format) {
    case 'table':
      return resultsTable(results, color);
    case 'markdown':
      return resultsMarkdown(results);
    case 'csv':
      return resultsCsv(results);
    case 'json':
      return resultsJson(results);
  }
}
