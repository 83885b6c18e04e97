/**
 * The data model the rest of erg hands to the energy math. Words:
 * - **series** — one sensor's samples on one node, time-sorted;
 * - **sensor** — `<component><index>.<quantity>`, e.g. `gpu0.power`, `module1.energy`;
 * - **window** — the time interval `[startMs, endMs]`, Unix milliseconds, that a figure covers;
 * - **gap** — a stretch of a window with no usable samples: reported, never filled in.
 */

import type { SensorGap, SensorSource, TimeWindow } from '@erg/spec';

/** One sensor's samples on one node, time-sorted; t in Unix milliseconds (fractions allowed), v in the sensor's unit. */
export interface Series {
  sensor: string;
  t: Float64Array | number[];
  v: Float64Array | number[];
}

/** Where a sensor's readings come from (the telemetry batch's `sensors[].source`). */
export type { SensorSource } from '@erg/spec';

/** What is known about one sensor beyond its samples. */
export interface SensorInfo {
  sensor: string;
  /** 'nvml' | 'nvidia-smi' | 'hwmon' | 'rapl' | 'procfs' | 'model' | 'import' (a plain string so importers can pass through what they read). */
  source: SensorSource | (string & {});
  /**
   * What the readings cover, where the source said so (`module` for a GH200's NVML energy
   * counter). A sensor whose scope differs from its name's component counts under its scope:
   * `gpu0.energy` with scope `module` is module0's energy, never the GPU's.
   */
  scope?: string;
  /** Counter range in the sensor's unit (RAPL `max_energy_range_uj` converted to J). */
  wrapAt?: number;
  /** A power sensor's averaging window (ms) ending at each reading's timestamp, where its source declared it (hwmon's power1_average_interval). */
  averagingMs?: number;
  /** How often (ms) a counter's value changes on the device's own clock, where its source declared it. */
  updateMs?: number;
}

/** Everything one node recorded for one run. */
export interface NodeTelemetry {
  node: string;
  series: Series[];
  sensors: SensorInfo[];
}

/** A time interval in Unix milliseconds (the API's TimeWindow). */
export type Window = TimeWindow;

/** A stretch of a window without usable samples (a SensorGap before it is tied to its sensor). */
export type Gap = Pick<SensorGap, 'fromMs' | 'toMs'>;

/** The parts of a sensor name: `gpu0.power` → `{ component: 'gpu', index: '0', device: 'gpu0', quantity: 'power' }`. */
export interface SensorName {
  component: string;
  /** The digits after the component; '' when the name has none (`cpu.util`). */
  index: string;
  /** component + index: the physical thing measured. */
  device: string;
  quantity: string;
}

const SENSOR_NAME = /^([a-z]+)(\d*)\.([a-z0-9_]+)$/;

/**
 * Quantities that describe the state the hardware was in (enforced power limit, applications
 * clock, temperature, clock-event reasons), read by assessPowerState. They are never energy:
 * `moduleN.power_limit` is in watts like `moduleN.power`, and counting it — or letting it make a
 * node look like it has modules — would change a run's energy, so the energy math skips them.
 */
export const POWER_STATE_QUANTITIES: readonly string[] = ['power_limit', 'clock_app', 'temp', 'clock_events'];

/** Splits `<component><index>.<quantity>`; null for a name that does not have that shape. */
export function parseSensorName(sensor: string): SensorName | null {
  const m = SENSOR_NAME.exec(sensor);
  if (!m) return null;
  const [, component = '', index = '', quantity = ''] = m;
  return { component, index, device: component + index, quantity };
}

/** The nodes, each once (the first entry): several ranks on one node must not each count the whole node. */
export function distinctNodes(nodes: readonly NodeTelemetry[], warnings: string[]): NodeTelemetry[] {
  const seen = new Set<string>();
  const out: NodeTelemetry[] = [];
  for (const n of nodes) {
    if (seen.has(n.node)) warnings.push(`${n.node}: listed more than once; counted once (the first entry)`);
    else {
      seen.add(n.node);
      out.push(n);
    }
  }
  return out;
}
