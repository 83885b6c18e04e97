import type { execFileSync as execFileSyncType } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { SampleSink } from '../samples';
import { namedSensor, sensorName, type SensorInfo } from '../wire';
import { NvidiaSmiLoop, type NvidiaSmiSlots } from './nvidia-smi-loop';
import { FORMAT, NVIDIA_SMI_FIELDS, NVIDIA_SMI_FIELDS_OLD, parseNvidiaSmiLine, queryArg, type NvidiaSmiField } from './nvidia-smi-query';
import type { DetectContext, Source } from './types';

// Fallback when NVML through koffi is unavailable: one long-running
// `nvidia-smi --query-gpu=… --format=csv,noheader,nounits -lms <interval>` child, parsed line by
// line (NvidiaSmiLoop). Each cycle records the newest line per GPU that arrived since the previous
// cycle. detectNvidiaSmi finds the binary (findExecutable), asks it once which fields the driver
// answers (probeFields), makes a sensor of every value in that answer (describeSensors) and starts
// the loop.

export { NVIDIA_SMI_FIELDS, NVIDIA_SMI_FIELDS_OLD, parseNvidiaSmiLine } from './nvidia-smi-query';

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
  const { sensors, slots } = describeSensors(probe.output, fields);
  if (sensors.length === 0) {
    ctx.note(`${bin} reported no GPU values`);
    return null;
  }
  const intervalMs = Math.max(ctx.config.intervalMs, 10);
  const loop = new NvidiaSmiLoop(spawn, { bin, fields, slots, sensorCount: sensors.length, intervalMs, log: ctx.log });
  loop.start();
  return {
    name: 'nvidia-smi',
    sensors,
    details: { binary: bin, query: queryArg(fields), loopMs: intervalMs, gpus: [...slots.keys()] },
    read(t: number, sink: SampleSink) {
      loop.takeFresh(t, sink);
    },
    stats: () => loop.stats(),
    stop: () => loop.stop(),
  };
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

/** The field set this driver accepts (current names first, then the older ones) and its one-shot answer; a string says why none. */
function probeFields(bin: string, execFileSync: typeof execFileSyncType): { fields: NvidiaSmiField[]; output: string } | string {
  const errors: string[] = [];
  for (const fields of [NVIDIA_SMI_FIELDS, NVIDIA_SMI_FIELDS_OLD]) {
    try {
      const output = execFileSync(bin, [queryArg(fields), FORMAT], { encoding: 'utf8', timeout: 15_000, stdio: ['ignore', 'pipe', 'pipe'] });
      return { fields, output };
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { stderr?: string; stdout?: string };
      if (e.code === 'ENOENT') return `${bin} not found`;
      errors.push(`${(e.stdout ?? '').trim()} ${(e.stderr ?? '').trim()}`.trim() || e.message);
    }
  }
  return `${bin} failed: ${errors.join(' | ')}`;
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
