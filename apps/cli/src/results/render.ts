// The four output formats of `erg results`. Table and Markdown are for people (formatted units,
// marks, legend); CSV and JSON are for programs (raw SI numbers, no formatting).
import { z } from 'zod';
import type { Colors } from '../output/color';
import { studyAnswer, studyAnswerLines } from './answer';
import { footprintCsvColumns, plural, renderCsv, resultsCsvRows, UNMEASURED_SHOWN } from '@erg/format';
import { mdCell, mdCode, renderMarkdownTable } from '../output/markdown';
import { renderTable } from '../output/table';
import { humanResults } from './human';
import type { CampaignResults } from './model';

export const ResultsFormat = z.enum(['table', 'csv', 'json', 'markdown']);
export type ResultsFormat = z.infer<typeof ResultsFormat>;

/**
 * The configurations without measurements, one line each — or, beyond UNMEASURED_SHOWN (a search
 * of 1,000 configurations leaves most untried), one line per reason with the first few keys and
 * how many more: what a person reads stays a few lines whatever the campaign's size.
 */
export function excludedLines(excluded: readonly { key: string; why: string }[], key = (k: string) => k, text = (t: string) => t): string[] {
  if (excluded.length <= UNMEASURED_SHOWN) return excluded.map((e) => `${key(e.key)}: ${text(e.why)}`);
  const byWhy = new Map<string, string[]>();
  for (const e of excluded) byWhy.set(e.why, [...(byWhy.get(e.why) ?? []), e.key]);
  return [...byWhy].map(([why, keys]) => `${text(why)}: ${plural(keys.length, 'configuration')} (${keys.slice(0, 3).map(key).join(', ')}${keys.length > 3 ? `, and ${keys.length - 3} more` : ''})`);
}

/** The line on a search's untried candidates, the path in `code` (Markdown's code span, or as it is). */
function untriedLine(untried: { count: string; list: string }, code = (t: string) => t): string {
  return `Not tried by the search (${untried.count}): counted, not listed; ${code(`GET ${untried.list}`)} pages through them`;
}

/** An aligned table for the terminal; marks in colour when colour is on. */
export function resultsTable(results: CampaignResults, color: Colors): string {
  const human = humanResults(results);
  if (human.rows.length === 0 && human.excluded.length === 0 && !human.untried) return 'No configurations.\n';
  const lines: string[] = [];
  if (human.rows.length > 0) {
    const rows = human.rows.map((row) => [color.green(row[0]!), ...row.slice(1)]);
    lines.push(renderTable(human.columns, rows, { header: color.bold }).trimEnd(), '', color.dim(human.legend));
  } else {
    lines.push('No configuration has measurements yet.');
  }
  if (human.tradeoff) lines.push(human.tradeoff);
  if (human.claims) lines.push('', `${human.claims.heading}:`, ...human.claims.lines.map((line) => `  ${line}`));
  if (human.nodes) {
    const n = human.nodes;
    lines.push('', `${n.heading}:`, renderTable(n.columns, n.rows, { header: color.bold }).trimEnd().replace(/^/gm, '  '), `  ${n.note}.`);
    if (n.confounded.length > 0) lines.push('  Confounded with one node:', ...n.confounded.map((c) => `    ${c}`));
  }
  if (human.excluded.length > 0) {
    lines.push('', `Without measurements (${human.excluded.length}):`, ...excludedLines(human.excluded).map((e) => `  ${e}`));
  }
  if (human.untried) lines.push('', untriedLine(human.untried));
  if (human.runsLeftOut.length > 0) lines.push('', `Runs left out (${human.runsLeftOut.length}):`, ...human.runsLeftOut.map((r) => `  ${r}`));
  if (human.flagged.length > 0) lines.push('', `Runs to read with care (see each run's warnings):`, ...human.flagged.map((f) => `  ${f}`));
  if (human.differingMachines.length > 0) {
    lines.push('', 'Ran on differing machines (`erg run RUN` shows what each node was):');
    for (const d of human.differingMachines) lines.push(`  ${d.label}`, ...d.differences.map((line) => `    ${line}`));
  }
  const notes = [human.power, human.runOrder].filter((line) => line !== null);
  if (notes.length > 0) lines.push('', ...notes);
  if (human.publishable) lines.push('', human.publishable);
  // Last, so that `erg submit --watch` ends with it.
  const answer = studyAnswer(results);
  if (answer) {
    const { heading, lines: said } = studyAnswerLines(answer);
    lines.push('', color.bold(`${heading}:`), ...said.map((line) => `  ${line}`));
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
  if (human.claims) parts.push('', `**${mdCell(human.claims.heading)}:**`, '', ...human.claims.lines.map((line) => `- ${mdCell(line)}`));
  if (human.nodes) {
    const n = human.nodes;
    parts.push('', `**${mdCell(n.heading)}:**`, '', renderMarkdownTable(n.columns, n.rows.map((row) => row.map(mdCell))).trimEnd(), '', `_${mdCell(n.note)}._`);
    if (n.confounded.length > 0) parts.push('', '**Confounded with one node:**', '', ...n.confounded.map((c) => `- ${mdCell(c)}`));
  }
  if (human.excluded.length > 0) {
    parts.push('', `**Without measurements (${human.excluded.length}):**`, '', ...excludedLines(human.excluded, (key) => mdCode(key), mdCell).map((e) => `- ${e}`));
  }
  if (human.untried) parts.push('', untriedLine(human.untried, mdCode));
  if (human.runsLeftOut.length > 0) parts.push('', `**Runs left out (${human.runsLeftOut.length}):**`, '', ...human.runsLeftOut.map((r) => `- ${mdCell(r)}`));
  if (human.flagged.length > 0) parts.push('', `**Runs to read with care** (see each run's warnings):`, '', ...human.flagged.map((f) => `- ${mdCell(f)}`));
  if (human.differingMachines.length > 0) {
    parts.push('', '**Ran on differing machines:**', '');
    for (const d of human.differingMachines) parts.push(`- ${mdCell(d.label)}`, ...d.differences.map((line) => `  - ${mdCell(line)}`));
  }
  if (human.power) parts.push('', mdCell(human.power));
  if (human.runOrder) parts.push('', mdCell(human.runOrder));
  if (human.publishable) parts.push('', mdCell(human.publishable));
  const answer = studyAnswer(results);
  if (answer) {
    const { heading, lines: said } = studyAnswerLines(answer);
    parts.push('', `**${mdCell(heading)}:**`, '', ...said.map((line) => `- ${mdCell(line)}`));
  }
  return parts.join('\n') + '\n';
}

/**
 * The results CSV: the rows @erg/format derives for every view (the web app's export adds columns),
 * then the carbon and cost columns where some configuration has those figures.
 */
export function resultsCsv(results: CampaignResults): string {
  return renderCsv(resultsCsvRows(results, footprintCsvColumns(results)));
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
