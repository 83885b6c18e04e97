// The parameter-effect view: for each parameter, the mean energy and mean time of the measured
// configurations that have each of its values, i.e. averaged over the other parameters.
import { parameterNames, parameterText } from './results';
import type { ConfigurationResult } from './types';

export interface EffectLevel {
  /** The value in its text form. */
  value: string;
  /** How many configurations have this value (and a measured mean). */
  configurations: number;
  meanEnergyJ: number | null;
  meanTimeS: number | null;
}

export interface ParameterEffect {
  parameter: string;
  levels: EffectLevel[];
}

function mean(xs: readonly number[]): number | null {
  return xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;
}

/**
 * One entry per parameter with at least two values, levels ordered numerically when every value
 * is a number, else by first appearance. Configurations without a mean are left out.
 */
export function parameterEffects(configurations: readonly ConfigurationResult[]): ParameterEffect[] {
  const measured = configurations.filter((c) => c.energyJ.mean !== null || c.timeS.mean !== null);
  const effects: ParameterEffect[] = [];
  for (const name of parameterNames(measured)) {
    const groups = new Map<string, { raw: unknown; energy: number[]; time: number[]; count: number }>();
    for (const c of measured) {
      if (!(name in c.parameters)) continue;
      const raw = c.parameters[name];
      const key = parameterText(raw);
      const g = groups.get(key) ?? { raw, energy: [], time: [], count: 0 };
      g.count++;
      if (c.energyJ.mean !== null) g.energy.push(c.energyJ.mean);
      if (c.timeS.mean !== null) g.time.push(c.timeS.mean);
      groups.set(key, g);
    }
    if (groups.size < 2) continue;
    let entries = [...groups.entries()];
    if (entries.every(([, g]) => typeof g.raw === 'number')) entries = entries.sort((a, b) => (a[1].raw as number) - (b[1].raw as number));
    effects.push({
      parameter: name,
      levels: entries.map(([value, g]) => ({ value, configurations: g.count, meanEnergyJ: mean(g.energy), meanTimeS: mean(g.time) })),
    });
  }
  return effects;
}
