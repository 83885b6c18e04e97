import type { AgentConfig } from '../config';
import type { Logger } from '../log';
import type { SampleSink } from '../samples';
import type { SensorInfo, SourceName } from '../wire';
import type { NodeFingerprint } from '@erg/spec/node-info';

/** What a GPU source can say of the node for its fingerprint: its GPUs and the driver stack. */
export type GpuStackIdentity = Pick<NodeFingerprint, 'gpus' | 'driverVersion' | 'cudaVersion' | 'nvmlVersion'>;

/** What every source's `detect()` gets. */
export interface DetectContext {
  config: AgentConfig;
  log: Logger;
  /** Records why this source is absent (or what it left out); the reasons go into meta.json. */
  note(message: string): void;
  /**
   * The sensors sources detected before this one offer: a source may leave out what it would only
   * shadow (NVML does not read the link traffic DCGM already reports). Absent: none.
   */
  taken?: ReadonlySet<string>;
}

/**
 * One kind of sensor access (NVML, hwmon, …). `detect()` returns a Source only when at least one
 * of its sensors answered; `read()` is called once per sampling cycle with that cycle's time.
 */
export interface Source {
  readonly name: SourceName;
  /** Its sensors; `read()` refers to them by index in this list. */
  readonly sensors: readonly SensorInfo[];
  /** Provenance for meta.json (driver version, paths, labels, zones, …). */
  readonly details: Record<string, unknown>;
  /** Reads every sensor once and pushes the values stamped with `t` (Unix ms). Must not throw for one bad sensor. */
  read(t: number, sink: SampleSink): void;
  /** Counters for stats.json. */
  stats?(): Record<string, unknown>;
  /** The GPUs and driver it sees, for the node's fingerprint (GPU sources only; asked once, at start). */
  identity?(): GpuStackIdentity;
  /** Releases what the source holds (child processes, libraries). */
  stop(): void | Promise<void>;
}
