// Carbon and cost as the pages show them (issue 15 §4): the campaign's columns of gCO₂e and cost
// per run (in the results' currency) where some configuration has them, and a run's figures with
// what they were computed with — the same words as `erg run` and `erg results`. Pure.
import { formatCarbon, formatCost, formatIntensity, formatNumber, formatPercent, plural } from './format';
import { halfWidth, hasCarbon, hasCost } from './results';
import type { CampaignResults, ConfigurationResult, RunCarbon, RunCost, Summary } from './types';

/** A figure's mean ± the half-width of its 95 % interval, as the results table shows energy: "12.3 gCO₂e ± 1.20 gCO₂e". */
export function meanPlusMinus(s: Summary | undefined, format: (x: number | null | undefined) => string): string {
  if (!s) return format(null);
  const h = halfWidth(s);
  return h === null ? format(s.mean) : `${format(s.mean)} ± ${format(h)}`;
}

/** A column of the results table after the energy figures. */
export interface FootprintColumn {
  key: 'carbon' | 'cost';
  header: string;
  title: string;
  cell: (c: ConfigurationResult) => string;
}

/** The carbon and cost columns of the results table: each only where some configuration has the figure. */
export function footprintColumns(results: Pick<CampaignResults, 'configurations' | 'currency'>): FootprintColumn[] {
  const currency = results.currency ?? null;
  const columns: FootprintColumn[] = [];
  if (hasCarbon(results)) {
    columns.push({
      key: 'carbon', header: 'Carbon per run (± 95 %)', title: "gCO₂e: the nodes' energy × the site's PUE × the grid's carbon intensity",
      cell: (c) => meanPlusMinus(c.carbon, formatCarbon),
    });
  }
  if (hasCost(results)) {
    columns.push({
      key: 'cost', header: `Cost per run${currency ? `, ${currency}` : ''} (± 95 %)`, title: "node-hours of the workload and the site's kWh at the cluster's price",
      cell: (c) => meanPlusMinus(c.cost, (x) => formatCost(x, currency)),
    });
  }
  return columns;
}

/** What the carbon and cost columns mean (as under `erg results`); null without them. */
export function footprintNote(results: Pick<CampaignResults, 'configurations' | 'currency'>): string | null {
  const parts = [
    ...(hasCarbon(results) ? ["carbon is gCO₂e per run (the nodes' energy × the site's PUE × the grid's intensity)"] : []),
    ...(hasCost(results) ? [`cost is per run${results.currency ? ` in ${results.currency}` : ''} (node-hours and kWh at the cluster's price)`] : []),
  ];
  if (parts.length === 0) return null;
  const sentence = `${parts.join(', ')}; each run's page shows what its figures were computed with.`;
  return sentence[0]!.toUpperCase() + sentence.slice(1);
}

export interface Fact {
  term: string;
  value: string;
}

/** A run's carbon: the figure, its product, where the intensity came from. */
export function runCarbonFacts(carbon: RunCarbon): Fact[] {
  const facts: Fact[] = [
    { term: 'Carbon', value: formatCarbon(carbon.gCO2e) },
    { term: 'Computed as', value: `${formatNumber(carbon.energyKWh)} kWh × PUE ${formatNumber(carbon.pue)} × ${formatIntensity(carbon.gCO2ePerKWh)}` },
    { term: 'Intensity source', value: `${carbon.source} — ${carbon.note}` },
  ];
  if (carbon.series) {
    facts.push({ term: 'Series used', value: `${plural(carbon.series.points, 'point')}, covering ${formatPercent(carbon.series.coverage)} of the window` });
  }
  return facts;
}

/** A run's cost: the total, then each part the cluster prices (node-hours × rate, the site's kWh × rate). */
export function runCostFacts(cost: RunCost): Fact[] {
  const money = (x: number | null) => formatCost(x, cost.currency);
  const facts: Fact[] = [{ term: 'Cost', value: money(cost.total) }];
  if (cost.perNodeHour !== null) {
    facts.push({ term: 'Node time', value: `${formatNumber(cost.nodeHours)} node-hours (${plural(cost.nodes, 'node')}) × ${money(cost.perNodeHour)} per node-hour = ${money(cost.nodeTimeCost)}` });
  }
  if (cost.perKWh !== null) {
    facts.push({ term: 'Energy', value: `${formatNumber(cost.energyKWh)} kWh × PUE ${formatNumber(cost.pue)} × ${money(cost.perKWh)} per kWh = ${money(cost.energyCost)}` });
  }
  return facts;
}
