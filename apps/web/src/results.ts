// A campaign's results as the UI shows and exports them: the marks (P T E D, and C M for least
// carbon and cheapest, as the CLI prints them), the claims with their ties and intervals and the
// node effects (the CLI's words), the ± of each figure, the rows of the results
// table and its CSV (the CLI's columns with carbon and cost where the runs have them, then the
// marks and the energy per component).
import { footprintCsvColumns, markLetters, marksWithFootprintOf, renderCsv, resultsCsvRows } from '@erg/format';
import type { CampaignResults, ConfigurationResult } from './types';

// Marks, ±, parameter columns and the CSV's rows are the CLI's too: one definition in @erg/format.
export {
  claimsLevelText, confidenceText, confoundedLines, NODE_EFFECT_HEADERS, nodeEffectRows, paretoDetailLines, paretoLegend, paretoStatusText, ratioText, rankLines,
} from '@erg/format';
export {
  CSV_FIGURES, differingMachines, entryId, flaggedConfigurations, footprintCsvColumns, groupedByFingerprint, halfWidth, hasCarbon, hasCost, inConfigurationOrder, interval, leftOutText, markLegend,
  markLetters, MARK_LEGEND, marksOf, marksWithFootprintOf, measuredConfigurations, objectivesText, parameterNames, parameterText, powerNoteLine, publishableLine, resultRows, runOrderLabel, startedByLabel,
  UNMEASURED_SHOWN, UNTRIED, type Marks,
} from '@erg/format';

/** The component kinds over all configurations (`gpu`, `cpu`, `module`, …), sorted. */
export function componentKinds(configurations: readonly ConfigurationResult[]): string[] {
  const kinds = new Set<string>();
  for (const c of configurations) for (const k of Object.keys(c.components ?? {})) kinds.add(k);
  return [...kinds].sort();
}

/**
 * The results CSV: the CLI's columns (@erg/format's rows: key, one per parameter, CSV_FIGURES as
 * raw SI numbers and true/false, then carbon and cost with their intervals where some
 * configuration has them), then `marks` (P T E D, C M) and the mean energy of each component
 * (`energy_<kind>_j`).
 */
export function resultsCsv(results: CampaignResults): string {
  const kinds = componentKinds(results.configurations);
  return renderCsv(
    resultsCsvRows(results, [
      ...footprintCsvColumns(results),
      { header: 'marks', value: (c) => markLetters(marksWithFootprintOf(results, c)) },
      ...kinds.map((k) => ({ header: `energy_${k}_j`, value: (c: ConfigurationResult) => c.components?.[k]?.mean ?? null })),
    ]),
  );
}
