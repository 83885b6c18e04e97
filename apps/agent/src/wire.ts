// What the agent writes to its spool and POSTs to `/v1/runs/{runId}/telemetry`: the plain types
// of @erg/spec's sensors module (its dependency-free subpath: the agent's bundle cannot carry
// zod), from which the API's TelemetryBatch schema is built too. Words are defined there.
import { componentOf, QUANTITIES, SENSOR_SOURCES, type Quantity, type SensorInfo, type SensorSource, type TelemetryBatchShape } from '@erg/spec/sensors';

export { quantityOf, sensorName, type Component, type Quantity, type SampleColumn, type SensorInfo, type TelemetryAck, type Unit } from '@erg/spec/sensors';

/** Every quantity's unit. */
export const QUANTITY_UNITS = Object.fromEntries(Object.entries(QUANTITIES).map(([q, d]) => [q, d.unit])) as { [Q in Quantity]: (typeof QUANTITIES)[Q]['unit'] };

/** The sources an agent reads (`import` is for measurements taken elsewhere, never an agent's). */
export type SourceName = Exclude<SensorSource, 'import'>;
export const SOURCE_NAMES: readonly SourceName[] = SENSOR_SOURCES.filter((s): s is SourceName => s !== 'import');

export type TelemetryBatch = TelemetryBatchShape;

/**
 * A sensor whose name already says what it covers (hwmon's Module/Grace/CPU/SysIO meters, RAPL's
 * package and DRAM, nvidia-smi's GPU and module fields, /proc): its scope is its name's component.
 * NVML states scopes itself: on a superchip its counter is the module's (sources/nvml.ts).
 */
export function namedSensor(sensor: string, source: SourceName, unit: SensorInfo['unit']): SensorInfo {
  const scope = componentOf(sensor);
  return scope ? { sensor, source, unit, scope } : { sensor, source, unit };
}
