import type { spawn as spawnType } from 'node:child_process';
import type { Logger } from '../log';
import type { SampleSink } from '../samples';
import { FORMAT, parseNvidiaSmiLine, queryArg, type NvidiaSmiField } from './nvidia-smi-query';
import { LineChild } from './line-child';
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

/**
 * One long-running `nvidia-smi --query-gpu=… -lms <interval>` child (LineChild), parsed line by
 * line: it keeps each sensor's newest value, and each sampling cycle takes those that arrived
 * since the last.
 */
export class NvidiaSmiLoop {
  private readonly child: LineChild;
  /** Lines that matched a GPU of the probe. */
  private lines = 0;
  private readonly latest: Float64Array;
  /** 1 where `latest` holds a value not yet taken. */
  private readonly fresh: Uint8Array;

  constructor(
    spawn: typeof spawnType,
    private readonly options: NvidiaSmiLoopOptions,
  ) {
    this.latest = new Float64Array(options.sensorCount).fill(Number.NaN);
    this.fresh = new Uint8Array(options.sensorCount);
    const { bin, fields, intervalMs, log } = options;
    this.child = new LineChild(spawn, { bin, args: [queryArg(fields), FORMAT, '-lms', String(intervalMs)], name: 'nvidia-smi', log, onLine: (line) => this.onLine(line) });
  }

  start(): void {
    this.child.start();
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
    return { lines: this.lines, ...this.child.stats() };
  }

  /** Stops the child: SIGTERM, then SIGKILL after a second. */
  stop(): Promise<void> {
    return this.child.stop();
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
}
