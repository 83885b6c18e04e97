import { C2C_FLOOR } from '@erg/spec/sensors';
import type { execFileSync as execFileSyncType, spawn as spawnType } from 'node:child_process';
import type { Logger } from '../log';
import type { SampleSink } from '../samples';
import { sensorName, type SensorInfo } from '../wire';
import { DCGM_FIELDS, fieldsArg, parseDmonHeader, parseDmonOutput, parseDmonRow, type DmonHeader } from './dcgmi-dmon';
import { findExecutable } from './executable';
import { LineChild } from './line-child';
import type { DetectContext, Source } from './types';

// Data movement through DCGM's profiling fields, where DCGM is installed and its host engine runs
// (dcgmi talks to nv-hostengine): PCIe, NVLink and NVLink-C2C bytes per second per GPU
// (DCGM_FIELDS). detectDcgm finds `dcgmi`, asks it for a few samples (`dcgmi dmon -e … -c 3`) and
// makes a sensor of every (GPU, field) that had a value in them; the source then keeps one
// `dcgmi dmon -e … -d <ms>` child (LineChild) and each cycle takes the newest value of each sensor
// that arrived since the previous cycle (like the nvidia-smi loop).
//
// It is detected before NVML, which then does not read the same link traffic itself (DetectContext
// `taken`): DCGM's values are rates over its whole sample period where nvmlDeviceGetPcieThroughput
// measures 20 ms of each cycle. DCGM numbers GPUs itself; erg takes DCGM's GPU N as gpuN — the
// NVML index on a node whose GPUs the job sees all of (the default: whole nodes). Profiling fields
// can be unavailable while another profiler (Nsight) holds the counters: the values are then N/A
// and the sensors have gaps.

/** How long the probe may take (it starts watches on the host engine and waits for three samples). */
const PROBE_TIMEOUT_MS = 15_000;
/** The probe's samples and their spacing: profiling values need two GPM samples before the first rate. */
const PROBE_SAMPLES = 3;
const PROBE_DELAY_MS = 200;
/** dcgmi's `-d` at least this (ms): DCGM reads these from GPM, whose samples want more than 100 ms between them (nvml.h). */
const MIN_DELAY_MS = 100;

export function detectDcgm(ctx: DetectContext): Source | null {
  const bin = ctx.config.dcgmi;
  if (!findExecutable(bin, ctx.config.path)) {
    ctx.note(`${bin} not found (DCGM not installed)`);
    return null;
  }
  const { execFileSync, spawn } = require('node:child_process') as typeof import('node:child_process');
  const probe = probeDmon(bin, execFileSync);
  if (typeof probe === 'string') {
    ctx.note(probe);
    return null;
  }
  const { sensors, slots } = describeSensors(probe.output);
  for (const f of DCGM_FIELDS) {
    if (sensors.some((s) => s.sensor.endsWith(`.${f.quantity}`))) continue;
    // The C2C fields are in dcgm_fields.h from DCGM 4.1.0 on: an older hostengine has none.
    ctx.note(`field ${f.id} (${f.shortName}): no value on any GPU${f.quantity.startsWith('c2c_') ? ` (${C2C_FLOOR}, and a C2C GPU)` : ''}`);
  }
  if (sensors.length === 0) {
    ctx.note(`${bin} dmon reported no values for fields ${fieldsArg(DCGM_FIELDS)}`);
    return null;
  }
  const delayMs = Math.max(ctx.config.intervalMs, MIN_DELAY_MS);
  const loop = new DmonLoop(spawn, bin, delayMs, slots, sensors.length, ctx.log);
  loop.start();
  return {
    name: 'dcgm',
    sensors,
    details: { binary: bin, fields: fieldsArg(DCGM_FIELDS), delayMs, gpus: [...slots.keys()] },
    read: (t, sink) => loop.takeFresh(t, sink),
    stats: () => loop.stats(),
    stop: () => loop.stop(),
  };
}

/** `dcgmi dmon -e … -c 3 -d 200`'s answer; a string says why it cannot be used. */
function probeDmon(bin: string, execFileSync: typeof execFileSyncType): { output: string } | string {
  try {
    const output = execFileSync(bin, ['dmon', '-e', fieldsArg(DCGM_FIELDS), '-c', String(PROBE_SAMPLES), '-d', String(PROBE_DELAY_MS)], {
      encoding: 'utf8',
      timeout: PROBE_TIMEOUT_MS,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (parseDmonOutput(output).tables === 0) return `${bin} dmon printed no table: ${firstLine(output)}`;
    return { output };
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string; stdout?: string };
    if (e.code === 'ENOENT') return `${bin} not found`;
    // "Error: unable to establish a connection to the specified host: localhost" when nv-hostengine is not running.
    return `${bin} dmon failed: ${firstLine(`${e.stdout ?? ''}\n${e.stderr ?? ''}`) || e.message}`;
  }
}

function firstLine(text: string): string {
  return (
    text
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l !== '') ?? ''
  );
}

/** DCGM GPU id → the local sensor index of each column of the header (-1: none). */
type Slots = Map<number, Map<string, number>>;

/** A sensor for every (GPU, field) that had a value in any of the probe's samples. */
function describeSensors(output: string): { sensors: SensorInfo[]; slots: Slots } {
  const seen = new Map<number, Set<string>>();
  for (const row of parseDmonOutput(output).rows) {
    const names = seen.get(row.gpu) ?? new Set<string>();
    for (const [name, v] of Object.entries(row.values)) if (Number.isFinite(v)) names.add(name);
    seen.set(row.gpu, names);
  }
  const sensors: SensorInfo[] = [];
  const slots: Slots = new Map();
  for (const gpu of [...seen.keys()].sort((a, b) => a - b)) {
    const byName = new Map<string, number>();
    for (const f of DCGM_FIELDS) {
      if (!seen.get(gpu)?.has(f.shortName)) continue;
      sensors.push({ sensor: sensorName('gpu', gpu, f.quantity), source: 'dcgm', unit: 'B/s', scope: 'gpu' });
      byName.set(f.shortName, sensors.length - 1);
    }
    slots.set(gpu, byName);
  }
  return { sensors, slots };
}

/** The long-running `dcgmi dmon -e … -d <ms>`: each sensor's newest value, taken once per cycle. */
class DmonLoop {
  private readonly child: LineChild;
  private header: DmonHeader | null = null;
  private rows = 0;
  private readonly latest: Float64Array;
  private readonly fresh: Uint8Array;

  constructor(
    spawn: typeof spawnType,
    bin: string,
    delayMs: number,
    private readonly slots: Slots,
    sensorCount: number,
    log: Logger,
  ) {
    this.latest = new Float64Array(sensorCount).fill(Number.NaN);
    this.fresh = new Uint8Array(sensorCount);
    this.child = new LineChild(spawn, { bin, args: ['dmon', '-e', fieldsArg(DCGM_FIELDS), '-d', String(delayMs)], name: 'dcgmi', log, onLine: (line) => this.onLine(line) });
  }

  start(): void {
    this.child.start();
  }

  takeFresh(t: number, sink: SampleSink): void {
    for (let i = 0; i < this.latest.length; i += 1) {
      if (this.fresh[i] !== 1) continue;
      this.fresh[i] = 0;
      sink.push(i, t, this.latest[i] as number);
    }
  }

  stats(): Record<string, unknown> {
    return { rows: this.rows, ...this.child.stats() };
  }

  stop(): Promise<void> {
    return this.child.stop();
  }

  private onLine(line: string): void {
    const header = parseDmonHeader(line);
    if (header) {
      this.header = header;
      return;
    }
    if (!this.header) return;
    const row = parseDmonRow(line, this.header);
    const byName = row && this.slots.get(row.gpu);
    if (!row || !byName) return;
    this.rows += 1;
    row.values.forEach((v, j) => {
      const local = byName.get(this.header!.names[j] as string);
      if (local === undefined || !Number.isFinite(v) || v < 0) return;
      this.latest[local] = v;
      this.fresh[local] = 1;
    });
  }
}
