import { counterEnergy } from './counter';
import { indexNode, moduleFit, MODULE_FIT_TOLERANCE, type ModuleFit } from './node-energy';
import { integratePower } from './integrate';
import { DEFAULT_GAP_FACTOR } from './sampling';
import { parseSensorName, type NodeTelemetry, type Window } from './telemetry';

// A node's first-contact checks (`erg-agent doctor`): does each energy counter agree with the power
// reading of the same scope, and do a GH200 module's parts fit inside it. Both read the sensors
// under the scope their sources declared (indexNode), exactly as a run's energy figures do.

export { MODULE_FIT_TOLERANCE, type ModuleFit };

/** One energy counter against the integral of the power reading of the same device and scope. */
export interface CounterComparison {
  /** The counter as counted (its scope's name: NVML's GH200 counter is `module0.energy`). */
  counter: string;
  /** The power reading it is compared with (`module0.power`); null: none of that scope exists. */
  power: string | null;
  counterJ: number;
  /** Null without a power reading. */
  integratedJ: number | null;
  /** (integrated − counter) / counter × 100; null without a power reading or with a counter that did not move. */
  diffPercent: number | null;
}

export interface NodeCheck {
  comparisons: CounterComparison[];
  moduleFit: ModuleFit[];
  /** What indexing the sensors said (unknown scopes, renamed sensors). */
  warnings: string[];
}

/** Compares every energy counter with its scope's power reading and checks GPU + Grace ≤ Module, over `window`. */
export function checkNode(telemetry: NodeTelemetry, window: Window): NodeCheck {
  const warnings: string[] = [];
  const index = indexNode(telemetry, warnings);
  const comparisons: CounterComparison[] = [];
  for (const [sensor, series] of [...index.series].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const name = parseSensorName(sensor);
    if (!name || name.quantity !== 'energy') continue;
    const counterJ = counterEnergy(series, window, { gapFactor: DEFAULT_GAP_FACTOR, wrapAt: index.info.get(sensor)?.wrapAt }).joules;
    const powerName = `${name.device}.power`;
    const power = index.series.get(powerName);
    const integratedJ = power ? integratePower(power, window).joules : null;
    const diffPercent = integratedJ === null || counterJ <= 0 ? null : ((integratedJ - counterJ) / counterJ) * 100;
    comparisons.push({ counter: sensor, power: power ? powerName : null, counterJ, integratedJ, diffPercent });
  }
  return { comparisons, moduleFit: moduleFit(index, window), warnings };
}
