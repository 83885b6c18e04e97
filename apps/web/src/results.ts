// A campaign's results as the UI shows and exports them: the marks (P T E D, as the CLI prints
// them), the ± of each figure, the rows of the results table and its CSV (the CLI's columns, then
// the marks and the energy per component).
import { toCsv, type CsvValue } from './csv';
import type { CampaignResults, ConfigurationResult, Summary } from './types';

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

/** The interval as a pair, or null when absent or not finite. */
export function interval(ci: Summary['ci95'] | undefined): [number, number] | null {
  if (!ci) return null;
  const [lo, hi] = ci;
  return Number.isFinite(lo) && Number.isFinite(hi) ? [lo, hi] : null;
}

/** Half the width of a 95 % interval (the "±"), or null when there is no spread to speak of (n < 2). */
export function halfWidth(summary: Summary): number | null {
  const ci = interval(summary.ci95);
  if (summary.n < 2 || !ci) return null;
  return (ci[1] - ci[0]) / 2;
}

/** The configurations with measurements; the others are listed in `results.excluded`. */
export function measuredConfigurations(results: CampaignResults): ConfigurationResult[] {
  const excluded = new Set(results.excluded.map((e) => e.key));
  return results.configurations.filter((c) => !excluded.has(c.key) && c.point !== null);
}

/** The parameter names over all configurations, in order of first appearance. */
export function parameterNames(configurations: readonly { parameters: Record<string, unknown> }[]): string[] {
  const names: string[] = [];
  for (const c of configurations) for (const name of Object.keys(c.parameters)) if (!names.includes(name)) names.push(name);
  return names;
}

/** A parameter value in its text form (as in configuration keys); '' when absent. */
export function parameterText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** The component kinds over all configurations (`gpu`, `cpu`, `module`, …), sorted. */
export function componentKinds(configurations: readonly ConfigurationResult[]): string[] {
  const kinds = new Set<string>();
  for (const c of configurations) for (const k of Object.keys(c.components ?? {})) kinds.add(k);
  return [...kinds].sort();
}

/** Figures per configuration in the CSV after the key and the parameters, as `erg results --format csv` writes them. */
export const CSV_FIGURES = [
  'n', 'time_s', 'time_ci95_low', 'time_ci95_high', 'energy_j', 'energy_ci95_low', 'energy_ci95_high',
  'avg_power_w', 'edp_js', 'pareto', 'best_time', 'best_energy', 'best_edp',
] as const;

/**
 * The results CSV: the CLI's columns (key, one per parameter, CSV_FIGURES as raw SI numbers and
 * true/false), then `marks` (P T E D) and the mean energy of each component (`energy_<kind>_j`).
 */
export function resultsCsv(results: CampaignResults): string {
  const names = parameterNames(results.configurations);
  const kinds = componentKinds(results.configurations);
  const fixed = ['key', ...CSV_FIGURES, 'marks', ...kinds.map((k) => `energy_${k}_j`)];
  const header = ['key', ...names.map((n) => (fixed.includes(n) ? `param_${n}` : n)), ...fixed.slice(1)];
  const rows: CsvValue[][] = results.configurations.map((c) => {
    const marks = marksOf(results, c);
    return [
      c.key,
      ...names.map((n) => parameterText(c.parameters[n])),
      c.n,
      c.timeS.mean, ...(interval(c.timeS.ci95) ?? [null, null]),
      c.energyJ.mean, ...(interval(c.energyJ.ci95) ?? [null, null]),
      c.avgPowerW.mean, c.edpJs.mean,
      marks.pareto, marks.bestTime, marks.bestEnergy, marks.bestEdp,
      markLetters(marks),
      ...kinds.map((k) => c.components?.[k]?.mean ?? null),
    ];
  });
  return toCsv([header, ...rows]);
}
