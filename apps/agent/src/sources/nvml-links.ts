import type { SampleSink } from '../samples';
import { C2C_FLOOR, C2C_MIN_DRIVER_BRANCH } from '@erg/spec/driver-floors';
import type { Component, Quantity, SensorInfo } from '../wire';
import { sleepSync } from './sensor-timing';
import { CALL_UNAVAILABLE, NVML_ERROR_NOT_SUPPORTED, NVML_SUCCESS, nvmlReturnName, type FieldResult, type NvmlLibrary } from './nvml-library';

// The data-movement part of the nvml source (issue 15 §3): each GPU's NVLink traffic and, on a
// superchip, its NVLink-C2C traffic, as B/s sensors (`gpuN.nvlink_tx/rx`, `gpuN.c2c_tx/rx`, scope
// gpu). PCIe stays in nvml.ts (nvmlDeviceGetPcieThroughput, as before). Both kinds here count
// bytes on the wire, headers included, like DCGM's profiling fields of the same names (dcgm.ts),
// so a sensor means the same whichever source the node has:
//
// - NVLink: field values NVML_FI_DEV_NVLINK_THROUGHPUT_RAW_TX/RX (140/141, "data + protocol
//   overhead in KiB") at scopeId UINT_MAX, which nvml.h documents as the sum over all links. They
//   are counters: each cycle's rate is the difference since the previous read over the time
//   between NVML's own timestamps of the two values (the cycles' times where NVML gives none). A
//   GPU whose NVML_FI_DEV_NVLINK_LINK_COUNT (91) is 0 gets no NVLink sensors.
// - C2C: GPM (nvmlGpmSampleGet twice, nvmlGpmMetricsGet) metrics NVML_GPM_METRIC_C2C_TOTAL_TX/RX_PER_SEC
//   (100/101) in MiB/s (DCGM's cache manager scales NVML's C2C GPM values from MiB/s too), on GPUs
//   told to be superchips. nvml.h asks for more than 100 ms between two samples, so a GPU is
//   sampled on the first cycle at least GPM_MIN_SPACING_MS after its previous sample. Detection
//   takes two samples GPM_PROBE_MS apart (once for all GPUs) and keeps the metrics that answered.
//
// Every value is the mean rate since the GPU's previous reading, which is how the energy math
// integrates these sensors (a reading's rate holds over the interval before it).

export const NVML_FI_DEV_NVLINK_LINK_COUNT = 91;
export const NVML_FI_DEV_NVLINK_THROUGHPUT_RAW_TX = 140;
export const NVML_FI_DEV_NVLINK_THROUGHPUT_RAW_RX = 141;
/** scopeId of the NVLink throughput fields that sums every link (nvml.h: "A scopeId of UINT_MAX returns aggregate value"). */
const ALL_LINKS = 0xffffffff;
export const NVML_GPM_METRIC_C2C_TOTAL_TX_PER_SEC = 100;
export const NVML_GPM_METRIC_C2C_TOTAL_RX_PER_SEC = 101;
const C2C_METRICS = [NVML_GPM_METRIC_C2C_TOTAL_TX_PER_SEC, NVML_GPM_METRIC_C2C_TOTAL_RX_PER_SEC] as const;
/** nvml.h: "The interval between these two nvmlGpmSampleGet() calls should be greater than 100ms". */
export const GPM_MIN_SPACING_MS = 100;
/** The wait between the two samples of the detection probe. */
const GPM_PROBE_MS = 110;
const KIB = 1024;
const MIB = 1024 * 1024;

/** Registers a sensor of the nvml source and returns its local index. */
export type AddSensor = (component: Component, index: number, quantity: Quantity, unit: SensorInfo['unit']) => number;

/** A GPU's NVLink counters: its two sensors and the previous read. */
interface NvlinkGpu {
  gpu: number;
  handle: bigint;
  tx: number;
  rx: number;
  prevTxKiB: number;
  prevRxKiB: number;
  /** NVML's timestamp of the previous values (µs), 0 when it gave none. */
  prevUs: number;
  /** The cycle time of the previous values (ms); NaN for detection's read (no cycle yet). */
  prevMs: number;
}

/** A GPU's C2C traffic through GPM: its sensors (-1: that metric did not answer), two sample buffers and which one holds the latest. */
interface C2cGpu {
  gpu: number;
  handle: bigint;
  locals: [number, number];
  samples: [bigint, bigint];
  latest: 0 | 1;
  /** Cycle time of the latest sample (ms); -Infinity before the first cycle. */
  latestMs: number;
}

/** What the GPUs offer; sensors are registered through `add` as they are found. */
export interface LinkGpus {
  nvlink: NvlinkGpu[];
  c2c: C2cGpu[];
}

export function emptyLinks(): LinkGpus {
  return { nvlink: [], c2c: [] };
}


/** Why C2C sensors are absent, with the floor where the driver is below it (or unknown). */
function c2cAbsent(why: string, branch: number | null): string {
  if (branch !== null && branch >= C2C_MIN_DRIVER_BRANCH) return why;
  return `${why} (${C2C_FLOOR}; this driver is ${branch ?? 'unknown'})`;
}

const nvlinkFields = [
  [NVML_FI_DEV_NVLINK_THROUGHPUT_RAW_TX, ALL_LINKS],
  [NVML_FI_DEV_NVLINK_THROUGHPUT_RAW_RX, ALL_LINKS],
] as const;

/**
 * A GPU's NVLink sensors, where its throughput counters answer (and its link count, where NVML
 * gives one, is above 0); `skip` names sensors another source already provides (DCGM).
 */
export function describeNvlink(nvml: NvmlLibrary, gpu: number, handle: bigint, add: AddSensor, unsupported: string[], found: LinkGpus, skip: ReadonlySet<string>): void {
  if (skip.has(`gpu${gpu}.nvlink_tx`) || skip.has(`gpu${gpu}.nvlink_rx`)) return;
  const out: FieldResult[] = [];
  const countRc = nvml.readFields(handle, [[NVML_FI_DEV_NVLINK_LINK_COUNT, 0]], out);
  if (countRc === NVML_SUCCESS && out[0]?.code === NVML_SUCCESS && out[0].value === 0) {
    unsupported.push(`gpu${gpu}.nvlink_tx/rx: no NVLink links (NVML_FI_DEV_NVLINK_LINK_COUNT 0)`);
    return;
  }
  const rc = nvml.readFields(handle, nvlinkFields, out);
  const failed = rc !== NVML_SUCCESS ? rc : out.slice(0, 2).find((r) => r.code !== NVML_SUCCESS)?.code;
  if (failed !== undefined) {
    unsupported.push(`gpu${gpu}.nvlink_tx/rx: NVLink throughput fields ${failed === CALL_UNAVAILABLE ? 'unavailable' : nvmlReturnName(failed)}`);
    return;
  }
  const [tx, rx] = out as [FieldResult, FieldResult];
  found.nvlink.push({
    gpu, handle, tx: add('gpu', gpu, 'nvlink_tx', 'B/s'), rx: add('gpu', gpu, 'nvlink_rx', 'B/s'),
    prevTxKiB: tx.value, prevRxKiB: rx.value, prevUs: tx.timestampUs, prevMs: Number.NaN,
  });
}

/**
 * The C2C sensors of the superchips among `gpus`: where GPM is supported, two samples
 * GPM_PROBE_MS apart, and a sensor for each C2C metric that answered. Blocks for GPM_PROBE_MS once
 * (at detection), only on a node with a superchip whose library has GPM.
 */
export function describeC2c(
  nvml: NvmlLibrary,
  gpus: readonly { gpu: number; handle: bigint }[],
  add: AddSensor,
  unsupported: string[],
  found: LinkGpus,
  skip: ReadonlySet<string>,
  branch: number | null,
): void {
  const wanted = gpus.filter((g) => !skip.has(`gpu${g.gpu}.c2c_tx`) && !skip.has(`gpu${g.gpu}.c2c_rx`));
  if (wanted.length === 0) return;
  if (!nvml.hasGpm) {
    for (const g of wanted) unsupported.push(c2cAbsent(`gpu${g.gpu}.c2c_tx/rx: this NVML library has no GPM calls`, branch));
    return;
  }
  const probing: { gpu: number; handle: bigint; samples: [bigint, bigint] }[] = [];
  for (const g of wanted) {
    if (nvml.gpmSupported(g.handle) !== true) {
      unsupported.push(`gpu${g.gpu}.c2c_tx/rx: GPM not supported on this GPU`);
      continue;
    }
    const a = nvml.gpmSampleAlloc();
    const b = nvml.gpmSampleAlloc();
    if (!('sample' in a) || !('sample' in b)) {
      for (const s of [a, b]) if ('sample' in s) nvml.gpmSampleFree(s.sample);
      unsupported.push(`gpu${g.gpu}.c2c_tx/rx: nvmlGpmSampleAlloc ${nvmlReturnName('code' in a ? a.code : (b as { code: number }).code)}`);
      continue;
    }
    const rc = nvml.gpmSampleGet(g.handle, a.sample);
    if (rc !== NVML_SUCCESS) {
      nvml.gpmSampleFree(a.sample);
      nvml.gpmSampleFree(b.sample);
      unsupported.push(`gpu${g.gpu}.c2c_tx/rx: nvmlGpmSampleGet ${nvmlReturnName(rc)}`);
      continue;
    }
    probing.push({ ...g, samples: [a.sample, b.sample] });
  }
  if (probing.length === 0) return;
  sleepSync(GPM_PROBE_MS);
  const codes = new Int32Array(C2C_METRICS.length);
  const values = new Float64Array(C2C_METRICS.length);
  for (const g of probing) {
    const rc = nvml.gpmSampleGet(g.handle, g.samples[1]);
    const metricsRc = rc === NVML_SUCCESS ? nvml.gpmMetrics(g.samples[0], g.samples[1], C2C_METRICS, codes, values) : rc;
    if (metricsRc !== NVML_SUCCESS || !codes.some((c) => c === NVML_SUCCESS)) {
      nvml.gpmSampleFree(g.samples[0]);
      nvml.gpmSampleFree(g.samples[1]);
      unsupported.push(c2cAbsent(`gpu${g.gpu}.c2c_tx/rx: GPM C2C metrics ${nvmlReturnName(metricsRc !== NVML_SUCCESS ? metricsRc : codes[0]!)}`, branch));
      continue;
    }
    const local = (i: 0 | 1, quantity: Quantity): number => {
      if (codes[i] === NVML_SUCCESS) return add('gpu', g.gpu, quantity, 'B/s');
      unsupported.push(c2cAbsent(`gpu${g.gpu}.${quantity}: GPM metric ${C2C_METRICS[i]} ${nvmlReturnName(codes[i]!)}`, branch));
      return -1;
    };
    found.c2c.push({ gpu: g.gpu, handle: g.handle, locals: [local(0, 'c2c_tx'), local(1, 'c2c_rx')], samples: g.samples, latest: 1, latestMs: Number.NEGATIVE_INFINITY });
  }
}

/** Reads the GPUs' NVLink counters and C2C rates each cycle (synchronously: each is an ioctl, not a 20 ms measurement like PCIe). */
export class NvmlLinks {
  /** Reads that failed with an error other than the sensor going away. */
  errors = 0;
  private readonly out: FieldResult[] = [];
  private readonly codes = new Int32Array(C2C_METRICS.length);
  private readonly values = new Float64Array(C2C_METRICS.length);

  constructor(
    private readonly nvml: NvmlLibrary,
    private readonly gpus: LinkGpus,
  ) {}

  get empty(): boolean {
    return this.gpus.nvlink.length === 0 && this.gpus.c2c.length === 0;
  }

  read(t: number, sink: SampleSink): void {
    for (const g of this.gpus.nvlink) this.readNvlink(g, t, sink);
    for (const g of this.gpus.c2c) this.readC2c(g, t, sink);
  }

  /** Frees the GPM sample buffers (before the library is shut down). */
  stop(): void {
    for (const g of this.gpus.c2c) for (const s of g.samples) this.nvml.gpmSampleFree(s);
    this.gpus.c2c.length = 0;
  }

  private readNvlink(g: NvlinkGpu, t: number, sink: SampleSink): void {
    if (g.tx < 0) return;
    const rc = this.nvml.readFields(g.handle, nvlinkFields, this.out);
    const [tx, rx] = this.out as [FieldResult, FieldResult];
    if (rc !== NVML_SUCCESS || tx.code !== NVML_SUCCESS || rx.code !== NVML_SUCCESS) {
      const code = rc !== NVML_SUCCESS ? rc : tx.code !== NVML_SUCCESS ? tx.code : rx.code;
      if (code === NVML_ERROR_NOT_SUPPORTED) {
        sink.drop(g.tx, nvmlReturnName(code));
        sink.drop(g.rx, nvmlReturnName(code));
        g.tx = g.rx = -1;
      } else this.errors += 1;
      return;
    }
    // NVML's own timestamps where it gives them (the values' age, not the cycle's), else the cycles'.
    const seconds = tx.timestampUs > 0 && g.prevUs > 0 && tx.timestampUs > g.prevUs ? (tx.timestampUs - g.prevUs) / 1e6 : (t - g.prevMs) / 1000;
    const dTx = tx.value - g.prevTxKiB;
    const dRx = rx.value - g.prevRxKiB;
    // A counter that went backwards was reset (driver reload): that interval is lost.
    if (seconds > 0 && dTx >= 0 && dRx >= 0) {
      sink.push(g.tx, t, (dTx * KIB) / seconds);
      sink.push(g.rx, t, (dRx * KIB) / seconds);
    }
    g.prevTxKiB = tx.value;
    g.prevRxKiB = rx.value;
    g.prevUs = tx.timestampUs;
    g.prevMs = t;
  }

  private readC2c(g: C2cGpu, t: number, sink: SampleSink): void {
    if (g.locals[0] < 0 && g.locals[1] < 0) return;
    if (t - g.latestMs < GPM_MIN_SPACING_MS) return;
    const next = g.latest === 0 ? 1 : 0;
    const rc = this.nvml.gpmSampleGet(g.handle, g.samples[next]);
    if (rc !== NVML_SUCCESS) {
      this.errors += 1;
      return;
    }
    // The first cycle's rate covers the time since the detection probe's second sample.
    const metricsRc = this.nvml.gpmMetrics(g.samples[g.latest], g.samples[next], C2C_METRICS, this.codes, this.values);
    g.latest = next;
    g.latestMs = t;
    if (metricsRc !== NVML_SUCCESS) {
      this.errors += 1;
      return;
    }
    for (let i = 0; i < 2; i++) {
      const local = g.locals[i]!;
      if (local < 0) continue;
      const code = this.codes[i]!;
      if (code === NVML_SUCCESS && Number.isFinite(this.values[i]!) && this.values[i]! >= 0) sink.push(local, t, this.values[i]! * MIB);
      else if (code === NVML_ERROR_NOT_SUPPORTED) {
        sink.drop(local, nvmlReturnName(code));
        g.locals[i] = -1;
      } else this.errors += 1;
    }
  }
}
