import { z } from 'zod';
import { CLOCK_SKEW_MS, EARLIEST_MEASUREMENT_MS } from './bounds';
import { nestsDeeperThan } from './document';
import { humanErrorMap, issuesFromZodError, type SpecIssue } from './issues';
import { MARK_KINDS, MARK_NAME, MAX_BATCH_MARKS, type BatchMark } from './marks';
import type { NodeFingerprint, PowerRecord } from './node-info';
import { COMPONENTS, SENSOR_SCOPES, MAX_SENSOR_TIMING_MS, MAX_WRAP_AT, QUANTITIES, quantityOf, SENSOR_NAME, SENSOR_SOURCES, type Quantity, type TelemetryAck, type TelemetryBatchShape } from './sensors';

/**
 * The telemetry wire format: what agents (and importers) POST to /v1/runs/:id/telemetry.
 * A batch is `{ node, seq, samples, sensors?, marks? }`; `samples` holds, per sensor, either one sample
 * `{ sensor, t, v }` or a column `{ sensor, t: [...], v: [...] }`; `t` is Unix time in
 * milliseconds (fractions allowed), `v` is in the sensor's unit. (run, node, seq) identifies a
 * batch: sending it again changes nothing. `marks` are the workload's phase marks (marks.ts),
 * each identified by (run, node, offset): a mark sent again, in any batch, is stored once.
 */

export { COMPONENTS, QUANTITIES, SENSOR_NAME, quantityOf, type Quantity } from './sensors';

export const SensorSource = z.enum(SENSOR_SOURCES);
export type SensorSource = z.infer<typeof SensorSource>;

/** A sensor's averaging window or update period: finite, above 0, at most an hour. */
function sensorTimingMs(description: string) {
  return z
    .number({ error: 'milliseconds: a finite number' })
    .positive({ error: 'milliseconds: above 0' })
    .max(MAX_SENSOR_TIMING_MS, { error: `milliseconds: at most ${MAX_SENSOR_TIMING_MS} (one hour)` })
    .optional()
    .describe(description);
}

export const SensorDescription = z
  .object({
    sensor: z.string().regex(SENSOR_NAME, { error: 'a sensor name like gpu0.power: <component><index>.<quantity>' }),
    source: SensorSource,
    unit: z.string().max(16).optional(),
    scope: z.enum(SENSOR_SCOPES).optional().describe('what the reading covers (module: a whole GH200 superchip, GPU + Grace + memory; unknown: the source could not tell, and no figure counts it); absent: the component its name begins with'),
    wrapAt: z
      .number({ error: 'a counter range: a finite number' })
      .positive({ error: 'a counter range: above 0' })
      .max(MAX_WRAP_AT, { error: `a counter range: at most ${MAX_WRAP_AT} J (a 64-bit count of µJ, the widest range a kernel reports)` })
      .optional()
      .describe(`counter range in the sensor unit (RAPL max_energy_range_uj in J), at most ${MAX_WRAP_AT}`),
    averagingMs: sensorTimingMs('a power sensor\'s averaging window (ms) ending at each reading\'s timestamp (hwmon power1_average_interval; NVML power usage 1000 on Ampere and newer); absent: unknown or instantaneous'),
    updateMs: sensorTimingMs('how often (ms) a counter\'s value changes on the device\'s own clock, as the agent measured it; absent: not measured'),
  })
  .strict();
export type SensorDescription = z.infer<typeof SensorDescription>;

/** The earliest and latest time (Unix ms) a sample of one run may carry; see sampleTimeBounds. */
export interface SampleTimeBounds {
  minT: number;
  maxT: number;
}

/** Samples may be stamped a little before their run was created or after it ended: node clocks and erg's differ. */
export const SAMPLE_CLOCK_SKEW_MS = CLOCK_SKEW_MS;
/** Imported measurements were taken before their campaign existed; only the far past is refused (as for an import's window, bounds.ts). */
export const IMPORT_EARLIEST_MS = EARLIEST_MEASUREMENT_MS;

/**
 * The times a run's samples may carry, whichever way they come: pushed by its agents to the API
 * while it runs, or pulled from their spool by the scheduler when its job ends. Both paths ask
 * this one function, so a batch one accepts the other accepts too. A run still going (no
 * `endedAt`) may carry samples up to `now`.
 */
export function sampleTimeBounds(run: { createdAt: Date; endedAt: Date | null; imported: boolean }, now: number = Date.now()): SampleTimeBounds {
  if (run.imported) return { minT: IMPORT_EARLIEST_MS, maxT: now + SAMPLE_CLOCK_SKEW_MS };
  return { minT: run.createdAt.getTime() - SAMPLE_CLOCK_SKEW_MS, maxT: (run.endedAt?.getTime() ?? now) + SAMPLE_CLOCK_SKEW_MS };
}

/** Most samples one batch may carry. */
export const MAX_BATCH_SAMPLES = 200_000;
/**
 * Most entries of `samples` one batch may have. Agents send one column per sensor; importers
 * may send one entry per sample, up to this many (columns carry more).
 */
export const MAX_BATCH_SERIES = 10_000;
/** Most distinct sensors one batch may carry samples of (a GH200 node with 4 GPUs has about 60). */
export const MAX_BATCH_SENSORS = 512;
/** Deepest JSON nesting of a batch (`samples[0].t[0]` is 3). */
export const MAX_BATCH_DEPTH = 8;

const text = (max: number) => z.string().max(max);

/** A node's fingerprint as an agent sends it (node-info.ts's NodeFingerprint), every string and list bounded. */
export const NodeFingerprintSchema = z
  .object({
    node: text(128),
    hostname: text(256),
    kernel: text(512),
    arch: text(64),
    cpuModel: text(256).nullable(),
    cpuCount: z.int().min(0).max(1_000_000),
    gpus: z.array(z.object({ index: z.int().min(0).max(1024), name: text(256).nullable(), uuid: text(128).nullable(), vbios: text(128).nullable() }).strict()).max(256),
    driverVersion: text(64).nullable(),
    cudaVersion: text(64).nullable(),
    nvmlVersion: text(64).nullable(),
    slurmVersion: text(128).nullable(),
    container: z.object({ image: text(1024), digest: text(256).nullable() }).strict().nullable(),
    modules: z.array(text(256)).max(512),
    workload: z.object({ dir: text(1024), gitCommit: text(64).nullable(), gitDirty: z.boolean().nullable() }).strict().nullable(),
    agentVersion: text(64),
  })
  .strict()
  .meta({ id: 'NodeFingerprint' });

const whole = z.int().min(0).max(1_000_000_000);
/** What a campaign's power block asks of a configuration's nodes (node-info.ts's PowerState), expanded. */
export const PowerStateSchema = z
  .object({ gpuPowerLimitW: whole.optional(), gpuLockedClocksMHz: z.tuple([whole, whole]).optional(), moduleLimitW: whole.optional(), cpuFreqKHz: whole.optional() })
  .strict()
  .meta({ id: 'PowerState' });
const NodePowerSettingsSchema = z
  .object({
    gpus: z
      .array(
        z
          .object({ index: z.int().min(0).max(1024), powerLimitW: z.number().min(0).max(100_000).nullable().optional(), moduleLimitW: z.number().min(0).max(100_000).nullable().optional(), lockedClocksMHz: z.tuple([whole, whole]).nullable().optional() })
          .strict(),
      )
      .max(256),
    cpuMaxFreqKHz: whole.nullable().optional(),
  })
  .strict();

/** The node helper's record of a run's power state (node-info.ts's PowerRecord). */
export const PowerRecordSchema = z
  .object({
    ergPower: z.literal(1),
    ok: z.boolean(),
    node: text(128),
    job: text(64),
    requested: PowerStateSchema,
    previous: NodePowerSettingsSchema.nullable(),
    applied: NodePowerSettingsSchema.nullable(),
    error: text(2000).nullable(),
  })
  .strict()
  .meta({ id: 'PowerRecord' });

/** The writers' word for themselves (`sh`, `py`), as marks.ts's parser takes it. */
const MARK_WRITER = /^[a-z0-9]{1,16}$/;

/** One phase mark in a batch (marks.ts's BatchMark); its `t` is checked against the run's time window by normalizeBatch. */
export const TelemetryBatchMark = z
  .object({
    offset: z.int().min(0).describe('byte offset of the mark\'s line in <node>.marks: its identity (the first copy stored is kept)'),
    kind: z.enum(MARK_KINDS).describe('begin/end bracket a phase (they nest); step counts one unit of work'),
    name: z.string().regex(MARK_NAME, { error: 'a phase name: 1-64 letters, digits and _ . : / -' }),
    t: z.number().describe('Unix ms on the samples\' timeline'),
    clock: z.enum(['mono', 'wall']).describe('mono: converted from CLOCK_MONOTONIC on the node (immune to clock steps); wall: the writer\'s Unix time'),
    writer: z.string().regex(MARK_WRITER, { error: 'who wrote the mark: 1-16 lowercase letters and digits (sh, py)' }),
  })
  .strict()
  .meta({ id: 'BatchMark' });

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
        .max(MAX_BATCH_SERIES),
      sensors: z.array(SensorDescription).max(512).optional(),
      // Provenance never costs samples: a fingerprint or record the API cannot read is dropped (the
      // run then says it has none — a power record missing is a flagged mismatch), the batch is kept.
      fingerprint: NodeFingerprintSchema.optional().catch(undefined),
      power: PowerRecordSchema.optional().catch(undefined),
      marks: z.array(TelemetryBatchMark).max(MAX_BATCH_MARKS).optional(),
    })
    .strict();
}

/** A telemetry batch, as documented in the OpenAPI document. */
export const TelemetryBatch = batchSchema(z.array(z.number())).meta({ id: 'TelemetryBatch' });
export type TelemetryBatchInput = z.infer<typeof TelemetryBatch>;

// What an agent sends (the plain types of sensors.ts, which its bundle uses) is a batch this
// schema accepts: the line fails to compile when the two drift apart.
const agentBatchesAreAccepted = (batch: TelemetryBatchShape): TelemetryBatchInput => batch;
void agentBatchesAreAccepted;
// And the API's view of a fingerprint and a power record is the agent's.
const fingerprintsAgree = (f: z.infer<typeof NodeFingerprintSchema>): NodeFingerprint => f;
const powerRecordsAgree = (r: z.infer<typeof PowerRecordSchema>): PowerRecord => r;
const marksAgree = (m: z.infer<typeof TelemetryBatchMark>): BatchMark => m;
void fingerprintsAgree;
void powerRecordsAgree;
void marksAgree;

/**
 * The same envelope for the ingest hot path: sample columns are only checked to be arrays here,
 * because normalizeBatch checks every number anyway (finite, in range) — checking each element
 * twice, once through zod, was the largest cost of ingest.
 */
export const TelemetryBatchWire = batchSchema(z.custom<number[]>((x) => Array.isArray(x), { error: 'an array of numbers' }));

/** POST /v1/runs/:id/telemetry: what one batch did. */
export const TelemetryAccepted = z
  .object({ accepted: z.number().describe('samples stored'), duplicate: z.boolean().describe('this (node, seq) was stored before; nothing changed') })
  .meta({ id: 'TelemetryAccepted' });
export type TelemetryAccepted = z.infer<typeof TelemetryAccepted>;
// The agent reads the answer with the plain type of sensors.ts: the two must be the same shape.
const ackIsAccepted = (a: TelemetryAck): TelemetryAccepted => a;
const acceptedIsAck = (a: TelemetryAccepted): TelemetryAck => a;
void ackIsAccepted;
void acceptedIsAck;

/** One sensor's series of a run, downsampled for plotting; t in Unix ms, v in the sensor's unit. */
export const TelemetrySeries = z
  .object({
    node: z.string(),
    sensor: z.string(),
    source: z.string().nullable(),
    unit: z.string().nullable(),
    samples: z.number().describe('samples in the range before downsampling'),
    t: z.array(z.number()),
    v: z.array(z.number()),
  })
  .meta({ id: 'TelemetrySeries' });
export type TelemetrySeries = z.infer<typeof TelemetrySeries>;

/** GET /v1/runs/:id/telemetry. */
export const RunTelemetry = z.object({ runId: z.string(), series: z.array(TelemetrySeries) }).meta({ id: 'RunTelemetry' });
export type RunTelemetry = z.infer<typeof RunTelemetry>;

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
  fingerprint?: NodeFingerprint;
  power?: PowerRecord;
  /** The batch's phase marks, as sent; absent when it carries none. */
  marks?: BatchMark[];
}

/**
 * Turns a validated envelope into one time-sorted column per sensor, rejecting any value a sane
 * sensor cannot report: non-finite numbers, negative power, utilisation above 100 %, timestamps
 * outside `[minT, maxT]` (a mark's `t` too). Every problem is reported with its path; a batch with
 * any problem is refused whole, so nothing of it is stored.
 */
export function normalizeBatch(
  batch: TelemetryBatchInput,
  bounds: SampleTimeBounds,
): { ok: true; batch: NormalizedBatch } | { ok: false; issues: SpecIssue[] } {
  const issues: SpecIssue[] = [];
  // How many entries each sensor has, in one pass: an entry that is its sensor's only one is
  // used as its column without copying. (Asking "does a later entry have this sensor?" per
  // entry was quadratic: 40,000 empty entries took 5 s.)
  const entriesOf = new Map<string, number>();
  for (const entry of batch.samples) entriesOf.set(entry.sensor, (entriesOf.get(entry.sensor) ?? 0) + 1);
  if (entriesOf.size > MAX_BATCH_SENSORS) {
    return { ok: false, issues: [{ path: 'samples', code: 'too_big', message: `samples of ${entriesOf.size} sensors in one batch; at most ${MAX_BATCH_SENSORS}` }] };
  }
  const columns = new Map<string, { t: number[]; v: number[] }>();
  let total = 0;
  const iso = (ms: number) => new Date(ms).toISOString();
  for (let i = 0; i < batch.samples.length && issues.length < 20; i++) {
    const entry = batch.samples[i]!;
    const ts = Array.isArray(entry.t) ? entry.t : [entry.t];
    const vs = Array.isArray(entry.v) ? entry.v : [entry.v];
    if (ts.length !== vs.length) {
      issues.push({ path: `samples[${i}]`, code: 'length_mismatch', message: `t has ${ts.length} values and v has ${vs.length}; they must pair up` });
      continue;
    }
    if (ts.length === 0) {
      issues.push({ path: `samples[${i}]`, code: 'too_small', message: `${entry.sensor} has an empty column; send at least one sample, or leave the sensor out` });
      continue;
    }
    total += ts.length;
    if (total > MAX_BATCH_SAMPLES) {
      issues.push({ path: 'samples', code: 'too_big', message: `more than ${MAX_BATCH_SAMPLES} samples in one batch; send them in several batches` });
      break;
    }
    const q = QUANTITIES[quantityOf(entry.sensor)!];
    let col = columns.get(entry.sensor);
    if (!col) {
      // The usual case — one column per sensor — is used as it is (checked below, not copied).
      col = entriesOf.get(entry.sensor) === 1 && Array.isArray(entry.t) && Array.isArray(entry.v) ? { t: ts, v: vs } : { t: [], v: [] };
      columns.set(entry.sensor, col);
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
      } else if (col.t !== ts) {
        col.t.push(t);
        col.v.push(v);
      }
    }
  }
  const marks = batch.marks ?? [];
  for (let i = 0; i < marks.length && issues.length < 20; i++) {
    const t = marks[i]!.t;
    if (!Number.isFinite(t) || t < bounds.minT || t > bounds.maxT) {
      issues.push({
        path: `marks[${i}].t`, code: 'time_out_of_range',
        message: Number.isFinite(t)
          ? `mark time ${t} (${iso(t)}) lies outside this run (${iso(bounds.minT)} … ${iso(bounds.maxT)}); t is Unix time in milliseconds`
          : `mark time ${t} is not a finite number`,
      });
    }
  }
  if (issues.length > 0) return { ok: false, issues };
  const series: SeriesChunk[] = [];
  for (const [sensor, col] of columns) series.push(sortedChunk(sensor, col.t, col.v));
  return {
    ok: true,
    batch: {
      node: batch.node, seq: batch.seq, series, sensors: batch.sensors ?? [], sampleCount: total,
      ...(batch.fingerprint ? { fingerprint: batch.fingerprint } : {}),
      ...(batch.power ? { power: batch.power } : {}),
      ...(marks.length > 0 ? { marks } : {}),
    },
  };
}


export type DecodedBatch = { ok: true; batch: NormalizedBatch } | { ok: false; issues: SpecIssue[] };

/**
 * A batch from its JSON text to sorted columns, every step bounded by the batch limits: the
 * nesting, the number of entries and of marks (refused before any entry is validated), the envelope
 * (TelemetryBatchWire) and normalizeBatch. The API runs it inline for small bodies and in a
 * worker thread for large ones; the scheduler's spool ingest runs decodeTelemetryValue on each
 * spooled line (a file the job can write), under the same limits.
 */
export function decodeTelemetryBatch(text: string, bounds: SampleTimeBounds): DecodedBatch {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { ok: false, issues: [{ path: '(root)', code: 'syntax_error', message: `not valid JSON: ${(err as Error).message}` }] };
  }
  return decodeTelemetryValue(raw, bounds);
}

/** decodeTelemetryBatch for a value already parsed. */
export function decodeTelemetryValue(raw: unknown, bounds: SampleTimeBounds): DecodedBatch {
  if (nestsDeeperThan(raw, MAX_BATCH_DEPTH)) {
    return { ok: false, issues: [{ path: '(root)', code: 'document_too_large', message: `nested more than ${MAX_BATCH_DEPTH} levels deep; a batch needs 3 (samples[0].t[0])` }] };
  }
  const samples = (raw as { samples?: unknown } | null)?.samples;
  if (Array.isArray(samples) && samples.length > MAX_BATCH_SERIES) {
    return {
      ok: false,
      issues: [{ path: 'samples', code: 'too_big', message: `${samples.length} entries in one batch; at most ${MAX_BATCH_SERIES} (send one column per sensor, or several batches)` }],
    };
  }
  const marks = (raw as { marks?: unknown } | null)?.marks;
  if (Array.isArray(marks) && marks.length > MAX_BATCH_MARKS) {
    return { ok: false, issues: [{ path: 'marks', code: 'too_big', message: `${marks.length} marks in one batch; at most ${MAX_BATCH_MARKS} (send the rest with the next batches)` }] };
  }
  const envelope = TelemetryBatchWire.safeParse(raw, { error: humanErrorMap });
  if (!envelope.success) return { ok: false, issues: issuesFromZodError(envelope.error).slice(0, 20) };
  return normalizeBatch(envelope.data, bounds);
}

/** Float64 columns sorted by time (agents send them sorted; importers may not). */
function sortedChunk(sensor: string, t: number[], v: number[]): SeriesChunk {
  let sorted = true;
  for (let i = 1; i < t.length; i++) if (t[i]! < t[i - 1]!) { sorted = false; break; }
  if (sorted) return { sensor, t: Float64Array.from(t), v: Float64Array.from(v) };
  const order = t.map((_, i) => i).sort((a, b) => t[a]! - t[b]!);
  return { sensor, t: Float64Array.from(order, (i) => t[i]!), v: Float64Array.from(order, (i) => v[i]!) };
}
