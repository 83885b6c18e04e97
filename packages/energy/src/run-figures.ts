// One run's figures as the results count them, and each objective's figure among them: what the
// campaign's summaries, claims and node effects read.
import type { Objective, RunFlag } from '@erg/spec';

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
  /**
   * An opaque id of the kind of machine the run ran on (its fingerprint class: hardware and
   * software, not node names); for a multi-node run the caller combines its nodes' classes into
   * one id. null or absent: not known.
   */
  fingerprintClass?: string | null;
  /** gCO2e; null or absent: none (its cluster had no carbon settings, or its energy does not count). */
  carbonG?: number | null;
  /** Its cost, in the results' currency (the caller leaves out costs in another); null or absent: none. */
  cost?: number | null;
  /** The currency of `cost`. */
  costCurrency?: string | null;
  /**
   * The node it ran on (a multi-node run: its node list, e.g. "gh-[001-002]"), for the node
   * effects; null or absent: not known.
   */
  node?: string | null;
  /**
   * Its repetition, which is its block in a blocked run order (repetition r of every configuration
   * ran side by side): the claims pair runs of one block; null or absent: not known.
   */
  repetition?: number | null;
}

/** Each objective's figure in a run's figures. */
export const FIGURE: Record<Objective, (r: RunFigures) => number | null | undefined> = {
  time: (r) => r.timeS, energy: (r) => r.energyJ, edp: (r) => r.edpJs, carbon: (r) => r.carbonG, cost: (r) => r.cost,
};

/** A run's figure for an objective (null or absent: it has none). */
export function objectiveFigure(r: RunFigures, o: Objective): number | null | undefined {
  return FIGURE[o](r);
}
