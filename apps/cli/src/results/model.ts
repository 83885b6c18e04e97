// A campaign's results as the API returns them, and what every output format derives from them:
// the order of the configurations, the parameter columns, the marks (Pareto front, best).
import { z } from 'zod';
import { interval, type CampaignResults, type ConfigurationResult, type Summary } from '../api-types';

export type { CampaignResults, ConfigurationResult, Summary };

/** `--sort`: by mean energy, mean time or mean EDP, ascending. Absent: the API's order (configuration position). */
export const ResultsSort = z.enum(['energy', 'time', 'edp']);
export type ResultsSort = z.infer<typeof ResultsSort>;

const SORT_FIELD: Record<ResultsSort, 'energyJ' | 'timeS' | 'edpJs'> = { energy: 'energyJ', time: 'timeS', edp: 'edpJs' };

/** The results with their configurations sorted by `sort` (stable; configurations without a mean last). */
export function sortResults(results: CampaignResults, sort: ResultsSort | undefined): CampaignResults {
  if (!sort) return results;
  const field = SORT_FIELD[sort];
  const mean = (c: ConfigurationResult) => c[field].mean ?? Number.POSITIVE_INFINITY;
  return { ...results, configurations: [...results.configurations].sort((a, b) => mean(a) - mean(b)) };
}

/** The parameter names over all configurations, in order of first appearance. */
export function parameterNames(configurations: readonly ConfigurationResult[]): string[] {
  const names: string[] = [];
  for (const c of configurations) for (const name of Object.keys(c.parameters)) if (!names.includes(name)) names.push(name);
  return names;
}

/**
 * Column headers for the parameters: each parameter's own name, or `param_<name>` where that
 * would clash with one of the format's fixed columns (a parameter called `n`, say).
 */
export function parameterHeaders(names: readonly string[], fixedColumns: readonly string[]): string[] {
  return names.map((name) => (fixedColumns.includes(name) ? `param_${name}` : name));
}

/** A parameter value in its text form (as in configuration keys); '' when the configuration lacks it. */
export function parameterText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** Whether a parameter's values are all numbers (its column is then right-aligned). */
export function isNumericParameter(configurations: readonly ConfigurationResult[], name: string): boolean {
  return configurations.every((c) => c.parameters[name] === undefined || typeof c.parameters[name] === 'number');
}

/** How a configuration stands out: on the Pareto front, runtime-, energy- or EDP-optimal. */
export interface Marks {
  pareto: boolean;
  bestTime: boolean;
  bestEnergy: boolean;
  bestEdp: boolean;
}

export function marksOf(results: CampaignResults, c: ConfigurationResult): Marks {
  return {
    pareto: c.paretoOptimal,
    bestTime: results.best?.time === c.key,
    bestEnergy: results.best?.energy === c.key,
    bestEdp: results.best?.edp === c.key,
  };
}

/** The marks as letters (P T E D), which read the same without colour. */
export function markLetters(marks: Marks): string {
  return [marks.pareto && 'P', marks.bestTime && 'T', marks.bestEnergy && 'E', marks.bestEdp && 'D'].filter(Boolean).join(' ');
}

export const MARK_LEGEND = 'P on the Pareto front of (time, energy) · T fastest · E least energy · D lowest energy-delay product';

/** Half the width of a 95 % interval (the "±"), or null when there is no spread to speak of (n < 2). */
export function halfWidth(summary: Summary): number | null {
  const ci = interval(summary.ci95);
  if (summary.n < 2 || !ci) return null;
  return (ci[1] - ci[0]) / 2;
}

/** The configurations with measurements; the others are listed in `results.excluded`. */
export function measuredConfigurations(results: CampaignResults): ConfigurationResult[] {
  const excluded = new Set(results.excluded.map((e) => e.key));
  return results.configurations.filter((c) => !excluded.has(c.key));
}
