import { type Component, type Quantity, type SensorInfo } from '../wire';

// What erg asks nvidia-smi (`--query-gpu=index,<fields> --format=csv,noheader,nounits`) and how
// it reads the answer: one CSV line per GPU.

export interface NvidiaSmiField {
  query: string;
  component: Component;
  quantity: Quantity;
  unit: SensorInfo['unit'];
  /** Multiplier from nvidia-smi's `nounits` value to the sensor's unit. */
  scale: number;
}
const F = (query: string, component: Component, quantity: Quantity, unit: SensorInfo['unit'], scale = 1): NvidiaSmiField => ({ query, component, quantity, unit, scale });

/** Current drivers (power.draw.instant and module power exist since R530-ish). */
export const NVIDIA_SMI_FIELDS: NvidiaSmiField[] = [
  F('power.draw.instant', 'gpu', 'power', 'W'),
  F('module.power.draw.instant', 'module', 'power', 'W'),
  F('utilization.gpu', 'gpu', 'util', '%'),
  F('clocks.sm', 'gpu', 'clock', 'MHz'),
  F('memory.used', 'gpu', 'mem_used', 'B', 1024 * 1024), // MiB
];
/** Older drivers that reject the fields above. */
export const NVIDIA_SMI_FIELDS_OLD: NvidiaSmiField[] = [
  F('power.draw', 'gpu', 'power', 'W'),
  F('utilization.gpu', 'gpu', 'util', '%'),
  F('clocks.sm', 'gpu', 'clock', 'MHz'),
  F('memory.used', 'gpu', 'mem_used', 'B', 1024 * 1024),
];

export const queryArg = (fields: readonly NvidiaSmiField[]) => `--query-gpu=index,${fields.map((f) => f.query).join(',')}`;
export const FORMAT = '--format=csv,noheader,nounits';

/** Parses one CSV line: [gpu index, values…]; a value that is not a number (`[N/A]`, `[Not Supported]`) is NaN. */
export function parseNvidiaSmiLine(line: string, fieldCount: number): { gpu: number; values: number[] } | null {
  const cells = line.split(',');
  if (cells.length !== fieldCount + 1) return null;
  const gpu = Number(cells[0]);
  if (!Number.isInteger(gpu) || gpu < 0) return null;
  const values = cells.slice(1).map((c) => {
    const s = c.trim();
    return s === '' || s.startsWith('[') ? Number.NaN : Number(s);
  });
  return { gpu, values };
}
