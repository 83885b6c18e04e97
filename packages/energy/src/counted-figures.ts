import type { RunFlag } from '@erg/spec';
import type { RunFigures } from './summarize-campaign';

/** A run's stored energy figures, as far as statistics need them. */
export interface StoredFigures {
  timeS: number;
  energyJ: number;
  edpJs: number;
  ed2pJs2: number;
  avgPowerW: number;
  coverage: number;
  components?: Record<string, number>;
  /** Stored with figures computed since runs carry flags; absent on older ones. */
  flags?: RunFlag[];
}

/** What one completed run adds to its configuration's statistics, and why anything is left out. */
export interface CountedFigures {
  /** The figures that count; null where a figure is left out. */
  figures: Omit<RunFigures, 'metrics'>;
  /** null: every figure counts; else what is left out and why, for a person ("no power samples inside its window"). */
  leftOut: { what: 'run' | 'energy'; why: string } | null;
}

const NONE = { timeS: null, energyJ: null, edpJs: null, ed2pJs2: null, avgPowerW: null } as const;

/**
 * The one rule for which runs count, shared by campaign results and regression verdicts: a run's
 * time counts when its workload window is measured (time > 0); its energy, EDP, ED²P, average
 * power and components count only when its energy was measured (coverage > 0 and energy > 0). A run
 * whose energy was not measured (no power sensor in the window, only utilisation samples) never
 * enters a configuration's statistics as 0 J.
 */
export function countedFigures(stored: StoredFigures | null): CountedFigures {
  if (stored === null) return { figures: NONE, leftOut: { what: 'run', why: 'no telemetry reached erg for its window, so it has no figures' } };
  if (!(stored.timeS > 0)) return { figures: NONE, leftOut: { what: 'run', why: `its workload window is empty (${stored.timeS} s)` } };
  const flags = stored.flags && stored.flags.length > 0 ? { flags: stored.flags } : {};
  const time = { ...NONE, timeS: stored.timeS, ...flags };
  if (!(stored.coverage > 0)) return { figures: time, leftOut: { what: 'energy', why: 'no power samples inside its window' } };
  if (!(stored.energyJ > 0)) return { figures: time, leftOut: { what: 'energy', why: `its measured energy is ${stored.energyJ} J` } };
  const { timeS, energyJ, edpJs, ed2pJs2, avgPowerW, components } = stored;
  return { figures: { timeS, energyJ, edpJs, ed2pJs2, avgPowerW, ...(components ? { components } : {}), ...flags }, leftOut: null };
}
