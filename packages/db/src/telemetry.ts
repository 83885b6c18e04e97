import { createHash } from 'node:crypto';
import { canonicalJson, DEFAULT_MAX_PHASE_NAMES, fingerprintClass, type NodeFingerprint, type NormalizedBatch, type PowerRecord, type SensorDescription } from '@erg/spec';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { poolOf, withTransaction, type Database } from './client';
import { encodeCopyBinary, type CopyValue } from './copy-binary';
import { markEnergyDirty } from './energy-records';
import { storeRunMarks } from './run-marks';

/**
 * The bulk telemetry writer. Requests are not written one by one: every batch that arrives while
 * a flush is running waits for the next flush, which writes all of them with two statements in
 * one transaction (group commit). Under load that turns thousands of small requests into a few
 * large inserts; when idle a batch is written at once.
 *
 * Storage: one row per (run, node, seq) in telemetry_batches — its primary key makes ingest
 * idempotent; new batches are learnt from its INSERT … ON CONFLICT DO NOTHING RETURNING — and,
 * loaded with a binary COPY, one row per sensor per new batch in telemetry_chunks holding the batch's samples
 * of that sensor as little-endian float64 arrays (t in Unix ms, v in the sensor's unit). A new
 * batch's phase marks go to run_marks in the same transaction (run-marks.ts; those of names past the
 * run's first maxPhaseNames are left out, run-mark-names.ts), and its run is
 * marked as having telemetry its energy figures have not seen (run_energy_dirty, energy-records.ts).
 */
export interface WriteResult {
  accepted: number;
  duplicate: boolean;
}

interface Pending {
  runId: string;
  batch: NormalizedBatch;
  /** What the push said of its agent's clock (@erg/spec clockReading); null: nothing (no header, or pulled from the spool). */
  clockOffsetMs: number | null;
  resolve: (r: WriteResult) => void;
  reject: (err: unknown) => void;
}

export interface TelemetryWriterOptions {
  /** Flushes in flight at once (each uses one pooled connection). Default 2. */
  concurrency?: number;
  /** Most samples written by one flush. Default 1,000,000. */
  maxSamplesPerFlush?: number;
  /** Distinct mark names a run keeps (ERG_MAX_PHASE_NAMES); marks of later names are not stored. Default DEFAULT_MAX_PHASE_NAMES. */
  maxPhaseNames?: number;
}

export class TelemetryWriter {
  private queue: Pending[] = [];
  private inFlight = 0;
  private readonly concurrency: number;
  private readonly maxSamples: number;
  private readonly maxPhaseNames: number;

  constructor(
    private readonly db: Database,
    options: TelemetryWriterOptions = {},
  ) {
    this.concurrency = options.concurrency ?? 2;
    this.maxSamples = options.maxSamplesPerFlush ?? 1_000_000;
    this.maxPhaseNames = options.maxPhaseNames ?? DEFAULT_MAX_PHASE_NAMES;
  }

  /**
   * Resolves once the batch is committed (or known to be a duplicate). `clockOffsetMs`: what the
   * request said of its agent's clock (sentAt − receivedAt); a duplicate's reading counts too.
   */
  write(runId: string, batch: NormalizedBatch, clockOffsetMs: number | null = null): Promise<WriteResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ runId, batch, clockOffsetMs, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.concurrency && this.queue.length > 0) {
      const group: Pending[] = [];
      let samples = 0;
      while (this.queue.length > 0 && (group.length === 0 || samples + this.queue[0]!.batch.sampleCount <= this.maxSamples)) {
        const next = this.queue.shift()!;
        samples += next.batch.sampleCount;
        group.push(next);
      }
      this.inFlight++;
      this.flush(group)
        .catch((err) => group.forEach((p) => p.reject(err)))
        .finally(() => {
          this.inFlight--;
          this.pump();
        });
    }
  }

  private async flush(group: Pending[]): Promise<void> {
    // The same batch twice in one flush: the first one counts, the rest are duplicates.
    const firsts = new Map<string, Pending>();
    for (const p of group) {
      const key = `${p.runId}|${p.batch.node}|${p.batch.seq}`;
      if (!firsts.has(key)) firsts.set(key, p);
    }
    const batches = [...firsts.values()];
    const chunkCols = { run: [] as string[], node: [] as string[], sensor: [] as string[], seq: [] as number[], tFirst: [] as number[], tLast: [] as number[], n: [] as number[], t: [] as Buffer[], v: [] as Buffer[] };
    const sensorCols: SensorColumns = { run: [], node: [], sensor: [], source: [], unit: [], scope: [], wrapAt: [], averagingMs: [], updateMs: [], rowOf: new Map() };
    for (const { runId, batch } of batches) {
      for (const s of batch.series) {
        chunkCols.run.push(runId);
        chunkCols.node.push(batch.node);
        chunkCols.sensor.push(s.sensor);
        chunkCols.seq.push(batch.seq);
        chunkCols.tFirst.push(s.t[0]!);
        chunkCols.tLast.push(s.t[s.t.length - 1]!);
        chunkCols.n.push(s.t.length);
        chunkCols.t.push(float64Bytes(s.t));
        chunkCols.v.push(float64Bytes(s.v));
      }
      for (const d of batch.sensors) pushSensor(sensorCols, runId, batch.node, d);
    }

    const accepted = await withTransaction(this.db, async (client) => {
      const result = await client.query<{ run_id: string; node: string; seq: number }>(
        `INSERT INTO telemetry_batches (run_id, node, seq, samples)
         SELECT * FROM unnest($1::uuid[], $2::text[], $3::int[], $4::int[])
         ON CONFLICT DO NOTHING
         RETURNING run_id, node, seq`,
        [batches.map((p) => p.runId), batches.map((p) => p.batch.node), batches.map((p) => p.batch.seq), batches.map((p) => p.batch.sampleCount)],
      );
      const accepted = new Set(result.rows.map((r) => `${r.run_id}|${r.node}|${r.seq}`));
      const rows: CopyValue[][] = [];
      chunkCols.run.forEach((runId, i) => {
        if (!accepted.has(`${runId}|${chunkCols.node[i]}|${chunkCols.seq[i]}`)) return; // a duplicate batch: stored before
        rows.push([
          { type: 'uuid', value: runId }, { type: 'text', value: chunkCols.node[i]! }, { type: 'text', value: chunkCols.sensor[i]! },
          { type: 'int4', value: chunkCols.seq[i]! }, { type: 'float8', value: chunkCols.tFirst[i]! }, { type: 'float8', value: chunkCols.tLast[i]! },
          { type: 'int4', value: chunkCols.n[i]! }, { type: 'bytea', value: chunkCols.t[i]! }, { type: 'bytea', value: chunkCols.v[i]! },
        ]);
      });
      if (rows.length > 0) {
        await copyIn(client, 'COPY telemetry_chunks (run_id, node, sensor, seq, t_first, t_last, n, t, v) FROM STDIN (FORMAT binary)', encodeCopyBinary(rows));
      }
      const stored = batches.filter((p) => accepted.has(`${p.runId}|${p.batch.node}|${p.batch.seq}`));
      await storeRunNodes(client, stored);
      // After the provenance: a node's first row comes from the batch that brings its fingerprint.
      await storeClockReadings(client, group);
      // A duplicate batch's marks were stored with it; a new batch's marks may have come before
      // in another seq (a restarted agent re-reads its marks file): each is stored once.
      await storeRunMarks(client, stored.flatMap((p) => (p.batch.marks ? [{ runId: p.runId, node: p.batch.node, marks: p.batch.marks }] : [])), this.maxPhaseNames);
      if (sensorCols.run.length > 0) {
        await client.query(
          `INSERT INTO telemetry_sensors (run_id, node, sensor, source, unit, scope, wrap_at, averaging_ms, update_ms)
           SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::float8[], $8::float8[], $9::float8[])
           ON CONFLICT (run_id, node, sensor) DO UPDATE SET source = EXCLUDED.source, unit = EXCLUDED.unit, scope = EXCLUDED.scope, wrap_at = EXCLUDED.wrap_at,
             averaging_ms = EXCLUDED.averaging_ms, update_ms = EXCLUDED.update_ms`,
          [sensorCols.run, sensorCols.node, sensorCols.sensor, sensorCols.source, sensorCols.unit, sensorCols.scope, sensorCols.wrapAt, sensorCols.averagingMs, sensorCols.updateMs],
        );
      }
      // Last, so the markers' row locks are held for the commit only; in id order, so two
      // flushes of the same runs cannot deadlock.
      await markEnergyDirty(client, stored.map((p) => p.runId));
      return accepted;
    });
    for (const p of group) {
      const key = `${p.runId}|${p.batch.node}|${p.batch.seq}`;
      const isNew = firsts.get(key) === p && accepted.has(key);
      p.resolve({ accepted: isNew ? p.batch.sampleCount : 0, duplicate: !isNew });
    }
  }
}

/** A fingerprint's stored id: sha256 of its canonical JSON (equal content, equal id, whatever the key order). */
export function fingerprintId(f: NodeFingerprint): string {
  return createHash('sha256').update(canonicalJson(f)).digest('hex');
}

/** The id of a fingerprint's class (what it says of the kind of machine, not of the node): runs compare by it. */
export function fingerprintClassId(f: NodeFingerprint): string {
  return createHash('sha256').update(canonicalJson(fingerprintClass(f))).digest('hex');
}

/**
 * The provenance the new batches carry (an agent's first batch has its node's fingerprint and,
 * when the campaign set one, the power record): each distinct fingerprint stored once, and the
 * run's node linked to it. A later agent process of the same node (a resumed agent) updates the
 * link; a batch without them leaves it alone.
 */
async function storeRunNodes(client: pg.PoolClient, batches: readonly Pending[]): Promise<void> {
  const rows = batches.filter((p) => p.batch.fingerprint || p.batch.power);
  if (rows.length === 0) return;
  const fingerprints = new Map<string, { classId: string; data: NodeFingerprint }>();
  // One row per (run, node) per statement: ON CONFLICT DO UPDATE may not touch a row twice. The
  // latest batch (highest seq) of a node in this flush wins; fields it lacks keep the earlier's.
  const perNode = new Map<string, { run: string; node: string; seq: number; fingerprint: string | null; power: PowerRecord | null }>();
  for (const { runId, batch } of [...rows].sort((a, b) => a.batch.seq - b.batch.seq)) {
    let id: string | null = null;
    if (batch.fingerprint) {
      id = fingerprintId(batch.fingerprint);
      fingerprints.set(id, { classId: fingerprintClassId(batch.fingerprint), data: batch.fingerprint });
    }
    const key = `${runId}|${batch.node}`;
    const before = perNode.get(key);
    perNode.set(key, { run: runId, node: batch.node, seq: batch.seq, fingerprint: id ?? before?.fingerprint ?? null, power: batch.power ?? before?.power ?? null });
  }
  const link = { run: [] as string[], node: [] as string[], fingerprint: [] as (string | null)[], power: [] as (string | null)[], seq: [] as number[] };
  for (const r of perNode.values()) {
    link.run.push(r.run);
    link.node.push(r.node);
    link.fingerprint.push(r.fingerprint);
    link.power.push(r.power ? JSON.stringify(r.power) : null);
    link.seq.push(r.seq);
  }
  if (fingerprints.size > 0) {
    const ids = [...fingerprints.keys()];
    await client.query(
      `INSERT INTO node_fingerprints (id, class_id, data)
       SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[])
       ON CONFLICT (id) DO NOTHING`,
      [ids, ids.map((id) => fingerprints.get(id)!.classId), ids.map((id) => JSON.stringify(fingerprints.get(id)!.data))],
    );
  }
  // Flushes run concurrently: a batch of an earlier seq committing after a later one must not
  // put back what the later one replaced.
  await client.query(
    `INSERT INTO run_nodes (run_id, node, fingerprint_id, power, seq)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::jsonb[], $5::int[])
     ON CONFLICT (run_id, node) DO UPDATE SET
       fingerprint_id = COALESCE(EXCLUDED.fingerprint_id, run_nodes.fingerprint_id),
       power = COALESCE(EXCLUDED.power, run_nodes.power),
       seq = EXCLUDED.seq
     WHERE EXCLUDED.seq >= run_nodes.seq`,
    [link.run, link.node, link.fingerprint, link.power, link.seq],
  );
}

/**
 * The agents' clock readings of a flush, one row per (run, node): the largest offset and how many
 * readings, merged with those stored (GREATEST ignores the NULL of a node without any yet). A
 * node's row that does not exist yet is created with seq -1: it holds no provenance, and the batch
 * that brings some replaces the -1. In (run, node) order, so concurrent flushes lock rows alike.
 */
async function storeClockReadings(client: pg.PoolClient, group: readonly Pending[]): Promise<void> {
  const perNode = new Map<string, { run: string; node: string; offset: number; readings: number }>();
  for (const p of group) {
    if (p.clockOffsetMs === null) continue;
    const key = `${p.runId}|${p.batch.node}`;
    const before = perNode.get(key);
    perNode.set(key, { run: p.runId, node: p.batch.node, offset: Math.max(before?.offset ?? -Infinity, p.clockOffsetMs), readings: (before?.readings ?? 0) + 1 });
  }
  if (perNode.size === 0) return;
  const rows = [...perNode.values()].sort((a, b) => (a.run < b.run ? -1 : a.run > b.run ? 1 : a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
  await client.query(
    `INSERT INTO run_nodes (run_id, node, seq, clock_offset_ms, clock_readings)
     SELECT run_id, node, -1, offset_ms, readings FROM unnest($1::uuid[], $2::text[], $3::float8[], $4::int[]) AS r(run_id, node, offset_ms, readings)
     ON CONFLICT (run_id, node) DO UPDATE SET
       clock_offset_ms = GREATEST(run_nodes.clock_offset_ms, EXCLUDED.clock_offset_ms),
       clock_readings = run_nodes.clock_readings + EXCLUDED.clock_readings`,
    [rows.map((r) => r.run), rows.map((r) => r.node), rows.map((r) => r.offset), rows.map((r) => r.readings)],
  );
}

/** Streams one buffer into a COPY … FROM STDIN on this client. */
function copyIn(client: pg.PoolClient, sql: string, data: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const stream = client.query(copyFrom(sql));
    stream.on('finish', () => resolve());
    stream.on('error', reject);
    stream.end(data);
  });
}

/**
 * telemetry_sensors' columns for one unnest() insert, one row per (run, node, sensor): a sensor
 * declared by several batches of one flush is declared once, as the last of them says — one
 * INSERT … ON CONFLICT DO UPDATE cannot touch a row twice, and the latest declaration wins anyway.
 */
interface SensorColumns {
  run: string[];
  node: string[];
  sensor: string[];
  source: string[];
  unit: (string | null)[];
  scope: (string | null)[];
  wrapAt: (number | null)[];
  averagingMs: (number | null)[];
  updateMs: (number | null)[];
  /** `run|node|sensor` → its row. */
  rowOf: Map<string, number>;
}

function pushSensor(cols: SensorColumns, runId: string, node: string, d: SensorDescription) {
  const key = `${runId}|${node}|${d.sensor}`;
  let i = cols.rowOf.get(key);
  if (i === undefined) {
    i = cols.run.length;
    cols.rowOf.set(key, i);
  }
  cols.run[i] = runId;
  cols.node[i] = node;
  cols.sensor[i] = d.sensor;
  cols.source[i] = d.source;
  cols.unit[i] = d.unit ?? null;
  cols.scope[i] = d.scope ?? null;
  cols.wrapAt[i] = d.wrapAt ?? null;
  cols.averagingMs[i] = d.averagingMs ?? null;
  cols.updateMs[i] = d.updateMs ?? null;
}

/** The array's bytes as stored: float64, little-endian (the byte order of every host erg runs on). */
function float64Bytes(a: Float64Array): Buffer {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}

function float64Array(b: Buffer): Float64Array {
  // Copy: a Buffer from pg may not be 8-byte aligned.
  const out = new Float64Array(b.length / 8);
  new Uint8Array(out.buffer).set(b);
  return out;
}

export interface StoredSeries {
  node: string;
  sensor: string;
  t: Float64Array;
  v: Float64Array;
}

export interface StoredSensor {
  node: string;
  sensor: string;
  source: string;
  unit: string | null;
  /** What the readings cover, as the agent said; null: the component its name begins with. */
  scope: string | null;
  wrapAt: number | null;
  /** A power sensor's averaging window (ms) ending at each reading's timestamp, as the agent declared it; null: unknown or instantaneous. */
  averagingMs: number | null;
  /** How often (ms) a counter's value changes on the device's own clock, as the agent measured it; null: not measured. */
  updateMs: number | null;
}

/**
 * A run's series, each time-sorted, optionally only one sensor/node and only chunks that overlap
 * [fromMs, toMs] (whole chunks: callers clip). With `bracket`, each series also gets the chunk
 * holding its last sample before fromMs and the one holding its first after toMs, however far out:
 * the samples that bracket a window's edges, so that a figure computed over it does not depend on
 * how the samples were split into batches (a slow meter's one sample a minute before the window
 * arrives in its own batch, or in one with later samples).
 */
export async function readRunSeries(
  db: Database,
  runId: string,
  filter: { sensor?: string | undefined; node?: string | undefined; fromMs?: number | undefined; toMs?: number | undefined; bracket?: boolean } = {},
): Promise<StoredSeries[]> {
  const where = 'run_id = $1 AND ($2::text IS NULL OR sensor = $2) AND ($3::text IS NULL OR node = $3)';
  const inRange = `SELECT node, sensor, t_first, seq, t, v FROM telemetry_chunks
     WHERE ${where} AND ($4::float8 IS NULL OR t_last >= $4) AND ($5::float8 IS NULL OR t_first <= $5)`;
  // The three sets are disjoint: t_last < from, t_first > to, and the chunks overlapping [from, to].
  const brackets = `
     UNION ALL
     (SELECT DISTINCT ON (node, sensor) node, sensor, t_first, seq, t, v FROM telemetry_chunks
      WHERE ${where} AND t_last < $4 ORDER BY node, sensor, t_last DESC, seq DESC)
     UNION ALL
     (SELECT DISTINCT ON (node, sensor) node, sensor, t_first, seq, t, v FROM telemetry_chunks
      WHERE ${where} AND t_first > $5 ORDER BY node, sensor, t_first, seq)`;
  const bracket = filter.bracket === true && filter.fromMs !== undefined && filter.toMs !== undefined;
  const rows = await poolOf(db).query<{ node: string; sensor: string; t: Buffer; v: Buffer }>(
    `SELECT node, sensor, t, v FROM (${inRange}${bracket ? brackets : ''}) chunks ORDER BY node, sensor, t_first, seq`,
    [runId, filter.sensor ?? null, filter.node ?? null, filter.fromMs ?? null, filter.toMs ?? null],
  );
  const grouped = new Map<string, { node: string; sensor: string; parts: { t: Float64Array; v: Float64Array }[] }>();
  for (const row of rows.rows) {
    const key = `${row.node}\u0000${row.sensor}`;
    const g = grouped.get(key) ?? { node: row.node, sensor: row.sensor, parts: [] };
    g.parts.push({ t: float64Array(row.t), v: float64Array(row.v) });
    grouped.set(key, g);
  }
  return [...grouped.values()].map(({ node, sensor, parts }) => ({ node, sensor, ...concatSorted(parts) }));
}

function concatSorted(parts: { t: Float64Array; v: Float64Array }[]): { t: Float64Array; v: Float64Array } {
  const n = parts.reduce((a, p) => a + p.t.length, 0);
  const t = new Float64Array(n);
  const v = new Float64Array(n);
  let at = 0;
  for (const p of parts) {
    t.set(p.t, at);
    v.set(p.v, at);
    at += p.t.length;
  }
  for (let i = 1; i < n; i++) {
    if (t[i]! < t[i - 1]!) {
      // Chunks overlapping in time (a node's clock stepped back): sort the whole series.
      const order = Array.from({ length: n }, (_, k) => k).sort((a, b) => t[a]! - t[b]!);
      return { t: Float64Array.from(order, (k) => t[k]!), v: Float64Array.from(order, (k) => v[k]!) };
    }
  }
  return { t, v };
}

export async function readRunSensors(db: Database, runId: string): Promise<StoredSensor[]> {
  const rows = await poolOf(db).query<{ node: string; sensor: string; source: string; unit: string | null; scope: string | null; wrap_at: number | null; averaging_ms: number | null; update_ms: number | null }>(
    `SELECT node, sensor, source, unit, scope, wrap_at, averaging_ms, update_ms FROM telemetry_sensors WHERE run_id = $1 ORDER BY node, sensor`,
    [runId],
  );
  return rows.rows.map((r) => ({ node: r.node, sensor: r.sensor, source: r.source, unit: r.unit, scope: r.scope, wrapAt: r.wrap_at, averagingMs: r.averaging_ms, updateMs: r.update_ms }));
}

/** How much telemetry a run has: batches and samples per node. */
export async function telemetrySummary(db: Database, runId: string): Promise<{ node: string; batches: number; samples: number }[]> {
  const rows = await poolOf(db).query<{ node: string; batches: string; samples: string }>(
    `SELECT node, count(*) AS batches, sum(samples) AS samples FROM telemetry_batches WHERE run_id = $1 GROUP BY node ORDER BY node`,
    [runId],
  );
  return rows.rows.map((r) => ({ node: r.node, batches: Number(r.batches), samples: Number(r.samples) }));
}

/** Telemetry stored over every run: samples and batches (telemetry_batches), and how many runs have any. */
export async function telemetryTotals(db: Database): Promise<{ samples: number; batches: number; runs: number }> {
  const rows = await poolOf(db).query<{ samples: string; batches: number; runs: number }>(
    'SELECT coalesce(sum(samples), 0)::bigint AS samples, count(*)::int AS batches, count(DISTINCT run_id)::int AS runs FROM telemetry_batches',
  );
  const r = rows.rows[0]!;
  return { samples: Number(r.samples), batches: r.batches, runs: r.runs };
}

/** The per-sensor chunks stored over every run (telemetry_chunks), and the samples they hold. */
export async function telemetryChunkTotals(db: Database): Promise<{ chunks: number; samples: number }> {
  const rows = await poolOf(db).query<{ chunks: number; samples: string }>('SELECT count(*)::int AS chunks, coalesce(sum(n), 0)::bigint AS samples FROM telemetry_chunks');
  const r = rows.rows[0]!;
  return { chunks: r.chunks, samples: Number(r.samples) };
}
