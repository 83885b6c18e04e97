// A campaign's results as the API returns them, and what the CLI's formats derive from them beyond
// what @erg/format shares with the web app (marks, ±, parameter columns, CSV rows): the order of
// the configurations (--sort) and the alignment of parameter columns.
import { z } from 'zod';
import type { CampaignResults, ConfigurationResult, Summary } from '../api-types';

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

/** Whether a parameter's values are all numbers (its column is then right-aligned). */
export function isNumericParameter(configurations: readonly ConfigurationResult[], name: string): boolean {
  return configurations.every((c) => c.parameters[name] === undefined || typeof c.parameters[name] === 'number');
}
