import type { execFileSync as execFileSyncType } from 'node:child_process';
import type { SampleSink } from '../samples';
import { namedSensor, quantityOf, sensorName, type SensorInfo } from '../wire';
import { findExecutable } from './executable';
import { NvidiaSmiLoop, type NvidiaSmiSlots } from './nvidia-smi-loop';
import { FORMAT, IDENTITY_FORMAT, NVIDIA_SMI_FIELDS, NVIDIA_SMI_IDENTITY_QUERY, parseNvidiaSmiLine, queryArg, unknownField, type NvidiaSmiField } from './nvidia-smi-query';
import { StateCadence, STATE_QUANTITIES } from './state-cadence';
import type { DetectContext, GpuStackIdentity, Source } from './types';

// Fallback when NVML through koffi is unavailable: one long-running
// `nvidia-smi --query-gpu=… --format=csv,noheader,nounits -lms <interval>` child, parsed line by
// line (NvidiaSmiLoop). Each cycle records the newest line per GPU that arrived since the previous
// cycle (the state fields — power limit, application clock, temperature, clock-event reasons — at
// most once a second: state-cadence.ts). detectNvidiaSmi finds the binary (findExecutable), asks
// it which fields the driver answers (probeFields), makes a sensor of every value in that answer
// (describeSensors) and starts the loop. identity() asks it once for the GPUs' names, UUIDs,
// VBIOS and the driver version, for the node's fingerprint.

export { NVIDIA_SMI_FIELDS, parseNvidiaSmiLine } from './nvidia-smi-query';

/** How long one probe or identity query of nvidia-smi may take (it is slow without persistence mode). */
const QUERY_TIMEOUT_MS = 15_000;

export function detectNvidiaSmi(ctx: DetectContext): Source | null {
  const bin = ctx.config.nvidiaSmi;
  if (!findExecutable(bin, ctx.config.path)) {
    ctx.note(`${bin} not found`);
    return null;
  }
  const { execFileSync, spawn } = require('node:child_process') as typeof import('node:child_process');
  const probe = probeFields(bin, execFileSync);
  if (typeof probe === 'string') {
    ctx.note(probe);
    return null;
  }
  const { fields } = probe;
  for (const message of probe.adjusted) ctx.note(message);
  const { sensors, slots } = describeSensors(probe.output, fields);
  if (sensors.length === 0) {
    ctx.note(`${bin} reported no GPU values`);
    return null;
  }
  const intervalMs = Math.max(ctx.config.intervalMs, 10);
  const stateSensors = Uint8Array.from(sensors, (s) => {
    const quantity = quantityOf(s.sensor);
    return quantity !== null && STATE_QUANTITIES.has(quantity) ? 1 : 0;
  });
  const loop = new NvidiaSmiLoop(spawn, { bin, fields, slots, sensorCount: sensors.length, stateSensors, stateCadence: new StateCadence(intervalMs), intervalMs, log: ctx.log });
  loop.start();
  let identity: GpuStackIdentity | undefined;
  return {
    name: 'nvidia-smi',
    sensors,
    details: { binary: bin, query: queryArg(fields), loopMs: intervalMs, gpus: [...slots.keys()] },
    read(t: number, sink: SampleSink) {
      loop.takeFresh(t, sink);
    },
    stats: () => loop.stats(),
    identity: () => (identity ??= queryIdentity(bin, execFileSync)),
    stop: () => loop.stop(),
  };
}

/**
 * The fields this driver accepts and its one-shot answer to them; a string says why none. All of
 * NVIDIA_SMI_FIELDS are asked for first; each field the driver names as unknown is asked for by
 * its older name, or left out, and the query tried again — at most once per field.
 */
function probeFields(bin: string, execFileSync: typeof execFileSyncType): { fields: NvidiaSmiField[]; output: string; adjusted: string[] } | string {
  let fields = [...NVIDIA_SMI_FIELDS];
  const adjusted: string[] = [];
  for (let attempt = 0; attempt <= NVIDIA_SMI_FIELDS.length * 2; attempt += 1) {
    try {
      const output = execFileSync(bin, [queryArg(fields), FORMAT], { encoding: 'utf8', timeout: QUERY_TIMEOUT_MS, stdio: ['ignore', 'pipe', 'pipe'] });
      return { fields, output, adjusted };
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { stderr?: string; stdout?: string };
      if (e.code === 'ENOENT') return `${bin} not found`;
      const answer = `${(e.stdout ?? '').trim()} ${(e.stderr ?? '').trim()}`.trim() || e.message;
      const refused = unknownField(answer);
      const at = fields.findIndex((f) => f.query === refused);
      const field = fields[at];
      if (!field) return `${bin} failed: ${answer}${adjusted.length > 0 ? ` (after: ${adjusted.join('; ')})` : ''}`;
      fields = [...fields];
      if (field.older) {
        const { older, ...rest } = field;
        fields[at] = { ...rest, query: older };
        adjusted.push(`${field.query} unknown to this driver: ${older} instead`);
      } else {
        fields.splice(at, 1);
        adjusted.push(`${field.query} unknown to this driver: left out`);
      }
      if (fields.length === 0) return `${bin} failed: it knows none of the fields (${adjusted.join('; ')})`;
    }
  }
  return `${bin} failed: too many refused fields (${adjusted.join('; ')})`;
}

/** The GPUs' names, UUIDs and VBIOS and the driver's version, from one `nvidia-smi --query-gpu=index,name,uuid,vbios_version,driver_version`; empty when it fails. */
function queryIdentity(bin: string, execFileSync: typeof execFileSyncType): GpuStackIdentity {
  let output: string;
  try {
    output = execFileSync(bin, [NVIDIA_SMI_IDENTITY_QUERY, IDENTITY_FORMAT], { encoding: 'utf8', timeout: QUERY_TIMEOUT_MS, stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return { gpus: [], driverVersion: null, cudaVersion: null, nvmlVersion: null };
  }
  return parseIdentity(output);
}

/** `0, NVIDIA GH200 480GB, GPU-…, 96.00.9F.00.01, 550.54.15` per GPU; a name may hold commas, the other cells cannot. */
export function parseIdentity(output: string): GpuStackIdentity {
  const gpus: GpuStackIdentity['gpus'] = [];
  let driverVersion: string | null = null;
  const text = (s: string | undefined): string | null => {
    const v = (s ?? '').trim();
    return v === '' || v.startsWith('[') ? null : v;
  };
  for (const line of output.split('\n')) {
    const cells = line.split(',');
    if (cells.length < 5) continue;
    const index = Number(cells[0]);
    if (!Number.isInteger(index) || index < 0 || gpus.some((g) => g.index === index)) continue;
    const [uuid, vbios, driver] = cells.slice(-3);
    gpus.push({ index, name: text(cells.slice(1, -3).join(',')), uuid: text(uuid), vbios: text(vbios) });
    driverVersion ??= text(driver);
  }
  // nvidia-smi's query fields name neither the CUDA version the driver supports nor NVML's own.
  return { gpus, driverVersion, cudaVersion: null, nvmlVersion: null };
}

/** A sensor for every (GPU, field) that had a value in the probe's answer, and where each GPU's fields go. */
function describeSensors(output: string, fields: readonly NvidiaSmiField[]): { sensors: SensorInfo[]; slots: NvidiaSmiSlots } {
  const sensors: SensorInfo[] = [];
  const slots: NvidiaSmiSlots = new Map();
  for (const line of output.split('\n')) {
    const parsed = parseNvidiaSmiLine(line, fields.length);
    if (!parsed || slots.has(parsed.gpu)) continue;
    const map = new Int32Array(fields.length).fill(-1);
    fields.forEach((f, j) => {
      if (Number.isFinite(parsed.values[j])) {
        sensors.push(namedSensor(sensorName(f.component, parsed.gpu, f.quantity), 'nvidia-smi', f.unit));
        map[j] = sensors.length - 1;
      }
    });
    slots.set(parsed.gpu, map);
  }
  return { sensors, slots };
}
