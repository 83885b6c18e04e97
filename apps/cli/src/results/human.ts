// The results as a person reads them, before they become a terminal table or Markdown: one row per
// measured configuration with formatted figures, then the lines that go under the table.
import {
  differingMachines, entryId, fingerprintPrefix, flaggedConfigurations, formatEdp, formatEnergy, formatPercent, formatPower, formatTime, formatWh, groupedByFingerprint,
  halfWidth, leftOutText, markLetters, marksOf, MARK_LEGEND, measuredConfigurations, NO_VALUE, parameterHeaders, parameterNames, parameterText, powerNoteLine,
  whIsHelpful,
} from '@erg/format';
import type { Column } from '../output/table';
import { isNumericParameter, type CampaignResults } from './model';

export interface HumanResults {
  columns: Column[];
  rows: string[][];
  /** Which row holds which marks (for colouring them on a terminal). */
  marks: string[];
  legend: string;
  /** Configurations without measurements, `key: why`. */
  excluded: { key: string; why: string }[];
  /** Completed runs whose figures (or energy figures) do not count: `run N of key: what, why`. */
  runsLeftOut: string[];
  /** Configurations with runs whose figures cannot be fully trusted: `key: shared_node 2 of 3 runs, …`. */
  flagged: string[];
  /** One sentence on the fastest against the most frugal configuration, when they differ. */
  tradeoff: string | null;
  /** `Power state: …`: whether erg set the power state the figures were measured at; null from an API that does not say. */
  power: string | null;
  /** Configurations whose runs ran on more than one kind of machine, each with how the kinds differ. */
  differingMachines: { label: string; differences: readonly string[] }[];
}

function plusMinus(value: number | null, format: (x: number) => string): string {
  return value === null ? NO_VALUE : `± ${format(value)}`;
}

/**
 * The cells of the results table. Energy gets a watt-hour column beside the joules only when some
 * configuration used at least 1 Wh: below that, Wh figures are tiny fractions that help nobody.
 */
export function humanResults(results: CampaignResults): HumanResults {
  const configurations = measuredConfigurations(results);
  const names = parameterNames(results.configurations);
  const withWh = configurations.some((c) => whIsHelpful(c.energyJ.mean));
  const figures: Column[] = [
    { header: 'n', align: 'right' },
    { header: 'time', align: 'right' },
    { header: '± 95 %', align: 'right' },
    { header: 'energy', align: 'right' },
    { header: '± 95 %', align: 'right' },
    ...(withWh ? [{ header: 'energy (Wh)', align: 'right' } as Column] : []),
    { header: 'avg power', align: 'right' },
    { header: 'EDP', align: 'right' },
  ];
  // Grouped by fingerprint, a configuration has one row per kind of machine: the class tells them apart.
  const byFingerprint = groupedByFingerprint(results);
  const fingerprint: Column[] = byFingerprint ? [{ header: 'fingerprint' }] : [];
  const headers = parameterHeaders(names, ['marks', ...fingerprint.map((f) => f.header), ...figures.map((f) => f.header)]);
  const columns: Column[] = [
    { header: 'marks' },
    ...names.map((name, i): Column => ({ header: headers[i]!, align: isNumericParameter(results.configurations, name) ? 'right' : 'left' })),
    ...fingerprint,
    ...figures,
  ];
  const marks = configurations.map((c) => markLetters(marksOf(results, c)));
  const rows = configurations.map((c, i) => [
    marks[i]!,
    ...names.map((name) => parameterText(c.parameters[name])),
    ...(byFingerprint ? [fingerprintPrefix(c.fingerprint)] : []),
    String(c.n),
    formatTime(c.timeS.mean),
    plusMinus(halfWidth(c.timeS), formatTime),
    formatEnergy(c.energyJ.mean),
    plusMinus(halfWidth(c.energyJ), formatEnergy),
    ...(withWh ? [formatWh(c.energyJ.mean)] : []),
    formatPower(c.avgPowerW.mean),
    formatEdp(c.edpJs.mean),
  ]);
  const t = results.tradeoff;
  const tradeoff =
    t && t.fastest !== t.mostFrugal
      ? `Trade-off: the most frugal configuration (${t.mostFrugal}) saves ${formatEnergy(t.energySavedJ)} (${formatPercent(
          t.energySavedPct === null ? null : t.energySavedPct / 100,
        )}) against the fastest (${t.fastest}) and takes ${formatTime(t.timeLostS)} (${formatPercent(t.timeLostPct === null ? null : t.timeLostPct / 100)}) longer.`
      : null;
  const runsLeftOut = (results.runsLeftOut ?? []).map((r) => `run ${r.repetition} of ${r.key}: ${leftOutText(r)}`);
  const flagged = flaggedConfigurations(results.configurations).map(({ configuration, text }) => `${entryId(configuration)}: ${text}`);
  return {
    columns, rows, marks, legend: `Marks: ${MARK_LEGEND}; ± is the half-width of the 95 % interval of the mean.`, excluded: results.excluded, runsLeftOut, flagged, tradeoff,
    power: powerNoteLine(results.power), differingMachines: differingMachines(results.configurations),
  };
}
