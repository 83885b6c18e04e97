// The results as a person reads them, before they become a terminal table or Markdown: one row per
// measured configuration with formatted figures, then the lines that go under the table.
import {
  claimsLevelText, claimsLines, confoundedLines, differingMachines, entryId, fingerprintPrefix, flaggedConfigurations, formatCarbon, formatCost, formatEdp, formatEnergy, formatPercent, formatPower, formatTime, formatWh,
  groupedByFingerprint, halfWidth, hasCarbon, hasCost, leftOutText, markLegend, markLetters, marksWithFootprintOf, measuredConfigurations, NO_VALUE, NODE_EFFECT_HEADERS,
  nodeEffectRows, paretoLegend, paretoStatusText, parameterHeaders, parameterNames, parameterText, plural, powerNoteLine, publishableLine, runOrderLine, whIsHelpful,
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
  /**
   * `Not tried by the search (49,994 configurations): counted, not listed; GET … pages through them`:
   * a search campaign's untried candidates, which the API counts and does not list; null for others.
   */
  untried: { count: string; list: string } | null;
  /** Completed runs whose figures (or energy figures) do not count: `run N of key: what, why`. */
  runsLeftOut: string[];
  /** Configurations with runs whose figures cannot be fully trusted: `key: shared_node 2 of 3 runs, …`. */
  flagged: string[];
  /**
   * One sentence on the fastest against the most frugal configuration, when they differ: the
   * claims' (with both intervals) where the results carry claims, else the point estimates.
   */
  tradeoff: string | null;
  /** What the results claim and how sure they are: a heading, then the summary, the ranks with their ties and ratios, the front's detail. */
  claims: { heading: string; lines: string[] } | null;
  /** How the nodes the runs ran on differ: a table of residuals per node, the confounded configurations, the note. */
  nodes: { heading: string; columns: Column[]; rows: string[][]; confounded: string[]; note: string } | null;
  /** `Power state: …`: whether erg set the power state the figures were measured at; null from an API that does not say. */
  power: string | null;
  /** Configurations whose runs ran on more than one kind of machine, each with how the kinds differ. */
  differingMachines: { label: string; differences: readonly string[] }[];
  /** `Run order: randomized complete blocks, seed 1234`: the order the runs went to the cluster in; null from an API that does not say. */
  runOrder: string | null;
  /** `publishable: yes — …`: whether every counted run passed the validity gates; null from an API that does not say. */
  publishable: string | null;
}

function plusMinus(value: number | null, format: (x: number) => string): string {
  return value === null ? NO_VALUE : `± ${format(value)}`;
}

/** The legend's sentence on what the carbon and cost columns hold; '' when the table has neither. */
function footprintLegend(withCarbon: boolean, withCost: boolean, currency: string | null): string {
  const parts = [
    ...(withCarbon ? ["carbon is gCO₂e per run (the nodes' energy × the site's PUE × the grid's intensity)"] : []),
    ...(withCost ? [`cost is per run${currency ? ` in ${currency}` : ''} (node-hours and kWh at the cluster's price)`] : []),
  ];
  if (parts.length === 0) return '';
  const sentence = `${parts.join(', ')}; \`erg run RUN\` shows what a run's figures were computed with.`;
  return ` ${sentence[0]!.toUpperCase()}${sentence.slice(1)}`;
}

/**
 * The cells of the results table. Energy gets a watt-hour column beside the joules only when some
 * configuration used at least 1 Wh: below that, Wh figures are tiny fractions that help nobody.
 * Carbon and cost get their columns only when some configuration has such figures (its runs'
 * clusters have carbon settings, a price).
 */
export function humanResults(results: CampaignResults): HumanResults {
  const configurations = measuredConfigurations(results);
  const names = parameterNames(results.configurations);
  const withWh = configurations.some((c) => whIsHelpful(c.energyJ.mean));
  const withCarbon = hasCarbon(results);
  const withCost = hasCost(results);
  const currency = results.currency ?? null;
  const cost = (amount: number | null) => formatCost(amount, currency);
  const figures: Column[] = [
    { header: 'n', align: 'right' },
    { header: 'time', align: 'right' },
    { header: '± 95 %', align: 'right' },
    { header: 'energy', align: 'right' },
    { header: '± 95 %', align: 'right' },
    ...(withWh ? [{ header: 'energy (Wh)', align: 'right' } as Column] : []),
    { header: 'avg power', align: 'right' },
    { header: 'EDP', align: 'right' },
    ...(withCarbon ? [{ header: 'carbon', align: 'right' } as Column, { header: '± 95 %', align: 'right' } as Column] : []),
    ...(withCost ? [{ header: 'cost', align: 'right' } as Column, { header: '± 95 %', align: 'right' } as Column] : []),
  ];
  // Grouped by fingerprint, a configuration has one row per kind of machine: the class tells them apart.
  const byFingerprint = groupedByFingerprint(results);
  const fingerprint: Column[] = byFingerprint ? [{ header: 'fingerprint' }] : [];
  // Each entry's place on the front under uncertainty, where the results carry claims.
  const claims = results.claims ?? null;
  const pareto: Column[] = claims ? [{ header: 'pareto' }] : [];
  const headers = parameterHeaders(names, ['marks', ...fingerprint.map((f) => f.header), ...figures.map((f) => f.header), ...pareto.map((p) => p.header)]);
  const columns: Column[] = [
    { header: 'marks' },
    ...names.map((name, i): Column => ({ header: headers[i]!, align: isNumericParameter(results.configurations, name) ? 'right' : 'left' })),
    ...fingerprint,
    ...figures,
    ...pareto,
  ];
  const marks = configurations.map((c) => markLetters(marksWithFootprintOf(results, c)));
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
    ...(withCarbon ? [formatCarbon(c.carbon.mean), plusMinus(halfWidth(c.carbon), formatCarbon)] : []),
    ...(withCost ? [cost(c.cost.mean), plusMinus(halfWidth(c.cost), cost)] : []),
    ...(claims ? [paretoStatusText(claims, entryId(c))] : []),
  ]);
  const t = results.tradeoff;
  const tradeoff = claims
    ? claims.tradeoff && `Trade-off: ${claims.tradeoff.statement}.`
    : t && t.fastest !== t.mostFrugal
      ? `Trade-off: the most frugal configuration (${t.mostFrugal}) saves ${formatEnergy(t.energySavedJ)} (${formatPercent(
          t.energySavedPct === null ? null : t.energySavedPct / 100,
        )}) against the fastest (${t.fastest}) and takes ${formatTime(t.timeLostS)} (${formatPercent(t.timeLostPct === null ? null : t.timeLostPct / 100)}) longer.`
      : null;
  const runsLeftOut = (results.runsLeftOut ?? []).map((r) => `run ${r.repetition} of ${r.key}: ${leftOutText(r)}`);
  const flagged = flaggedConfigurations(results.configurations).map(({ configuration, text }) => `${entryId(configuration)}: ${text}`);
  const legend =
    `Marks: ${markLegend(results)}; ± is the half-width of the 95 % interval of the mean.${footprintLegend(withCarbon, withCost, currency)}` +
    (claims ? ` ${paretoLegend(claims)}.` : '');
  return {
    columns, rows, marks, legend, excluded: results.excluded, runsLeftOut, flagged, tradeoff,
    untried: results.unmeasured && results.unmeasured.configurations > 0 ? { count: plural(results.unmeasured.configurations, 'configuration'), list: results.unmeasured.list } : null,
    power: powerNoteLine(results.power), differingMachines: differingMachines(results.configurations), publishable: publishableLine(results.validity),
    claims: claims && { heading: `Claims (${claimsLevelText(claims)})`, lines: claimsLines(claims).filter((line) => !line.startsWith('Trade-off: ')) },
    nodes: nodesOf(results.nodes ?? null),
    runOrder: runOrderLine(results.design),
  };
}

/** The node effects as a table with its note; null where the runs ran on fewer than two nodes. */
function nodesOf(nodes: CampaignResults['nodes'] | null): HumanResults['nodes'] {
  if (!nodes) return null;
  const columns = NODE_EFFECT_HEADERS.map((header, i): Column => ({ header, align: i === 0 || i === 4 ? 'left' : 'right' }));
  return { heading: `Node effects (${nodes.nodes} nodes)`, columns, rows: nodeEffectRows(nodes), confounded: confoundedLines(nodes), note: nodes.note };
}
