import type { RunFlag, ValidityCheckName } from '@erg/spec';
import type { RunFigures } from './run-figures';

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
  /** The run's carbon.gCO2e; null or absent: none (its cluster had no carbon settings, or it was computed before they existed). */
  carbonG?: number | null;
  /** Its cost.total, cost.currency and cost.perKWh; null or absent: no cost. */
  costTotal?: number | null;
  costCurrency?: string | null;
  costPerKWh?: number | null;
  /** Its validity, as far as counting needs it; null or absent: not checked (figures computed before erg checked them). */
  validity?: StoredValidity | null;
}

/** What counting needs of a run's validity (@erg/spec RunValidity): whether it passed, whether its campaign leaves it out, why. */
export interface StoredValidity {
  valid: boolean;
  /** The campaign's validity.excludeInvalid leaves this invalid run out. */
  excluded: boolean;
  reasons: string[];
  /** The gates it failed. */
  failed: ValidityCheckName[];
}

/** Which runs count beyond the one rule: with `validOnly`, no invalid run does (the request's ?valid=only). */
export interface CountingOptions {
  validOnly?: boolean;
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
 * The one rule for which runs count, shared by campaign results, adaptive decisions and regression
 * verdicts: a run's time counts when its workload window is measured (time > 0); its energy, EDP,
 * ED²P, average power, components and carbon count only when its energy was measured (coverage > 0
 * and energy > 0). A run whose energy was not measured (no power sensor in the window, only
 * utilisation samples) never enters a configuration's statistics as 0 J, nor as 0 gCO2e. Its cost
 * counts with its time when the price is per node-hour only, with its energy when it is (also) per
 * kWh. An invalid run (it failed a validity gate) counts, flagged, unless its campaign's
 * validity.excludeInvalid leaves it out (stored with its validity as `excluded`) — then nothing of
 * it counts anywhere — or the reader asks for valid runs only.
 */
export function countedFigures(stored: StoredFigures | null, options: CountingOptions = {}): CountedFigures {
  if (stored === null) return { figures: NONE, leftOut: { what: 'run', why: 'no telemetry reached erg for its window, so it has no figures' } };
  if (!(stored.timeS > 0)) return { figures: NONE, leftOut: { what: 'run', why: `its workload window is empty (${stored.timeS} s)` } };
  const validity = stored.validity;
  if (validity && !validity.valid && (validity.excluded || options.validOnly)) {
    const by = validity.excluded ? 'validity.excludeInvalid' : 'valid runs only';
    return { figures: NONE, leftOut: { what: 'run', why: `invalid measurement (${by}): ${validity.reasons.join('; ')}` } };
  }
  const flags = stored.flags && stored.flags.length > 0 ? { flags: stored.flags } : {};
  const cost = isNumber(stored.costTotal) ? { cost: stored.costTotal, costCurrency: stored.costCurrency ?? null } : {};
  // A price per node-hour alone needs only the time.
  const timeCost = isNumber(stored.costPerKWh) ? {} : cost;
  const time = { ...NONE, timeS: stored.timeS, ...flags, ...timeCost };
  if (!(stored.coverage > 0)) return { figures: time, leftOut: { what: 'energy', why: 'no power samples inside its window' } };
  if (!(stored.energyJ > 0)) return { figures: time, leftOut: { what: 'energy', why: `its measured energy is ${stored.energyJ} J` } };
  const { timeS, energyJ, edpJs, ed2pJs2, avgPowerW, components } = stored;
  const carbon = isNumber(stored.carbonG) ? { carbonG: stored.carbonG } : {};
  return { figures: { timeS, energyJ, edpJs, ed2pJs2, avgPowerW, ...(components ? { components } : {}), ...flags, ...carbon, ...cost }, leftOut: null };
}

function isNumber(x: unknown): x is number {
  return typeof x === 'number' && Number.isFinite(x);
}
