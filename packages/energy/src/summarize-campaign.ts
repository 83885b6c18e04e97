import type { CampaignResults as CampaignResultsView, ConfigurationResult as ConfigurationResultView, Exclusion, RunFlag } from '@erg/spec';
import { EnergyInputError } from './errors';
import { bestOf, paretoFront, tradeoff, type BestOf, type Tradeoff, type TradeoffPoint } from './pareto';
import { summarize, type Summary } from './stats';

/** One run's figures as stored; null where a figure could not be measured. */
export interface RunFigures {
  timeS: number | null;
  energyJ: number | null;
  edpJs: number | null;
  ed2pJs2: number | null;
  avgPowerW: number | null;
  /** Figures of merit parsed from the workload's output (samples_per_s, steps, …). */
  metrics: Record<string, number | null>;
  /** J per component kind (gpu, cpu, module, …) that added up to energyJ; absent when not known. */
  components?: Record<string, number>;
  /** Why its figures cannot be fully trusted (shared_node, too_short, …); absent: none. */
  flags?: readonly RunFlag[];
}

/** One configuration with its runs (repetitions). */
export interface ConfigurationRuns<P = Record<string, unknown>> {
  key: string;
  parameters: P;
  runs: readonly RunFigures[];
}

/**
 * One configuration's results over its repetitions: the API's ConfigurationResult (field
 * meanings there, in @erg/spec), typed by the configuration's parameters.
 */
export type ConfigurationResult<P = Record<string, unknown>> = Omit<ConfigurationResultView, 'parameters'> & { parameters: P };

/** A campaign's results (the API's CampaignResults without the campaign id): per configuration, the Pareto front and the best configurations. */
export type CampaignResults<P = Record<string, unknown>> = Omit<CampaignResultsView, 'campaignId' | 'configurations' | 'runsLeftOut'> & { configurations: ConfigurationResult<P>[] };

/** A configuration left out of the front and the best-of picks, and why. */
export type { Exclusion } from '@erg/spec';

/**
 * Summarises every configuration's repetitions and compares the configurations. The front
 * uses, per configuration, the mean time and mean energy over the runs that measured BOTH, so
 * that each point's T and E describe the same runs; a configuration without such a run is left
 * out of the comparison and listed in `excluded` with the reason.
 */
export function campaignResults<P = Record<string, unknown>>(configs: readonly ConfigurationRuns<P>[]): CampaignResults<P> {
  const seen = new Set<string>();
  for (const c of configs) {
    if (seen.has(c.key)) throw new EnergyInputError('ERG_ENERGY_BAD_ARGUMENT', `configuration key ${JSON.stringify(c.key)} appears twice; keys must be unique`);
    seen.add(c.key);
  }
  const excluded: Exclusion[] = [];
  const points: TradeoffPoint[] = [];
  const configurations = configs.map((c): ConfigurationResult<P> => {
    const runs = c.runs;
    const names: string[] = [];
    for (const r of runs) for (const name of Object.keys(r.metrics ?? {})) if (!names.includes(name)) names.push(name);
    const metrics: Record<string, Summary> = {};
    for (const name of names) metrics[name] = summarize(runs.map((r) => r.metrics?.[name]));
    const kinds: string[] = [];
    for (const r of runs) for (const kind of Object.keys(r.components ?? {})) if (!kinds.includes(kind)) kinds.push(kind);
    const components: Record<string, Summary> = {};
    for (const kind of kinds) components[kind] = summarize(runs.map((r) => r.components?.[kind]));
    const complete = runs.filter((r) => isNumber(r.timeS) && isNumber(r.energyJ));
    let point: ConfigurationResult<P>['point'] = null;
    if (complete.length > 0) {
      point = {
        timeS: summarize(complete.map((r) => r.timeS)).mean!,
        energyJ: summarize(complete.map((r) => r.energyJ)).mean!,
        n: complete.length,
      };
      points.push({ key: c.key, timeS: point.timeS, energyJ: point.energyJ });
    } else {
      excluded.push({
        key: c.key,
        why: runs.length === 0 ? 'no completed runs' : `none of its ${runs.length} completed run(s) has both a measured time and a measured energy (see the runs left out)`,
      });
    }
    return {
      key: c.key,
      parameters: c.parameters,
      n: runs.length,
      timeS: summarize(runs.map((r) => r.timeS)),
      energyJ: summarize(runs.map((r) => r.energyJ)),
      edpJs: summarize(runs.map((r) => r.edpJs)),
      ed2pJs2: summarize(runs.map((r) => r.ed2pJs2)),
      avgPowerW: summarize(runs.map((r) => r.avgPowerW)),
      metrics,
      components,
      point,
      paretoOptimal: false,
      flaggedRuns: countFlags(runs),
    };
  });
  const front = paretoFront(points);
  const onFront = new Set(front);
  for (const c of configurations) c.paretoOptimal = onFront.has(c.key);
  return { configurations, paretoFront: front, best: bestOf(points), tradeoff: tradeoff(points), excluded };
}

/** How many runs carry each flag; only flags some run carries. */
function countFlags(runs: readonly RunFigures[]): Partial<Record<RunFlag, number>> {
  const counts: Partial<Record<RunFlag, number>> = {};
  for (const r of runs) for (const f of new Set(r.flags ?? [])) counts[f] = (counts[f] ?? 0) + 1;
  return counts;
}

function isNumber(x: number | null | undefined): x is number {
  return typeof x === 'number' && Number.isFinite(x);
}
