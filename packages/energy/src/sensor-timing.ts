// What interval a sensor's reading covers, for the phase attribution (sensor-readings.ts): a
// reading is attributed to the phases open during that interval, so getting it wrong smears a
// phase's energy into its neighbours (bench/phase-attribution.js: a 50 ms meter taken as covering
// its whole 100 ms sampling interval errs by 12-14 % per phase; declared, by under 0.5 %).
import type { SensorInfo } from './telemetry';
import type { SensorTiming } from './sensor-readings';

/**
 * Averaging windows of power readings whose source does not declare one, from the sources' own
 * documentation (../shared/docs/energy-measurement.md):
 * - hwmon `power1_average` (GH200's ACPI power meters): the firmware averages over
 *   `power1_average_interval`, 50 ms unless a site changed it;
 * - NVML `nvmlDeviceGetPowerUsage`: a 1 s average on Ampere (except GA100) and newer.
 * nvidia-smi's `power.draw` and the power model cover the time since the previous reading (the default).
 */
export const DEFAULT_POWER_AVERAGING_MS: Readonly<Record<string, number>> = { hwmon: 50, nvml: 1000 };

/**
 * The interval a sensor's readings cover: what its source declared (averagingMs for power,
 * updateMs for a counter, which then trails its timestamp by half an update on average), else
 * the default of its source; undefined: the time since the previous reading (exact for a counter
 * read when it changes, and for the power model).
 */
export function sensorTimingOf(sensor: string, info: SensorInfo | undefined): SensorTiming | undefined {
  const quantity = sensor.slice(sensor.indexOf('.') + 1);
  if (quantity === 'energy') return info?.updateMs ? { lagMs: info.updateMs / 2 } : undefined;
  if (quantity !== 'power') return undefined;
  const averagingMs = info?.averagingMs ?? (info ? DEFAULT_POWER_AVERAGING_MS[info.source] : undefined);
  return averagingMs ? { averagingMs } : undefined;
}
