// `erg results CAMPAIGN --data-movement`: what each configuration moved over each kind of link —
// bytes and rate per run, J per GB, the share of GPU busy time overlapped with transfers — and
// bytes per phase beside energy per phase (the API's `dataMovement` member of
// GET /v1/campaigns/:id/results). Table and Markdown for people, CSV (raw SI numbers, one row per
// configuration × link kind) and JSON for programs.
import { formatByteRate, formatBytes, formatEnergy, formatJoulesPerGB, formatPercent, halfWidth, inConfigurationOrder, interval, linkKindLabel, NO_VALUE, renderCsv, type CsvValue } from '@erg/format';
import { LINK_KINDS } from '@erg/spec/sensors';
import type { CampaignDataMovement, Summary } from '../api-types';
import type { Colors } from '../output/color';
import { mdCell, mdCode, renderMarkdownTable } from '../output/markdown';
import { renderTable, type Column } from '../output/table';
import type { PhaseResultsOutput as SectionOutput } from './by-phase';
import type { CampaignResults } from './model';
import type { ResultsFormat } from './render';

/** The campaign's data movement with configurations in the order of `results.configurations` (so --sort applies), unknown keys last. */
export function orderedDataMovement(results: CampaignResults): CampaignDataMovement | null {
  const movement = results.dataMovement;
  if (!movement) return null;
  return { configurations: inConfigurationOrder(results.configurations, movement.configurations) };
}

const plusMinus = (s: Summary, format: (x: number) => string) => {
  const ci = halfWidth(s);
  return ci === null ? NO_VALUE : `± ${format(ci)}`;
};

const COLUMNS: Column[] = [
  { header: 'configuration' },
  { header: 'n', align: 'right' },
  { header: 'link' },
  { header: 'bytes/run', align: 'right' },
  { header: '± 95 %', align: 'right' },
  { header: 'rate', align: 'right' },
  { header: 'J/GB', align: 'right' },
  { header: 'overlap', align: 'right' },
];

export const MOVEMENT_LEGEND =
  "Means over each configuration's runs that measured the link; ± is the half-width of the 95 % interval of the mean bytes per run. " +
  "J/GB is the run's whole energy per gigabyte over that kind of link (the kinds share that energy: do not add them); " +
  'InfiniBand and network bytes are what the nodes sent, summed over nodes (each byte between two nodes once); ' +
  'overlap is the share of GPU busy time during which the GPU\'s links moved data.';

/** One row per configuration and link kind; the key, n and overlap only on a configuration's first row. */
export function movementRows(movement: CampaignDataMovement): string[][] {
  return movement.configurations.flatMap((c) =>
    c.kinds.map((k, i) => [
      i === 0 ? c.key : '',
      i === 0 ? String(c.n) : '',
      linkKindLabel(k.kind),
      formatBytes(k.bytes.mean),
      plusMinus(k.bytes, formatBytes),
      formatByteRate(k.meanRateBps.mean),
      formatJoulesPerGB(k.joulesPerGB.mean),
      i === 0 ? formatPercent(c.overlapFraction.mean) : '',
    ]),
  );
}

/** Link kinds any configuration's phases moved data over, in the API's order. */
function phaseKinds(movement: CampaignDataMovement): string[] {
  const kinds: string[] = [];
  for (const c of movement.configurations) for (const p of c.phases ?? []) for (const k of Object.keys(p.bytes)) if (!kinds.includes(k)) kinds.push(k);
  const order: readonly string[] = LINK_KINDS;
  return kinds.sort((a, b) => order.indexOf(a) - order.indexOf(b));
}

/** Bytes per phase beside its energy: one row per configuration and phase, one column per link kind; null when no run marked phases. */
export function phaseMovementTable(movement: CampaignDataMovement): { columns: Column[]; rows: string[][] } | null {
  const kinds = phaseKinds(movement);
  const withPhases = movement.configurations.filter((c) => c.phases !== null && c.phases.length > 0);
  if (withPhases.length === 0) return null;
  const columns: Column[] = [{ header: 'configuration' }, { header: 'phase' }, { header: 'energy', align: 'right' }, ...kinds.map((k) => ({ header: linkKindLabel(k), align: 'right' as const }))];
  const rows = withPhases.flatMap((c) => c.phases!.map((p, i) => [i === 0 ? c.key : '', p.name, formatEnergy(p.energyJ.mean), ...kinds.map((k) => formatBytes(p.bytes[k as keyof typeof p.bytes]?.mean))]));
  return { columns, rows };
}

export function noDataMovementText(results: CampaignResults): string {
  return (
    `No run of campaign ${results.campaignId} measured data movement: its nodes had no PCIe, NVLink, NVLink-C2C or host-memory traffic sensor ` +
    '(NVML, DCGM, resctrl or the Grace PMU; `erg run RUN` lists the sensors each node had).\n'
  );
}

export function dataMovementTable(results: CampaignResults, color: Colors): string {
  const movement = orderedDataMovement(results);
  if (movement === null || movement.configurations.length === 0) return noDataMovementText(results);
  const lines = [renderTable(COLUMNS, movementRows(movement), { header: color.bold }).trimEnd(), '', color.dim(MOVEMENT_LEGEND)];
  const phases = phaseMovementTable(movement);
  if (phases) lines.push('', 'Bytes per phase (inclusive, means per run):', ...renderTable(phases.columns, phases.rows, { header: color.bold }).trimEnd().split('\n').map((l) => `  ${l}`));
  return lines.join('\n') + '\n';
}

export function dataMovementMarkdown(results: CampaignResults): string {
  const parts = [`### Data movement, campaign ${mdCode(results.campaignId)}`, ''];
  const movement = orderedDataMovement(results);
  if (movement === null || movement.configurations.length === 0) return [...parts, mdCell(noDataMovementText(results).trim())].join('\n') + '\n';
  const code = (row: string[]) => row.map((cell, i) => (i === 0 && cell !== '' ? mdCode(cell) : mdCell(cell)));
  parts.push(renderMarkdownTable(COLUMNS, movementRows(movement).map(code)).trimEnd(), '', `_${mdCell(MOVEMENT_LEGEND)}_`);
  const phases = phaseMovementTable(movement);
  if (phases) parts.push('', '**Bytes per phase** (inclusive, means per run)', '', renderMarkdownTable(phases.columns, phases.rows.map(code)).trimEnd());
  return parts.join('\n') + '\n';
}

/** The CSV's columns: raw SI numbers (bytes, B/s, J/GB), one row per configuration × link kind; overlap a fraction (0–1). */
export const MOVEMENT_CSV_COLUMNS = [
  'key', 'kind', 'n', 'bytes', 'bytes_ci95_low', 'bytes_ci95_high', 'rate_bps', 'joules_per_gb', 'joules_per_gb_ci95_low', 'joules_per_gb_ci95_high', 'overlap_fraction',
] as const;

export function dataMovementCsv(results: CampaignResults): string {
  const rows: CsvValue[][] = [[...MOVEMENT_CSV_COLUMNS]];
  const ends = (s: Summary): CsvValue[] => interval(s.ci95) ?? [null, null];
  for (const c of orderedDataMovement(results)?.configurations ?? []) {
    for (const k of c.kinds) {
      rows.push([c.key, k.kind, k.bytes.n, k.bytes.mean, ...ends(k.bytes), k.meanRateBps.mean, k.joulesPerGB.mean, ...ends(k.joulesPerGB), c.overlapFraction.mean]);
    }
  }
  return renderCsv(rows);
}

/**
 * `--data-movement` in `format`. JSON is the API's `dataMovement` member, its configurations
 * reordered only when `sorted` (--sort). Where nothing was measured, CSV is its header and JSON
 * `null`, with the note on stderr.
 */
export function renderDataMovement(results: CampaignResults, format: ResultsFormat, color: Colors, options: { sorted?: boolean } = {}): SectionOutput {
  const none = !results.dataMovement || results.dataMovement.configurations.length === 0;
  const note = none ? noDataMovementText(results) : '';
  switch (format) {
    case 'table':
      return { stdout: dataMovementTable(results, color), stderr: '' };
    case 'markdown':
      return { stdout: dataMovementMarkdown(results), stderr: '' };
    case 'csv':
      return { stdout: dataMovementCsv(results), stderr: note };
    case 'json':
      return { stdout: JSON.stringify(options.sorted ? orderedDataMovement(results) : (results.dataMovement ?? null), null, 2) + '\n', stderr: note };
  }
}
