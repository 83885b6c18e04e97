import { spoolLineHead } from '@erg/spec/run-dir';
import { roundToMicros } from './clock';
import type { SensorInfo } from './wire';

/**
 * What a source writes its readings into. `local` is the index of the sensor in the source's
 * own `sensors` list; the store maps it to the node-wide sensor (or to nothing, when another
 * source already owns that sensor name).
 */
export interface SampleSink {
  push(local: number, t: number, v: number): void;
  /** The sensor stopped working for good (e.g. NOT_SUPPORTED at run time): it leaves the sensor set. */
  drop(local: number, reason: string): void;
}

const INITIAL_CAPACITY = 64;

/**
 * The node's sensors and the samples collected since the last batch, columnar per sensor in
 * growable Float64Arrays that are reused from batch to batch — the hot path allocates nothing.
 */
export class SampleStore {
  private readonly infos: SensorInfo[] = [];
  private readonly active: boolean[] = [];
  private ts: Float64Array[] = [];
  private vs: Float64Array[] = [];
  private counts: number[] = [];
  /** Each sensor's latest sample, kept across batches (the cooldown reads them as they come). */
  private lastT: number[] = [];
  private lastV: number[] = [];
  private pending = 0;
  /** Bumped whenever the sensor set changes; batches carry `sensors` after a change. */
  version = 0;
  /** Samples recorded since the process started. */
  totalSamples = 0;

  /** Adds a sensor; returns its id, or -1 when the name is already taken by an earlier source. */
  register(info: SensorInfo): number {
    if (this.infos.some((s) => s.sensor === info.sensor)) return -1;
    this.infos.push(info);
    this.active.push(true);
    this.ts.push(new Float64Array(INITIAL_CAPACITY));
    this.vs.push(new Float64Array(INITIAL_CAPACITY));
    this.counts.push(0);
    this.lastT.push(Number.NaN);
    this.lastV.push(Number.NaN);
    this.version += 1;
    return this.infos.length - 1;
  }

  /** Records one sample. Non-finite values are never recorded (JSON has no NaN, and 0 would lie). */
  push(id: number, t: number, v: number): void {
    if (id < 0 || !Number.isFinite(v) || this.active[id] !== true) return;
    let n = this.counts[id] as number;
    let tcol = this.ts[id] as Float64Array;
    let vcol = this.vs[id] as Float64Array;
    if (n === tcol.length) {
      const grownT = new Float64Array(n * 2);
      grownT.set(tcol);
      const grownV = new Float64Array(n * 2);
      grownV.set(vcol);
      this.ts[id] = tcol = grownT;
      this.vs[id] = vcol = grownV;
    }
    tcol[n] = this.lastT[id] = roundToMicros(t);
    vcol[n] = this.lastV[id] = v;
    n += 1;
    this.counts[id] = n;
    this.pending += 1;
    this.totalSamples += 1;
  }

  drop(id: number): boolean {
    if (id < 0 || this.active[id] !== true) return false;
    this.active[id] = false;
    this.version += 1;
    return true;
  }

  /** Samples collected since the last batch. */
  get pendingSamples(): number {
    return this.pending;
  }

  /** The sensors currently in the set. */
  sensors(): SensorInfo[] {
    return this.infos.filter((_, i) => this.active[i] === true);
  }

  info(id: number): SensorInfo | undefined {
    return this.infos[id];
  }

  /** Sensors ever registered: ids are 0 … count − 1 (a dropped one keeps its id, inactive). */
  get registered(): number {
    return this.infos.length;
  }

  /** Whether the sensor is in the set (not dropped). */
  isActive(id: number): boolean {
    return this.active[id] === true;
  }

  /** The time (Unix ms) of the sensor's latest sample; NaN before its first. */
  latestTime(id: number): number {
    return this.lastT[id] ?? Number.NaN;
  }

  /** The value of the sensor's latest sample; NaN before its first. */
  latestValue(id: number): number {
    return this.lastV[id] ?? Number.NaN;
  }

  /**
   * Closes the current batch: returns it as one JSON line (no newline) and empties the columns,
   * or returns null when nothing was collected. The line is built by hand from the typed arrays
   * (join) so no per-sample objects are made. `withSensors`: the batch declares the sensor set,
   * followed by `nodeInfo` — further members as JSON text (`,"fingerprint":{…}`), or ''. `tail`:
   * members after the samples, the same way (`,"marks":[…]`), or ''.
   */
  takeBatch(node: string, seq: number, withSensors: boolean, nodeInfo = '', tail = ''): string | null {
    if (this.pending === 0) return null;
    const parts: string[] = [spoolLineHead(node, seq)];
    if (withSensors) parts.push(`,"sensors":${JSON.stringify(this.sensors())}`, nodeInfo);
    parts.push(',"samples":[');
    let first = true;
    for (let id = 0; id < this.infos.length; id += 1) {
      const n = this.counts[id] as number;
      if (n === 0) continue;
      const info = this.infos[id] as SensorInfo;
      parts.push(
        `${first ? '' : ','}{"sensor":${JSON.stringify(info.sensor)},"t":[${(this.ts[id] as Float64Array).subarray(0, n).join(',')}],"v":[${(this.vs[id] as Float64Array).subarray(0, n).join(',')}]}`,
      );
      first = false;
      this.counts[id] = 0;
    }
    parts.push(']', tail, '}');
    this.pending = 0;
    return parts.join('');
  }
}

/** A source's view of the store: its local sensor indexes mapped to node-wide ids (-1 = not recorded). */
export function sinkFor(store: SampleStore, ids: readonly number[], onDrop: (sensor: string, reason: string) => void): SampleSink {
  const map = Int32Array.from(ids);
  return {
    push(local, t, v) {
      const id = map[local];
      if (id !== undefined && id >= 0) store.push(id, t, v);
    },
    drop(local, reason) {
      const id = map[local];
      if (id === undefined || id < 0) return;
      const info = store.info(id);
      if (store.drop(id) && info) onDrop(info.sensor, reason);
    },
  };
}
