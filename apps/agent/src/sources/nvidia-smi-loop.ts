import type { ChildProcess, spawn as spawnType } from 'node:child_process';
import type { Logger } from '../log';
import type { SampleSink } from '../samples';
import { FORMAT, parseNvidiaSmiLine, queryArg, type NvidiaSmiField } from './nvidia-smi-query';
import type { StateCadence } from './state-cadence';

/** gpu index → the local sensor index of each field (-1: that GPU has no value for it). */
export type NvidiaSmiSlots = Map<number, Int32Array>;

export interface NvidiaSmiLoopOptions {
  bin: string;
  fields: readonly NvidiaSmiField[];
  slots: NvidiaSmiSlots;
  sensorCount: number;
  /** 1 for the sensors of the state in force (power limit, …), taken at most once a second by `stateCadence`. */
  stateSensors: Uint8Array;
  stateCadence: StateCadence;
  /** nvidia-smi's `-lms` period. */
  intervalMs: number;
  log: Logger;
}

/** Times an exited child is started again, a second later each time. */
const MAX_RESTARTS = 5;
const RESTART_DELAY_MS = 1000;

/**
 * One long-running `nvidia-smi --query-gpu=… -lms <interval>` child, parsed line by line: it keeps
 * each sensor's newest value, and each sampling cycle takes those that arrived since the last.
 */
export class NvidiaSmiLoop {
  private child: ChildProcess | undefined;
  private stopped = false;
  private restarts = 0;
  /** Lines that matched a GPU of the probe. */
  private lines = 0;
  /** The start of a line whose end has not arrived yet. */
  private carry = '';
  private readonly latest: Float64Array;
  /** 1 where `latest` holds a value not yet taken. */
  private readonly fresh: Uint8Array;

  constructor(
    private readonly spawn: typeof spawnType,
    private readonly options: NvidiaSmiLoopOptions,
  ) {
    this.latest = new Float64Array(options.sensorCount).fill(Number.NaN);
    this.fresh = new Uint8Array(options.sensorCount);
  }

  start(): void {
    const { bin, fields, intervalMs, log } = this.options;
    const c = this.spawn(bin, [queryArg(fields), FORMAT, '-lms', String(intervalMs)], { stdio: ['ignore', 'pipe', 'ignore'] });
    this.child = c;
    c.stdout?.setEncoding('utf8');
    c.stdout?.on('data', (chunk: string) => this.onOutput(chunk));
    c.on('error', (err) => log.warnOnce('nvidia-smi-error', 'nvidia-smi child failed', { error: err.message }));
    c.on('exit', (code, signal) => this.onExit(code, signal));
  }

  /** Pushes each sensor's newest value that arrived since the previous call, stamped `t`; a state sensor's only when its once-a-second turn came. */
  takeFresh(t: number, sink: SampleSink): void {
    const { stateSensors, stateCadence } = this.options;
    // The cadence is asked only once a state value is there to take, so a turn is never spent on nothing.
    let stateDue: boolean | undefined;
    for (let i = 0; i < this.latest.length; i += 1) {
      if (this.fresh[i] === 1 && (stateSensors[i] !== 1 || (stateDue ??= stateCadence.due(t)))) {
        this.fresh[i] = 0;
        sink.push(i, t, this.latest[i] as number);
      }
    }
  }

  stats(): Record<string, unknown> {
    return { lines: this.lines, restarts: this.restarts, pid: this.child?.pid ?? null };
  }

  /** Stops the child: SIGTERM, then SIGKILL after a second. */
  async stop(): Promise<void> {
    this.stopped = true;
    const c = this.child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
    c.kill('SIGTERM');
    const timer = setTimeout(() => c.kill('SIGKILL'), 1000);
    await exited;
    clearTimeout(timer);
  }

  private onOutput(chunk: string): void {
    const text = this.carry + chunk;
    let from = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', from)) {
      this.onLine(text.slice(from, nl));
      from = nl + 1;
    }
    this.carry = text.slice(from);
  }

  private onLine(line: string): void {
    const { fields, slots } = this.options;
    const parsed = parseNvidiaSmiLine(line, fields.length);
    const map = parsed && slots.get(parsed.gpu);
    if (!parsed || !map) return;
    this.lines += 1;
    for (let j = 0; j < fields.length; j += 1) {
      const local = map[j] as number;
      const v = parsed.values[j] as number;
      if (local < 0 || !Number.isFinite(v)) continue;
      this.latest[local] = v * (fields[j] as NvidiaSmiField).scale;
      this.fresh[local] = 1;
    }
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.stopped) return;
    // It should run until we stop it; start it again, a few times, a second later.
    this.options.log.warn('nvidia-smi child exited', { code, signal, restarts: this.restarts });
    if (this.restarts < MAX_RESTARTS) {
      this.restarts += 1;
      setTimeout(() => !this.stopped && this.start(), RESTART_DELAY_MS);
    }
  }
}
