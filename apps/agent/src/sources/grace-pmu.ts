import type { execFileSync as execFileSyncType, spawn as spawnType } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { nowMs } from '../clock';
import { readTextFile } from '../read-file';
import type { Logger } from '../log';
import type { SampleSink } from '../samples';
import { sensorName, type Quantity, type SensorInfo } from '../wire';
import { findExecutable } from './executable';
import { LineChild } from './line-child';
import { eventBase, eventModifiers, parsePerfStatLine, type PerfStatLine } from './perf-stat';
import { declarableMs } from './sensor-timing';
import type { DetectContext, Source } from './types';

// Host memory traffic on NVIDIA Grace (GH200's CPU, the Grace CPU Superchip), which has no resctrl
// memory bandwidth monitoring: its Scalable Coherency Fabric (SCF) uncore PMU counts the traffic
// to each socket's CPU memory (CMEM, the LPDDR5X). The kernel's arm_cspmu driver with its
// nvidia_cspmu backend registers one perf PMU per socket, `nvidia_scf_pmu_<socket>` under
// /sys/bus/event_source/devices, its events in `events/` (`event=0x…`), the CPU that counts for
// it in `cpumask` (Documentation/admin-guide/perf/nvidia-tegra241-pmu.rst, formerly
// nvidia-pmu.rst, "SCF PMU"; the event list in drivers/perf/arm_cspmu/nvidia_cspmu.c). Node cannot
// call perf_event_open itself, so the agent runs the perf tool: one long-running
// `perf stat -a -x , --log-fd 1 -I <ms> -e nvidia_scf_pmu_N/cmem_rd_data/,…` (LineChild), read
// line by line (perf-stat.ts).
//
// The events, per socket N (the doc's "Traffic Coverage" table: the SCF PMU of a socket counts
// what its own CPUs and the other socket's CPUs move to and from its memory; the GPU's traffic over
// NVLink-C2C and PCIe devices' reads and relaxed-ordered writes are counted by other PMUs, not
// these):
//   cmem_rd_data (0x1a5)         data read from socket N's CMEM by local or remote CPUs, in
//                                32-byte data beats → memoryN.mem_read = count × 32 B / interval
//   cmem_wr_total_bytes (0x1db)  bytes written to socket N's CMEM by local or remote CPUs
//                                → memoryN.mem_write = count B / interval
// The units (beats of 32 bytes for *_rd_data, bytes for *_wr_total_bytes) are from NVIDIA's Grace
// Performance Tuning Guide ("Measuring Workload Performance with Hardware Performance Counters",
// its SCF memory bandwidth metrics); the kernel's documentation names the events but not their
// units. The remote_socket_* events (this socket's CPUs reading the other socket's memory) are
// not read: the other socket's cmem_* already count that traffic, at its memory.
//
// Timing: each interval's counts cover the `-I` interval before the line perf prints, so each
// reading is the mean rate over that interval, declared as its averagingMs, and it is stamped
// with the agent's clock when the interval's first line arrived (perf prints and flushes an
// interval's lines together, right as the interval ends), not with the sampling cycle that
// takes it. The interval is the difference of perf's own timestamps, not the nominal `-I`.
//
// Counting the whole system (-a) needs perf_event_paranoid ≤ 0 or CAP_PERFMON. With paranoid 1
// perf refuses outright (its "Access to performance monitoring … is limited" error), as it does
// where a distribution kernel's 3 or 4 forbids perf_event_open altogether (Debian, Ubuntu); with 2
// it falls back to counting user space only (the event named `…/u`), which the SCF PMU cannot
// (arm_cspmu registers it with PERF_PMU_CAP_NO_EXCLUDE), and prints `<not supported>` — derived
// from the driver and seen with perf 6.1 on another PMU without exclude support, not on a Grace.
// Either way the source is absent and a note says why.

/** One SCF event erg reads: the quantity it gives and the bytes one count stands for. */
export interface ScfEvent {
  name: string;
  quantity: Quantity;
  bytesPerCount: number;
}

export const SCF_EVENTS: readonly ScfEvent[] = [
  { name: 'cmem_rd_data', quantity: 'mem_read', bytesPerCount: 32 }, // 32-byte data beats
  { name: 'cmem_wr_total_bytes', quantity: 'mem_write', bytesPerCount: 1 }, // bytes
];

const DEVICES_DIR = 'sys/bus/event_source/devices';
const PMU_RE = /^nvidia_scf_pmu_(\d+)$/;
const EVENT_RE = /^event=0x[0-9a-f]+$/i;
/** perf's `-I` at least this (ms): below 100 ms perf warns that its own overhead may be high. */
const MIN_INTERVAL_MS = 100;
/** The probe: one 100 ms interval, and how long perf may take for it (start-up included). */
const PROBE_INTERVAL_MS = 100;
const PROBE_TIMEOUT_MS = 10_000;
/** Readings waiting for the next cycle at most (a cycle takes them all; only a stalled sampler leaves more). */
const MAX_PENDING = 4096;

/** One SCF PMU instance as sysfs describes it. */
interface ScfPmu {
  name: string;
  socket: number;
  /** The CPU that counts for it (perf opens the events there). */
  cpumask: string;
  associatedCpus: string | null;
  /** PMIIDR, as arm_cspmu prints it. */
  identifier: string | null;
  /** Each event read: its sysfs encoding. */
  events: Record<string, string>;
}

/** One (socket, event) counter: the event as perf is asked for it and the sensor it feeds. */
export interface ScfCounter {
  /** `nvidia_scf_pmu_0/cmem_rd_data/` */
  perfEvent: string;
  socket: number;
  event: ScfEvent;
  sensor: string;
}

export function detectGracePmu(ctx: DetectContext): Source | null {
  const devicesDir = path.join(ctx.config.sysfsRoot, DEVICES_DIR);
  const pmus = findScfPmus(devicesDir, ctx);
  if (pmus === null) return null;
  let counters = pmus.flatMap((pmu) =>
    SCF_EVENTS.filter((e) => pmu.events[e.name] !== undefined).map((event) => ({
      perfEvent: `${pmu.name}/${event.name}/`,
      socket: pmu.socket,
      event,
      sensor: sensorName('memory', pmu.socket, event.quantity),
    })),
  );
  if (counters.length === 0) {
    ctx.note(`${devicesDir}: no nvidia_scf_pmu_* with a usable ${SCF_EVENTS.map((e) => e.name).join(' or ')}`);
    return null;
  }
  const bin = ctx.config.perf;
  if (!findExecutable(bin, ctx.config.path)) {
    ctx.note(`${bin} not found (the perf tool: linux-tools / perf package)`);
    return null;
  }
  const { execFileSync, spawn } = require('node:child_process') as typeof import('node:child_process');
  const paranoid = readParanoid(ctx.config.procfsRoot);
  const probe = probePerf(bin, counters, execFileSync, paranoid);
  if (typeof probe === 'string') {
    ctx.note(probe);
    return null;
  }
  counters = keepCounted(counters, probe, paranoid, ctx);
  if (counters.length === 0) return null;
  const intervalMs = Math.max(ctx.config.intervalMs, MIN_INTERVAL_MS);
  const averagingMs = declarableMs(intervalMs);
  const sensors: SensorInfo[] = counters.map((c) => ({ sensor: c.sensor, source: 'perf', unit: 'B/s', scope: 'memory', ...(averagingMs !== undefined ? { averagingMs } : {}) }));
  const loop = new PerfStatLoop(spawn, { bin, intervalMs, counters, log: ctx.log });
  loop.start();
  return {
    name: 'perf',
    sensors,
    details: {
      binary: bin,
      events: counters.map((c) => c.perfEvent).join(','),
      intervalMs,
      perfEventParanoid: paranoid,
      pmus: pmus.map((p) => ({ name: p.name, socket: p.socket, cpumask: p.cpumask, associatedCpus: p.associatedCpus, identifier: p.identifier, events: p.events })),
    },
    read: (_t, sink) => loop.takePending(sink),
    stats: () => loop.stats(),
    stop: () => loop.stop(),
  };
}

/** The SCF PMUs under `devicesDir` with their events and cpumask; null (and a note) where there are none. */
function findScfPmus(devicesDir: string, ctx: DetectContext): ScfPmu[] | null {
  let entries: string[];
  try {
    entries = fs.readdirSync(devicesDir);
  } catch {
    ctx.note(`${devicesDir} does not exist (no perf PMUs in this sysfs)`);
    return null;
  }
  const found = entries
    .map((name) => ({ name, m: PMU_RE.exec(name) }))
    .filter((x): x is { name: string; m: RegExpExecArray } => x.m !== null)
    .map((x) => ({ name: x.name, socket: Number(x.m[1]) }))
    .sort((a, b) => a.socket - b.socket);
  if (found.length === 0) {
    ctx.note(`${devicesDir}: no nvidia_scf_pmu_* (not a Grace CPU, or the arm_cspmu / nvidia_cspmu driver is not loaded)`);
    return null;
  }
  const pmus: ScfPmu[] = [];
  for (const { name, socket } of found) {
    const dir = path.join(devicesDir, name);
    const cpumask = readTextFile(path.join(dir, 'cpumask'))?.trim() ?? '';
    if (cpumask === '') {
      ctx.note(`${dir}/cpumask is empty or unreadable (no online CPU counts for it); left out`);
      continue;
    }
    const events: Record<string, string> = {};
    for (const e of SCF_EVENTS) {
      const file = path.join(dir, 'events', e.name);
      const encoding = readTextFile(file)?.trim();
      if (encoding === undefined || !EVENT_RE.test(encoding)) {
        ctx.note(`${file}: ${encoding === undefined ? 'missing' : `unexpected ${JSON.stringify(encoding)}`}; left out`);
        continue;
      }
      // A declared scale or unit would make perf print something other than the counts the conversion assumes.
      const declared = ['scale', 'unit'].filter((suffix) => fs.existsSync(`${file}.${suffix}`));
      if (declared.length > 0) {
        ctx.note(`${file}: the kernel declares a ${declared.join(' and ')} for it, which this agent does not know; left out`);
        continue;
      }
      events[e.name] = encoding;
    }
    pmus.push({ name, socket, cpumask, associatedCpus: readTextFile(path.join(dir, 'associated_cpus'))?.trim() ?? null, identifier: readTextFile(path.join(dir, 'identifier'))?.trim() ?? null, events });
  }
  return pmus;
}

/** `perf stat … -I 100 --interval-count 1`: each asked event's line; a string says why perf cannot be used. */
function probePerf(bin: string, counters: readonly ScfCounter[], execFileSync: typeof execFileSyncType, paranoid: number | null): Map<string, PerfStatLine> | string {
  const args = [...statArgs(PROBE_INTERVAL_MS, counters), '--interval-count', '1'];
  let output: string;
  try {
    output = execFileSync(bin, args, { encoding: 'utf8', timeout: PROBE_TIMEOUT_MS, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { status?: number | null; stderr?: string; stdout?: string };
    if (e.code === 'ENOENT') return `${bin} not found`;
    const said = summarise(`${e.stderr ?? ''}\n${e.stdout ?? ''}`) || e.message;
    const access = /paranoid|Access to performance monitoring|Permission denied|not permitted/i.test(said);
    return `${bin} stat failed${typeof e.status === 'number' ? ` (exit ${e.status})` : ''}: ${said}${access ? paranoidHint(paranoid) : ''}`;
  }
  const lines = new Map<string, PerfStatLine>();
  for (const line of output.split('\n')) {
    const parsed = parsePerfStatLine(line);
    if (parsed) lines.set(eventBase(parsed.event), parsed);
  }
  return lines;
}

/** The counters the probe counted (or enabled but did not get to count); notes for the others. */
function keepCounted(counters: readonly ScfCounter[], probe: Map<string, PerfStatLine>, paranoid: number | null, ctx: DetectContext): ScfCounter[] {
  const unsupported = counters.filter((c) => probe.get(c.perfEvent)?.count === 'not supported');
  if (unsupported.length === counters.length) {
    const modifiers = eventModifiers(probe.get(counters[0]!.perfEvent)!.event);
    ctx.note(
      modifiers.includes('u')
        ? `perf stat: <not supported> for every event, counted as ${counters[0]!.perfEvent}${modifiers}: perf fell back to counting user space only, which the SCF PMU cannot${paranoidHint(paranoid)}`
        : `perf stat: <not supported> for every event (${counters.map((c) => c.perfEvent).join(', ')})`,
    );
    return [];
  }
  return counters.filter((c) => {
    const line = probe.get(c.perfEvent);
    if (!line) ctx.note(`perf stat printed no count for ${c.perfEvent}; left out`);
    else if (line.count === 'not supported') ctx.note(`perf stat: ${c.perfEvent} <not supported>; left out`);
    return line !== undefined && line.count !== 'not supported';
  });
}

function paranoidHint(paranoid: number | null): string {
  if (paranoid === null) return ' (counting the whole system needs perf_event_paranoid ≤ 0 or CAP_PERFMON)';
  return paranoid > 0 ? ` (perf_event_paranoid is ${paranoid}: counting the whole system needs ≤ 0, or CAP_PERFMON)` : ` (perf_event_paranoid is ${paranoid})`;
}

/** /proc/sys/kernel/perf_event_paranoid; null where unreadable. */
function readParanoid(procfsRoot: string): number | null {
  const text = readTextFile(path.join(procfsRoot, 'sys/kernel/perf_event_paranoid'))?.trim();
  return text !== undefined && /^-?\d+$/.test(text) ? Number(text) : null;
}

/** perf's message in one line: its first two meaningful lines (after "Error:"), at most 300 characters. */
function summarise(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && l !== 'Error:');
  const joined = lines.slice(0, 2).join(' ');
  return joined.length > 300 ? `${joined.slice(0, 297)}...` : joined;
}

/** `perf stat -a -x , --log-fd 1 -I <ms> -e <events>`: system-wide, CSV, on stdout. */
export function statArgs(intervalMs: number, counters: readonly ScfCounter[]): string[] {
  return ['stat', '-a', '-x', ',', '--log-fd', '1', '-I', String(intervalMs), '-e', counters.map((c) => c.perfEvent).join(',')];
}

/** A rate ready for the sink: local sensor index, when its interval ended (Unix ms), B/s. */
interface Reading {
  local: number;
  t: number;
  v: number;
}

export interface PerfStatLoopOptions {
  bin: string;
  intervalMs: number;
  /** In sensor order: counter i feeds local sensor i. */
  counters: readonly ScfCounter[];
  log: Logger;
  /** The agent's clock (Unix ms); tests pass their own. */
  now?: () => number;
}

/**
 * The long-running `perf stat -I`: assembles each interval from its lines (one per counter, all
 * with the interval's timestamp) and turns its counts into B/s readings, which the next sampling
 * cycle takes. An interval closes when every counter's line arrived, or when a line of the next
 * one does (a line perf left out is then a gap).
 */
export class PerfStatLoop {
  private readonly child: LineChild;
  private readonly slots = new Map<string, number>();
  private readonly now: () => number;
  /** The interval being assembled: perf's timestamp, when its first line arrived, each counter's count. */
  private open: { timeS: number; arrivedMs: number; counts: (PerfStatLine | undefined)[]; seen: number } | null = null;
  /** perf's timestamp of the previous interval's end (0: perf has just started counting). */
  private prevTimeS = 0;
  private pending: Reading[] = [];
  /** For stats.json: lines read, intervals closed (incomplete: some counter's line missing), counts perf had none of or printed with a unit, multiplexed counts (perf's estimates), times perf's clock started again, readings dropped. */
  private readonly tally = { lines: 0, intervals: 0, incomplete: 0, notCounted: 0, notSupported: 0, unexpectedUnit: 0, multiplexed: 0, timestampResets: 0, droppedReadings: 0 };

  constructor(
    spawn: typeof spawnType,
    private readonly options: PerfStatLoopOptions,
  ) {
    options.counters.forEach((c, i) => this.slots.set(c.perfEvent, i));
    this.now = options.now ?? nowMs;
    this.child = new LineChild(spawn, { bin: options.bin, args: statArgs(options.intervalMs, options.counters), name: 'perf', log: options.log, onLine: (line) => this.onLine(line) });
  }

  start(): void {
    this.child.start();
  }

  /** Pushes every reading that arrived since the previous call, each with its own interval's end. */
  takePending(sink: SampleSink): void {
    const readings = this.pending;
    if (readings.length === 0) return;
    this.pending = [];
    for (const r of readings) sink.push(r.local, r.t, r.v);
  }

  stats(): Record<string, unknown> {
    return { ...this.tally, ...this.child.stats() };
  }

  stop(): Promise<void> {
    return this.child.stop();
  }

  /** One line of perf's output (exposed for tests: the parsing without a child). */
  onLine(line: string): void {
    const parsed = parsePerfStatLine(line);
    const slot = parsed ? this.slots.get(eventBase(parsed.event)) : undefined;
    if (!parsed || slot === undefined) return;
    this.tally.lines += 1;
    if (this.open && parsed.timeS !== this.open.timeS) this.close();
    this.open ??= { timeS: parsed.timeS, arrivedMs: this.now(), counts: new Array<PerfStatLine | undefined>(this.options.counters.length), seen: 0 };
    if (this.open.counts[slot] === undefined) this.open.seen += 1;
    this.open.counts[slot] = parsed;
    if (this.open.seen === this.options.counters.length) this.close();
  }

  private close(): void {
    const open = this.open;
    if (!open) return;
    this.open = null;
    // perf's timestamps start again at 0 when LineChild restarts it: the first interval of the new one counts from its start.
    if (open.timeS <= this.prevTimeS) this.tally.timestampResets += 1;
    const seconds = open.timeS > this.prevTimeS ? open.timeS - this.prevTimeS : open.timeS;
    this.prevTimeS = open.timeS;
    this.tally.intervals += 1;
    if (open.seen < this.options.counters.length) this.tally.incomplete += 1;
    open.counts.forEach((line, local) => {
      if (!line) return;
      if (line.count === 'not counted') this.tally.notCounted += 1;
      else if (line.count === 'not supported') this.tally.notSupported += 1;
      else if (line.unit !== '') this.tally.unexpectedUnit += 1;
      else if (seconds > 0) {
        if (line.runningPct < 100) this.tally.multiplexed += 1;
        if (this.pending.length >= MAX_PENDING) {
          this.tally.droppedReadings += 1;
          return;
        }
        this.pending.push({ local, t: open.arrivedMs, v: bytesPerSecond(line.count, this.options.counters[local]!.event, seconds) });
      }
    });
  }
}

/** An SCF count over `seconds` as B/s: counts × the bytes each stands for (32 per read beat, 1 per written byte) / seconds. */
export function bytesPerSecond(count: number, event: ScfEvent, seconds: number): number {
  return (count * event.bytesPerCount) / seconds;
}
