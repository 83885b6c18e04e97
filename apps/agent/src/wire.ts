// What the agent writes to its spool and POSTs to `/v1/runs/{runId}/telemetry`.
//
// packages/spec's TelemetryBatch zod schema is the authority on this format: the API validates
// every batch against it. These are the agent's own hand-kept types (the agent's bundle takes
// nothing of packages/spec but its dependency-free run-dir module: no zod classic, whose RSS the
// agent cannot afford); keep them in step with that schema.
//
// Glossary
// - sensor: one measured quantity on one node, named `<component><index>.<quantity>`, e.g.
//   `gpu0.power`, `module0.power`, `cpu0.energy`, `node0.mem_used`.
// - sample: one reading (t, v) of one sensor.
// - batch: the samples one node collected during one batch window, columnar per sensor,
//   numbered by `seq` = 0, 1, 2, … per node and run.

/** Components a sensor can belong to. */
export type Component = 'gpu' | 'cpu' | 'grace' | 'module' | 'memory' | 'sysio' | 'node';

/** Quantities and their units. `energy` is a monotonic hardware counter (it may wrap at `wrapAt`). */
export const QUANTITY_UNITS = {
  power: 'W',
  energy: 'J',
  util: '%',
  clock: 'MHz',
  mem_used: 'B',
  pcie_tx: 'B/s',
  pcie_rx: 'B/s',
  c2c_tx: 'B/s',
  c2c_rx: 'B/s',
} as const;
export type Quantity = keyof typeof QUANTITY_UNITS;
export type Unit = (typeof QUANTITY_UNITS)[Quantity];

/** Where a sensor's values come from; `model` marks an estimate, not a measurement. */
export type SourceName = 'nvml' | 'nvidia-smi' | 'hwmon' | 'rapl' | 'procfs' | 'model';
export const SOURCE_NAMES: readonly SourceName[] = ['nvml', 'nvidia-smi', 'hwmon', 'rapl', 'procfs', 'model'];

export interface SensorInfo {
  /** `<component><index>.<quantity>` */
  sensor: string;
  source: SourceName;
  unit: Unit;
  /** Counters only: the value (in `unit`) at which the raw counter wraps back to 0. */
  wrapAt?: number;
}

/** All samples of one sensor in one batch; `t` (Unix ms, fractional) and `v` have equal length. */
export interface SampleColumn {
  sensor: string;
  t: number[];
  v: number[];
}

export interface TelemetryBatch {
  node: string;
  seq: number;
  /** Present on the first batch an agent process sends and on any batch after its sensor set changed. */
  sensors?: SensorInfo[];
  samples: SampleColumn[];
}

/** The API's answer to an accepted batch. */
export interface TelemetryAck {
  accepted: number;
  duplicate: boolean;
}

/** Builds a sensor name from its parts. */
export function sensorName(component: Component, index: number, quantity: Quantity): string {
  return `${component}${index}.${quantity}`;
}
