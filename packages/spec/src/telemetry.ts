import { z } from 'zod';
import type { SpecIssue } from './issues';

/**
 * The telemetry wire format: what agents (and importers) POST to /v1/runs/:id/telemetry.
 * A batch is `{ node, seq, samples, sensors? }`; `samples` holds, per sensor, either one sample
 * `{ sensor, t, v }` or a column `{ sensor, t: [...], v: [...] }`; `t` is Unix time in
 * milliseconds (fractions allowed), `v` is in the sensor's unit. (run, node, seq) identifies a
 * batch: sending it again changes nothing.
 */

export const COMPONENTS = ['gpu', 'cpu', 'grace', 'module', 'memory', 'sysio', 'node'] as const;

/** Every quantity with its unit and the values a sane sensor can report. */
export const QUANTITIES = {
  power: { unit: 'W', min: 0, max: 100_000 },
  energy: { unit: 'J', min: 0, max: Number.MAX_SAFE_INTEGER },
  util: { unit: '%', min: 0, max: 100 },
  clock: { unit: 'MHz', min: 0, max: 100_000 },
  mem_used: { unit: 'B', min: 0, max: 2 ** 60 },
  pcie_tx: { unit: 'B/s', min: 0, max: 2 ** 50 },
  pcie_rx: { unit: 'B/s', min: 0, max: 2 ** 50 },
  c2c_tx: { unit: 'B/s', min: 0, max: 2 ** 50 },
  c2c_rx: { unit: 'B/s', min: 0, max: 2 ** 50 },
} as const;
export type Quantity = keyof typeof QUANTITIES;

export const SENSOR_NAME = new RegExp(`^(${COMPONENTS.join('|')})(\\d{1,3})\\.(${Object.keys(QUANTITIES).join('|')})$`);

export function quantityOf(sensor: string): Quantity | null {
  const m = SENSOR_NAME.exec(sensor);
  return m ? (m[3] as Quantity) : null;
}

export const SensorSource = z.enum(['nvml', 'nvidia-smi', 'hwmon', 'rapl', 'procfs', 'model', 'import']);

export const SensorDescription = z
  .object({
    sensor: z.string().regex(SENSOR_NAME, { error: 'a sensor name like gpu0.power: <component><index>.<quantity>' }),
    source: SensorSource,
    unit: z.string().max(16).optional(),
    wrapAt: z.number().positive().optional().describe('counter range in the sensor unit (RAPL max_energy_range_uj in J)'),
  })
  .strict();
export type SensorDescription = z.infer<typeof SensorDescription>;

/** Most samples one batch may carry. */
export const MAX_BATCH_SAMPLES = 200_000;

function batchSchema(numbers: z.ZodType<number[]>) {
  return z
    .object({
      node: z.string().regex(/^[A-Za-z0-9._-]{1,128}$/, { error: 'a host name: 1-128 letters, digits and . _ -' }),
      seq: z.int().min(0).max(2 ** 31 - 1),
      samples: z
        .array(
          z
            .object({
              sensor: z.string().regex(SENSOR_NAME, { error: 'a sensor name like gpu0.power: <component><index>.<quantity>' }),
              t: z.union([z.number(), numbers]),
              v: z.union([z.number(), numbers]),
            })
            .strict(),
        )
        .min(1)
        .max(MAX_BATCH_SAMPLES),
      sensors: z.array(SensorDescription).max(512).optional(),
    })
    .strict();
}

/** A telemetry batch, as documented in the OpenAPI document. */
export const TelemetryBatch = batchSchema(z.array(z.number())).meta({ id: 'TelemetryBatch' });
export type TelemetryBatchInput = z.infer<typeof TelemetryBatch>;

/**
 * The same envelope for the ingest hot path: sample columns are only checked to be arrays here,
 * because normalizeBatch checks every number anyway (finite, in range) — checking each element
 * twice, once through zod, was the largest cost of ingest.
 */
export const TelemetryBatchWire = batchSchema(z.custom<number[]>((x) => Array.isArray(x), { error: 'an array of numbers' }));

export interface SeriesChunk {
  sensor: string;
  t: Float64Array;
  v: Float64Array;
}

export interface NormalizedBatch {
  node: string;
  seq: number;
  series: SeriesChunk[];
  sensors: SensorDescription[];
  sampleCount: number;
}

/**
 * Turns a validated envelope into one time-sorted column per sensor, rejecting any value a sane
 * sensor cannot report: non-finite numbers, negative power, utilisation above 100 %, timestamps
 * outside `[minT, maxT]`. Every problem is reported with its path; a batch with any problem is
 * refused whole, so nothing of it is stored.
 */
export function normalizeBatch(
  batch: TelemetryBatchInput,
  bounds: { minT: number; maxT: number },
): { ok: true; batch: NormalizedBatch } | { ok: false; issues: SpecIssue[] } {
  const issues: SpecIssue[] = [];
  const columns = new Map<string, { t: number[]; v: number[] }>();
  let total = 0;
  const iso = (ms: number) => new Date(ms).toISOString();
  batch.samples.forEach((entry, i) => {
    const ts = Array.isArray(entry.t) ? entry.t : [entry.t];
    const vs = Array.isArray(entry.v) ? entry.v : [entry.v];
    if (ts.length !== vs.length) {
      issues.push({ path: `samples[${i}]`, code: 'length_mismatch', message: `t has ${ts.length} values and v has ${vs.length}; they must pair up` });
      return;
    }
    const q = QUANTITIES[quantityOf(entry.sensor)!];
    const col = columns.get(entry.sensor) ?? { t: [], v: [] };
    columns.set(entry.sensor, col);
    if (col.t.length === 0 && Array.isArray(entry.t) && Array.isArray(entry.v) && !batch.samples.some((e, j) => j > i && e.sensor === entry.sensor)) {
      // The usual case — one column per sensor — is copied straight into the columns.
      col.t = ts;
      col.v = vs;
    }
    for (let k = 0; k < ts.length && issues.length < 20; k++) {
      const t = ts[k]!;
      const v = vs[k]!;
      const at = Array.isArray(entry.t) ? `[${k}]` : '';
      if (!Number.isFinite(t) || t < bounds.minT || t > bounds.maxT) {
        issues.push({
          path: `samples[${i}].t${at}`, code: 'time_out_of_range',
          message: Number.isFinite(t)
            ? `timestamp ${t} (${iso(t)}) lies outside this run (${iso(bounds.minT)} … ${iso(bounds.maxT)}); t is Unix time in milliseconds`
            : `timestamp ${t} is not a finite number`,
        });
      } else if (!Number.isFinite(v) || v < q.min || v > q.max) {
        issues.push({
          path: `samples[${i}].v${Array.isArray(entry.v) ? `[${k}]` : ''}`, code: 'value_out_of_range',
          message: !Number.isFinite(v)
            ? `${entry.sensor} value ${v} is not a finite number`
            : `${entry.sensor} value ${v} ${q.unit} is outside the sane range ${q.min} … ${q.max} ${q.unit}${v < 0 ? ' (negative)' : ''}`,
        });
      } else {
        if (col.t !== ts) {
          col.t.push(t);
          col.v.push(v);
        }
        total++;
      }
    }
  });
  if (total > MAX_BATCH_SAMPLES) {
    issues.push({ path: 'samples', code: 'too_big', message: `${total} samples in one batch; at most ${MAX_BATCH_SAMPLES}` });
  }
  if (issues.length > 0) return { ok: false, issues };
  const series: SeriesChunk[] = [];
  for (const [sensor, col] of columns) series.push(sortedChunk(sensor, col.t, col.v));
  return { ok: true, batch: { node: batch.node, seq: batch.seq, series, sensors: batch.sensors ?? [], sampleCount: total } };
}

/** Float64 columns sorted by time (agents send them sorted; importers may not). */
function sortedChunk(sensor: string, t: number[], v: number[]): SeriesChunk {
  let sorted = true;
  for (let i = 1; i < t.length; i++) if (t[i]! < t[i - 1]!) { sorted = false; break; }
  if (sorted) return { sensor, t: Float64Array.from(t), v: Float64Array.from(v) };
  const order = t.map((_, i) => i).sort((a, b) => t[a]! - t[b]!);
  return { sensor, t: Float64Array.from(order, (i) => t[i]!), v: Float64Array.from(order, (i) => v[i]!) };
}
