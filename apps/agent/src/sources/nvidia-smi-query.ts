import { type Component, type Quantity, type SensorInfo } from '../wire';

// What erg asks nvidia-smi (`--query-gpu=index,<fields> --format=csv,noheader,nounits`) and how
// it reads the answer: one CSV line per GPU.

export interface NvidiaSmiField {
  query: string;
  /** The field's name on older drivers, tried when the driver does not know `query`; without one the field is left out there. */
  older?: string;
  component: Component;
  quantity: Quantity;
  unit: SensorInfo['unit'];
  /** Multiplier from nvidia-smi's `nounits` value to the sensor's unit. */
  scale: number;
}
const F = (query: string, component: Component, quantity: Quantity, unit: SensorInfo['unit'], options: { scale?: number; older?: string } = {}): NvidiaSmiField => ({
  query,
  ...(options.older ? { older: options.older } : {}),
  component,
  quantity,
  unit,
  scale: options.scale ?? 1,
});

/**
 * Every field erg asks for, by its current name. A driver that does not know one says
 * `Field "<name>" is not a valid field to query.`: the probe then asks for its older name, or
 * leaves it out (probeFields in nvidia-smi.ts). power.draw.instant and module power exist since
 * R530-ish; R535 renamed clocks_throttle_reasons.* to clocks_event_reasons.*.
 *
 * Timing (SensorInfo averagingMs): the `.instant` power fields are instantaneous and declare no
 * averaging. `power.draw`, asked for only where the driver lacks `.instant`, is
 * nvmlDeviceGetPowerUsage — a 1 s average on Ampere (except GA100) and newer, instantaneous
 * before — but these old drivers' help does not say so and the query does not name the chip, so
 * it declares none either. (`power.draw.average`, the 1 s average, is not asked for: gpuN.power is
 * the instant reading.)
 */
export const NVIDIA_SMI_FIELDS: readonly NvidiaSmiField[] = [
  F('power.draw.instant', 'gpu', 'power', 'W', { older: 'power.draw' }),
  F('module.power.draw.instant', 'module', 'power', 'W'),
  F('utilization.gpu', 'gpu', 'util', '%'),
  F('clocks.sm', 'gpu', 'clock', 'MHz'),
  F('memory.used', 'gpu', 'mem_used', 'B', { scale: 1024 * 1024 }), // MiB
  // The state in force (read at most once a second: state-cadence.ts).
  F('enforced.power.limit', 'gpu', 'power_limit', 'W'),
  F('clocks.applications.graphics', 'gpu', 'clock_app', 'MHz'),
  F('temperature.gpu', 'gpu', 'temp', '°C'),
  // A hex bitmask, e.g. 0x0000000000000004 (sw_power_cap): NVML's clocks-event reason bits.
  F('clocks_event_reasons.active', 'gpu', 'clock_events', 'bitmask', { older: 'clocks_throttle_reasons.active' }),
];

/** The GPUs' identity for the node's fingerprint: text, so asked once with `--format=csv,noheader`. */
export const NVIDIA_SMI_IDENTITY_QUERY = '--query-gpu=index,name,uuid,vbios_version,driver_version';
export const IDENTITY_FORMAT = '--format=csv,noheader';

export const queryArg = (fields: readonly NvidiaSmiField[]) => `--query-gpu=index,${fields.map((f) => f.query).join(',')}`;
export const FORMAT = '--format=csv,noheader,nounits';

/** The field a driver refused, from its answer (`Field "x" is not a valid field to query.`); undefined when it named none. */
export function unknownField(answer: string): string | undefined {
  return /Field "([^"]+)" is not a valid field to query/.exec(answer)?.[1];
}

/**
 * Parses one CSV line: [gpu index, values…]; a value that is not a number (`[N/A]`,
 * `[Not Supported]`) is NaN. Hex values (the clocks-event bitmask, `0x…`) are numbers too.
 */
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
