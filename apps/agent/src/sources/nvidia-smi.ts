import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { SampleSink } from '../samples';
import { sensorName, type Component, type Quantity, type SensorInfo } from '../wire';
import type { DetectContext, Source } from './types';

// Fallback when NVML through koffi is unavailable: one long-running
// `nvidia-smi --query-gpu=… --format=csv,noheader,nounits -lms <interval>` child, parsed line by
// line. Each cycle records the newest line per GPU that arrived since the previous cycle.

interface Field {
  query: string;
  component: Component;
  quantity: Quantity;
  unit: SensorInfo['unit'];
  /** Multiplier from nvidia-smi's `nounits` value to the sensor's unit. */
  scale: number;
}
const F = (query: string, component: Component, quantity: Quantity, unit: SensorInfo['unit'], scale = 1): Field => ({ query, component, quantity, unit, scale });

/** Current drivers (power.draw.instant and module power exist since R530-ish). */
export const NVIDIA_SMI_FIELDS: Field[] = [
  F('power.draw.instant', 'gpu', 'power', 'W'),
  F('module.power.draw.instant', 'module', 'power', 'W'),
  F('utilization.gpu', 'gpu', 'util', '%'),
  F('clocks.sm', 'gpu', 'clock', 'MHz'),
  F('memory.used', 'gpu', 'mem_used', 'B', 1024 * 1024), // MiB
];
/** Older drivers that reject the fields above. */
export const NVIDIA_SMI_FIELDS_OLD: Field[] = [
  F('power.draw', 'gpu', 'power', 'W'),
  F('utilization.gpu', 'gpu', 'util', '%'),
  F('clocks.sm', 'gpu', 'clock', 'MHz'),
  F('memory.used', 'gpu', 'mem_used', 'B', 1024 * 1024),
];

const queryArg = (fields: Field[]) => `--query-gpu=index,${fields.map((f) => f.query).join(',')}`;
const FORMAT = '--format=csv,noheader,nounits';

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

/** Whether `bin` names an executable (a path, or a name found on PATH) — checked before child_process is loaded at all. */
function findExecutable(bin: string, envPath: string | undefined): boolean {
  const candidates = bin.includes('/') ? [bin] : (envPath ?? '').split(':').filter(Boolean).map((d) => path.join(d, bin));
  return candidates.some((c) => {
    try {
      fs.accessSync(c, fs.constants.X_OK);
      return fs.statSync(c).isFile();
    } catch {
      return false;
    }
  });
}

export function detectNvidiaSmi(ctx: DetectContext): Source | null {
  const bin = ctx.config.nvidiaSmi;
  if (!findExecutable(bin, ctx.config.path)) {
    ctx.note(`${bin} not found`);
    return null;
  }
  const { execFileSync, spawn } = require('node:child_process') as typeof import('node:child_process');
  let fields: Field[] | undefined;
  let probe = '';
  const errors: string[] = [];
  for (const candidate of [NVIDIA_SMI_FIELDS, NVIDIA_SMI_FIELDS_OLD]) {
    try {
      probe = execFileSync(bin, [queryArg(candidate), FORMAT], { encoding: 'utf8', timeout: 15_000, stdio: ['ignore', 'pipe', 'pipe'] });
      fields = candidate;
      break;
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { stderr?: string; stdout?: string };
      if (e.code === 'ENOENT') {
        ctx.note(`${bin} not found`);
        return null;
      }
      errors.push(`${(e.stdout ?? '').trim()} ${(e.stderr ?? '').trim()}`.trim() || e.message);
    }
  }
  if (!fields) {
    ctx.note(`${bin} failed: ${errors.join(' | ')}`);
    return null;
  }

  // A sensor exists for every (GPU, field) that had a value in the probe.
  const sensors: SensorInfo[] = [];
  const slots = new Map<number, Int32Array>(); // gpu → local sensor index per field (-1 = none)
  for (const line of probe.split('\n')) {
    const parsed = parseNvidiaSmiLine(line, fields.length);
    if (!parsed || slots.has(parsed.gpu)) continue;
    const map = new Int32Array(fields.length).fill(-1);
    fields.forEach((f, j) => {
      if (Number.isFinite(parsed.values[j])) {
        sensors.push({ sensor: sensorName(f.component, parsed.gpu, f.quantity), source: 'nvidia-smi', unit: f.unit });
        map[j] = sensors.length - 1;
      }
    });
    slots.set(parsed.gpu, map);
  }
  if (sensors.length === 0) {
    ctx.note(`${bin} reported no GPU values`);
    return null;
  }

  const chosen = fields;
  const latest = new Float64Array(sensors.length).fill(Number.NaN);
  const fresh = new Uint8Array(sensors.length);
  const intervalMs = Math.max(ctx.config.intervalMs, 10);
  let child: ChildProcess | undefined;
  let stopped = false;
  let restarts = 0;
  let lines = 0;
  let carry = '';
  const onLine = (line: string) => {
    const parsed = parseNvidiaSmiLine(line, chosen.length);
    const map = parsed && slots.get(parsed.gpu);
    if (!parsed || !map) return;
    lines += 1;
    for (let j = 0; j < chosen.length; j += 1) {
      const local = map[j] as number;
      const v = parsed.values[j] as number;
      if (local < 0 || !Number.isFinite(v)) continue;
      latest[local] = v * (chosen[j] as Field).scale;
      fresh[local] = 1;
    }
  };
  const start = () => {
    const c = spawn(bin, [queryArg(chosen), FORMAT, '-lms', String(intervalMs)], { stdio: ['ignore', 'pipe', 'ignore'] });
    child = c;
    c.stdout?.setEncoding('utf8');
    c.stdout?.on('data', (chunk: string) => {
      const text = carry + chunk;
      let from = 0;
      for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', from)) {
        onLine(text.slice(from, nl));
        from = nl + 1;
      }
      carry = text.slice(from);
    });
    c.on('error', (err) => ctx.log.warnOnce('nvidia-smi-error', 'nvidia-smi child failed', { error: err.message }));
    c.on('exit', (code, signal) => {
      if (stopped) return;
      // It should run until we stop it; start it again, a few times, a second later.
      ctx.log.warn('nvidia-smi child exited', { code, signal, restarts });
      if (restarts < 5) {
        restarts += 1;
        setTimeout(() => !stopped && start(), 1000);
      }
    });
  };
  start();

  return {
    name: 'nvidia-smi',
    sensors,
    details: { binary: bin, query: queryArg(chosen), loopMs: intervalMs, gpus: [...slots.keys()] },
    read(t: number, sink: SampleSink) {
      for (let i = 0; i < latest.length; i += 1) {
        if (fresh[i] === 1) {
          fresh[i] = 0;
          sink.push(i, t, latest[i] as number);
        }
      }
    },
    stats: () => ({ lines, restarts, pid: child?.pid ?? null }),
    async stop() {
      stopped = true;
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
      c.kill('SIGTERM');
      const timer = setTimeout(() => c.kill('SIGKILL'), 1000);
      await exited;
      clearTimeout(timer);
    },
  };
}
