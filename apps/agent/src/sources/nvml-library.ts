import type * as Koffi from 'koffi';

// NVML's C API, called in-process with koffi (FFI). koffi has a native binary and is not bundled:
// where it cannot be required, or the library cannot be loaded, openNvml says why and the nvml
// source is absent (nvidia-smi is tried instead). Every read goes through a few reused Buffers;
// no per-tick allocation beyond koffi's own.

export const NVML_SUCCESS = 0;
export const NVML_ERROR_NOT_SUPPORTED = 3;
export const NVML_ERROR_GPU_IS_LOST = 15;
/** "Local version of NVML doesn't implement this function" (nvml.h). */
export const NVML_ERROR_FUNCTION_NOT_FOUND = 13;
/** What `read` returns when this library lacks the call. */
export const CALL_UNAVAILABLE = -1;
const NVML_CLOCK_GRAPHICS = 0;
const NVML_CLOCK_SM = 1;
/** nvmlClockId_t: the applications clock target, what nvmlDeviceGetApplicationsClock returned (nvml.h). */
const NVML_CLOCK_ID_APP_CLOCK_TARGET = 1;
const NVML_TEMPERATURE_GPU = 0;
/** nvmlTemperature_v1 = NVML_STRUCT_VERSION(Temperature, 1): sizeof(nvmlTemperature_v1_t) = 12, | 1 << 24. */
const NVML_TEMPERATURE_V1 = 12 | (1 << 24);
export const NVML_PCIE_UTIL_TX_BYTES = 0;
export const NVML_PCIE_UTIL_RX_BYTES = 1;
const NVML_FI_DEV_POWER_INSTANT = 186;
/** "Total energy consumption (in mJ) since the driver was last reloaded" (nvml.h from NVML 12.2), per power scope. */
export const NVML_FI_DEV_ENERGY = 191;
/** "The power limit currently enforced" (mW), per scope. */
const NVML_FI_DEV_POWER_CURRENT_LIMIT = 190;
/** nvmlFieldValue_t.scopeId of the power fields: the GPU alone, or the whole module (GPU + Grace + memory on GH200). */
export const NVML_POWER_SCOPE_GPU = 0;
export const NVML_POWER_SCOPE_MODULE = 1;
/** sizeof(nvmlFieldValue_t): fieldId, scopeId (u32), timestamp, latencyUsec (i64), valueType, nvmlReturn (i32), value (8-byte union). */
const FIELD_VALUE_SIZE = 40;
/** Most field values one `readFields` call asks for. */
const MAX_FIELDS_PER_CALL = 4;
/**
 * Room for nvmlGpmMetricsGet_t: version, numMetrics (u32), sample1, sample2 (pointers), then
 * metrics[NVML_GPM_METRIC_MAX] of nvmlGpmMetric_t — metricId (u32), nvmlReturn (i32), value
 * (double), metricInfo (3 pointers): 40 bytes each. NVML_GPM_METRIC_MAX has grown between
 * releases (333 in the nvml.h read for this); the buffer holds 512 so the library never writes
 * past it, and erg asks for numMetrics of them only.
 */
const GPM_METRICS_HEAD = 24;
const GPM_METRIC_SIZE = 40;
const GPM_METRICS_CAPACITY = 512;
/** NVML_GPM_METRICS_GET_VERSION and NVML_GPM_SUPPORT_VERSION. */
const GPM_STRUCT_VERSION = 1;
/** Room for the strings NVML returns (driver and NVML versions, device name, UUID, VBIOS), as its headers size them (96 at most). */
const STRING_LENGTH = 96;

const RETURN_NAMES: Record<number, string> = {
  1: 'UNINITIALIZED', 2: 'INVALID_ARGUMENT', 3: 'NOT_SUPPORTED', 4: 'NO_PERMISSION', 5: 'ALREADY_INITIALIZED',
  6: 'NOT_FOUND', 7: 'INSUFFICIENT_SIZE', 8: 'INSUFFICIENT_POWER', 9: 'DRIVER_NOT_LOADED', 10: 'TIMEOUT',
  11: 'IRQ_ISSUE', 12: 'LIBRARY_NOT_FOUND', 13: 'FUNCTION_NOT_FOUND', 14: 'CORRUPTED_INFOROM', 15: 'GPU_IS_LOST',
  16: 'RESET_REQUIRED', 17: 'OPERATING_SYSTEM', 18: 'LIB_RM_VERSION_MISMATCH', 19: 'IN_USE', 20: 'MEMORY',
  21: 'NO_DATA', 999: 'UNKNOWN',
};
export function nvmlReturnName(code: number): string {
  return code === NVML_SUCCESS ? 'SUCCESS' : `NVML_ERROR_${RETURN_NAMES[code] ?? code}`;
}

type NvmlFn = ((...args: unknown[]) => number) & { async: (...args: unknown[]) => void };

/** One field of a readFields call: its own return code, its value (NaN unless it succeeded) and NVML's timestamp (µs since 1970; 0: none). */
export interface FieldResult {
  code: number;
  value: number;
  timestampUs: number;
}

/** The NVML functions erg calls; undefined where the library lacks one. */
interface NvmlFunctions {
  init?: NvmlFn;
  shutdown?: NvmlFn;
  getDriverVersion?: NvmlFn;
  getNvmlVersion?: NvmlFn;
  getCudaVersion?: NvmlFn;
  getCount?: NvmlFn;
  getHandle?: NvmlFn;
  getName?: NvmlFn;
  getUuid?: NvmlFn;
  getVbios?: NvmlFn;
  getPower?: NvmlFn;
  getEnergy?: NvmlFn;
  getClock?: NvmlFn;
  getAppClock?: NvmlFn;
  /** nvmlDeviceGetClock: the applications clock target without the call NVML 13 deprecates. */
  getClockById?: NvmlFn;
  getPowerLimit?: NvmlFn;
  getTemperature?: NvmlFn;
  /** nvmlDeviceGetTemperatureV (NVML 12.8 / R570 on), which NVML 13 names as nvmlDeviceGetTemperature's replacement. */
  getTemperatureV?: NvmlFn;
  /** nvmlDeviceGetCurrentClocksEventReasons, or on older libraries its former name (same signature and bits). */
  getClockEvents?: NvmlFn;
  getUtil?: NvmlFn;
  getMemory?: NvmlFn;
  getPcie?: NvmlFn;
  getFields?: NvmlFn;
  getC2cModeInfo?: NvmlFn;
  getComputeCapability?: NvmlFn;
  gpmQueryDeviceSupport?: NvmlFn;
  gpmSampleAlloc?: NvmlFn;
  gpmSampleFree?: NvmlFn;
  gpmSampleGet?: NvmlFn;
  gpmMetricsGet?: NvmlFn;
}

/** How one sensor is read: which call. */
export type ReadKind =
  | 'power'
  | 'energy'
  | 'clock'
  | 'util'
  | 'mem_used'
  | 'gpu_power'
  | 'module_power'
  | 'power_limit'
  | 'clock_app'
  | 'clock_app_legacy'
  | 'temp'
  | 'temp_legacy'
  | 'clock_events'
  | 'module_power_limit';

/** The clocks-event reasons call and its name before NVML renamed "throttle" reasons (R535). */
export const CLOCK_EVENTS_CALL = 'nvmlDeviceGetCurrentClocksEventReasons';
export const CLOCK_THROTTLE_CALL = 'nvmlDeviceGetCurrentClocksThrottleReasons';

/** Loads koffi if it can be required; a string says why not. */
function loadKoffi(): typeof Koffi | string {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('koffi') as typeof Koffi;
  } catch (err) {
    return `koffi cannot be loaded (${(err as Error).message.split('\n')[0]}); install it beside the agent or point NODE_PATH at it`;
  }
}

/** Binds every function erg calls; the names of those the library lacks go to `missing`. */
function bindFunctions(lib: Koffi.LibraryHandle, missing: string[]): NvmlFunctions & { clockEventsCall: string | null } {
  const bind = (proto: string): NvmlFn | undefined => {
    try {
      return lib.func(proto) as unknown as NvmlFn;
    } catch {
      return undefined;
    }
  };
  const fn = (proto: string): NvmlFn | undefined => {
    const f = bind(proto);
    if (!f) missing.push(/(\w+)\(/.exec(proto)?.[1] ?? proto);
    return f;
  };
  // The renamed call first; only where it is missing its older name (still exported by newer
  // libraries, but deprecated) — `missing` then names the new one, which says how old the library is.
  const clockEvents = fn(`int ${CLOCK_EVENTS_CALL}(void *device, void *reasons)`);
  const clockThrottle = clockEvents ? undefined : bind(`int ${CLOCK_THROTTLE_CALL}(void *device, void *reasons)`);
  return {
    init: fn('int nvmlInit_v2()'),
    shutdown: fn('int nvmlShutdown()'),
    getDriverVersion: fn('int nvmlSystemGetDriverVersion(void *version, unsigned int length)'),
    getNvmlVersion: fn('int nvmlSystemGetNVMLVersion(void *version, unsigned int length)'),
    getCudaVersion: fn('int nvmlSystemGetCudaDriverVersion_v2(void *version)'),
    getCount: fn('int nvmlDeviceGetCount_v2(void *count)'),
    getHandle: fn('int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void *device)'),
    getName: fn('int nvmlDeviceGetName(void *device, void *name, unsigned int length)'),
    getUuid: fn('int nvmlDeviceGetUUID(void *device, void *uuid, unsigned int length)'),
    getVbios: fn('int nvmlDeviceGetVbiosVersion(void *device, void *version, unsigned int length)'),
    getPower: fn('int nvmlDeviceGetPowerUsage(void *device, void *power)'),
    getEnergy: fn('int nvmlDeviceGetTotalEnergyConsumption(void *device, void *energy)'),
    getClock: fn('int nvmlDeviceGetClockInfo(void *device, int type, void *clock)'),
    // NVML 13 deprecates the applications-clock and temperature calls ("will be removed in CUDA
    // 14.0"): erg prefers nvmlDeviceGetClock(…, APP_CLOCK_TARGET) and nvmlDeviceGetTemperatureV and
    // falls back to the older calls (nvml.ts), so neither is required.
    getAppClock: bind('int nvmlDeviceGetApplicationsClock(void *device, int type, void *clock)'),
    getClockById: fn('int nvmlDeviceGetClock(void *device, int type, int id, void *clock)'),
    getPowerLimit: fn('int nvmlDeviceGetEnforcedPowerLimit(void *device, void *limit)'),
    getTemperature: bind('int nvmlDeviceGetTemperature(void *device, int sensor, void *temp)'),
    getTemperatureV: fn('int nvmlDeviceGetTemperatureV(void *device, void *temperature)'),
    getClockEvents: clockEvents ?? clockThrottle,
    clockEventsCall: clockEvents ? CLOCK_EVENTS_CALL : clockThrottle ? CLOCK_THROTTLE_CALL : null,
    getUtil: fn('int nvmlDeviceGetUtilizationRates(void *device, void *utilization)'),
    getMemory: fn('int nvmlDeviceGetMemoryInfo(void *device, void *memory)'),
    getPcie: fn('int nvmlDeviceGetPcieThroughput(void *device, int counter, void *value)'),
    getFields: fn('int nvmlDeviceGetFieldValues(void *device, int count, void *values)'),
    // In nvml.h from NVML 12.3 (R545); older libraries lack it and superchips are then told by their name.
    getC2cModeInfo: fn('int nvmlDeviceGetC2cModeInfoV(void *device, void *info)'),
    // Tells what nvmlDeviceGetPowerUsage returns (a 1 s average from Ampere but GA100 on): sensors.ts averagingMs.
    getComputeCapability: fn('int nvmlDeviceGetCudaComputeCapability(void *device, void *major, void *minor)'),
    // GPM (Hopper and newer): rates over the time between two samples; erg reads NVLink-C2C traffic with it (nvml-links.ts).
    gpmQueryDeviceSupport: fn('int nvmlGpmQueryDeviceSupport(void *device, void *support)'),
    gpmSampleAlloc: fn('int nvmlGpmSampleAlloc(void *sample)'),
    gpmSampleFree: fn('int nvmlGpmSampleFree(void *sample)'),
    gpmSampleGet: fn('int nvmlGpmSampleGet(void *device, void *sample)'),
    gpmMetricsGet: fn('int nvmlGpmMetricsGet(void *metricsGet)'),
  };
}

/** Loads `libPath` and initialises NVML; a string says why it cannot be used. */
export function openNvml(libPath: string): NvmlLibrary | string {
  const koffi = loadKoffi();
  if (typeof koffi === 'string') return koffi;
  let lib: Koffi.LibraryHandle;
  try {
    lib = koffi.load(libPath);
  } catch (err) {
    return `${libPath}: ${(err as Error).message}`;
  }
  const missing: string[] = [];
  const { clockEventsCall, ...fns } = bindFunctions(lib, missing);
  if (!fns.init || !fns.getCount || !fns.getHandle) {
    lib.unload();
    return `${libPath} lacks ${missing.join(', ')}`;
  }
  const rc = fns.init();
  if (rc !== NVML_SUCCESS) {
    lib.unload();
    return `nvmlInit_v2: ${nvmlReturnName(rc)}`;
  }
  return new NvmlLibrary(lib, fns, missing, clockEventsCall);
}

/** An initialised NVML: the calls erg makes, each answering an NVML return code. */
export class NvmlLibrary {
  /** The value of the last successful `read`, in SI units. */
  value = 0;
  private readonly scratch = Buffer.alloc(128);
  private readonly field = Buffer.alloc(FIELD_VALUE_SIZE);
  /** A call's second out-parameter. */
  private readonly second = Buffer.alloc(8);
  /** nvmlFieldValue_t[MAX_FIELDS_PER_CALL] for readFields. */
  private readonly fields = Buffer.alloc(FIELD_VALUE_SIZE * MAX_FIELDS_PER_CALL);
  /** nvmlGpmMetricsGet_t, reused (allocated once: about 20 kB). */
  private gpmBuffer: Buffer | undefined;

  constructor(
    /** Held for as long as its functions are called. */
    private readonly lib: Koffi.LibraryHandle,
    private readonly fns: NvmlFunctions,
    /** Functions the library lacks (their sensors are absent). */
    readonly missing: readonly string[],
    /** The call that reads the clocks-event reasons (CLOCK_EVENTS_CALL, or CLOCK_THROTTLE_CALL on older libraries); null: neither. */
    readonly clockEventsCall: string | null,
  ) {}

  get hasPcie(): boolean {
    return this.fns.getPcie !== undefined;
  }

  driverVersion(): string | null {
    return this.text(this.fns.getDriverVersion);
  }

  /** The NVML library's own version, e.g. "12.550.54.15". */
  nvmlVersion(): string | null {
    return this.text(this.fns.getNvmlVersion);
  }

  /** The CUDA version the driver supports, e.g. "12.4" (NVML answers 12040: major × 1000 + minor × 10). */
  cudaVersion(): string | null {
    const { getCudaVersion } = this.fns;
    if (!getCudaVersion || getCudaVersion(this.scratch) !== NVML_SUCCESS) return null;
    const v = this.scratch.readInt32LE(0);
    return v > 0 ? `${Math.floor(v / 1000)}.${Math.floor((v % 1000) / 10)}` : null;
  }

  /** Number of GPUs; null when NVML cannot say. */
  deviceCount(): number | null {
    return this.fns.getCount?.(this.scratch) === NVML_SUCCESS ? this.scratch.readUInt32LE(0) : null;
  }

  /** The device handle of GPU `index`, or the NVML return code that refused it. */
  deviceHandle(index: number): { handle: bigint } | { code: number } {
    this.scratch.fill(0);
    const code = (this.fns.getHandle as NvmlFn)(index, this.scratch);
    return code === NVML_SUCCESS ? { handle: this.scratch.readBigUInt64LE(0) } : { code };
  }

  deviceName(handle: bigint): string | null {
    return this.text(this.fns.getName, handle);
  }

  deviceUuid(handle: bigint): string | null {
    return this.text(this.fns.getUuid, handle);
  }

  vbiosVersion(handle: bigint): string | null {
    return this.text(this.fns.getVbios, handle);
  }

  /** Reads one value with the call of `kind`; returns the NVML return code (CALL_UNAVAILABLE when the library lacks the call), the value in `value`. */
  read(kind: ReadKind, handle: bigint): number {
    const { fns, scratch } = this;
    let code: number;
    switch (kind) {
      case 'power':
        code = fns.getPower ? fns.getPower(handle, scratch) : CALL_UNAVAILABLE;
        this.value = scratch.readUInt32LE(0) / 1000; // mW → W
        return code;
      case 'energy':
        code = fns.getEnergy ? fns.getEnergy(handle, scratch) : CALL_UNAVAILABLE;
        this.value = (scratch.readUInt32LE(0) + scratch.readUInt32LE(4) * 4294967296) / 1000; // mJ → J
        return code;
      case 'clock':
        code = fns.getClock ? fns.getClock(handle, NVML_CLOCK_SM, scratch) : CALL_UNAVAILABLE;
        this.value = scratch.readUInt32LE(0); // MHz
        return code;
      case 'util':
        code = fns.getUtil ? fns.getUtil(handle, scratch) : CALL_UNAVAILABLE;
        this.value = scratch.readUInt32LE(0); // nvmlUtilization_t.gpu, %
        return code;
      case 'mem_used':
        code = fns.getMemory ? fns.getMemory(handle, scratch) : CALL_UNAVAILABLE;
        this.value = scratch.readUInt32LE(16) + scratch.readUInt32LE(20) * 4294967296; // nvmlMemory_t.used, bytes
        return code;
      case 'gpu_power':
        return this.readPowerField(handle, NVML_FI_DEV_POWER_INSTANT, NVML_POWER_SCOPE_GPU);
      case 'module_power':
        return this.readPowerField(handle, NVML_FI_DEV_POWER_INSTANT, NVML_POWER_SCOPE_MODULE);
      case 'power_limit':
        code = fns.getPowerLimit ? fns.getPowerLimit(handle, scratch) : CALL_UNAVAILABLE;
        this.value = scratch.readUInt32LE(0) / 1000; // mW → W
        return code;
      case 'clock_app':
        code = fns.getClockById ? fns.getClockById(handle, NVML_CLOCK_GRAPHICS, NVML_CLOCK_ID_APP_CLOCK_TARGET, scratch) : CALL_UNAVAILABLE;
        this.value = scratch.readUInt32LE(0); // MHz
        return code;
      case 'clock_app_legacy':
        code = fns.getAppClock ? fns.getAppClock(handle, NVML_CLOCK_GRAPHICS, scratch) : CALL_UNAVAILABLE;
        this.value = scratch.readUInt32LE(0); // MHz
        return code;
      case 'temp':
        if (!fns.getTemperatureV) return CALL_UNAVAILABLE;
        scratch.writeUInt32LE(NVML_TEMPERATURE_V1, 0); // nvmlTemperature_v1_t: version, sensorType, temperature (int)
        scratch.writeInt32LE(NVML_TEMPERATURE_GPU, 4);
        code = fns.getTemperatureV(handle, scratch);
        this.value = scratch.readInt32LE(8); // °C
        return code;
      case 'temp_legacy':
        code = fns.getTemperature ? fns.getTemperature(handle, NVML_TEMPERATURE_GPU, scratch) : CALL_UNAVAILABLE;
        this.value = scratch.readUInt32LE(0); // °C
        return code;
      case 'clock_events':
        code = fns.getClockEvents ? fns.getClockEvents(handle, scratch) : CALL_UNAVAILABLE;
        this.value = scratch.readUInt32LE(0) + scratch.readUInt32LE(4) * 4294967296; // unsigned long long bitmask
        return code;
      case 'module_power_limit':
        return this.readPowerField(handle, NVML_FI_DEV_POWER_CURRENT_LIMIT, NVML_POWER_SCOPE_MODULE);
    }
  }

  /**
   * Whether the GPU is joined to its CPU by NVLink-C2C (a superchip: GH200, GB200, GB10), from
   * nvmlDeviceGetC2cModeInfoV's three answers: SUCCESS with isC2cEnabled 1 ('enabled') or 0
   * ('disabled'), NOT_SUPPORTED ('unsupported': not a C2C device). Null where the library lacks
   * the call (or says it does not implement it: FUNCTION_NOT_FOUND) or it failed otherwise.
   */
  c2cMode(handle: bigint): 'enabled' | 'disabled' | 'unsupported' | null {
    const { getC2cModeInfo } = this.fns;
    if (!getC2cModeInfo) return null;
    this.scratch.fill(0);
    const code = getC2cModeInfo(handle, this.scratch);
    if (code === NVML_SUCCESS) return this.scratch.readUInt32LE(0) !== 0 ? 'enabled' : 'disabled'; // nvmlC2cModeInfo_v1_t.isC2cEnabled
    return code === NVML_ERROR_NOT_SUPPORTED ? 'unsupported' : null;
  }

  /** The GPU's CUDA compute capability (9.0 on Hopper), or null where the call is missing or fails. */
  computeCapability(handle: bigint): { major: number; minor: number } | null {
    const { getComputeCapability } = this.fns;
    if (!getComputeCapability) return null;
    this.scratch.fill(0, 0, 4);
    this.second.fill(0);
    if (getComputeCapability(handle, this.scratch, this.second) !== NVML_SUCCESS) return null;
    return { major: this.scratch.readInt32LE(0), minor: this.second.readInt32LE(0) };
  }

  /** PCIe throughput (KB/s, into `out`), measured over 20 ms: the call blocks that long. */
  pcieThroughput(handle: bigint, counter: number, out: Buffer): number {
    return this.fns.getPcie ? this.fns.getPcie(handle, counter, out) : CALL_UNAVAILABLE;
  }

  /** The same on koffi's worker threads; `done` gets the return code. */
  pcieThroughputAsync(handle: bigint, counter: number, out: Buffer, done: (err: unknown, code: number) => void): void {
    this.fns.getPcie?.async(handle, counter, out, done);
  }

  /**
   * nvmlDeviceGetFieldValues of up to MAX_FIELDS_PER_CALL fields (fieldId, scopeId) in one call.
   * Returns the call's return code; each field's own return code, value and timestamp (µs since
   * 1970, 0 when NVML gave none) go into `out` in the same order.
   */
  readFields(handle: bigint, requests: readonly (readonly [number, number])[], out: FieldResult[]): number {
    const { fns, fields } = this;
    if (!fns.getFields) return CALL_UNAVAILABLE;
    const n = Math.min(requests.length, MAX_FIELDS_PER_CALL);
    fields.fill(0, 0, n * FIELD_VALUE_SIZE);
    for (let i = 0; i < n; i++) {
      const [fieldId, scopeId] = requests[i]!;
      fields.writeUInt32LE(fieldId, i * FIELD_VALUE_SIZE);
      fields.writeUInt32LE(scopeId >>> 0, i * FIELD_VALUE_SIZE + 4);
    }
    const code = fns.getFields(handle, n, fields);
    if (code !== NVML_SUCCESS) return code;
    for (let i = 0; i < n; i++) {
      const one = fields.subarray(i * FIELD_VALUE_SIZE, (i + 1) * FIELD_VALUE_SIZE);
      const r = (out[i] ??= { code: 0, value: 0, timestampUs: 0 });
      r.code = one.readInt32LE(28);
      r.value = r.code === NVML_SUCCESS ? fieldValue(one) : Number.NaN;
      r.timestampUs = Number(one.readBigInt64LE(8));
    }
    return NVML_SUCCESS;
  }

  /** Whether the library has every GPM call erg makes. */
  get hasGpm(): boolean {
    const f = this.fns;
    return f.gpmQueryDeviceSupport !== undefined && f.gpmSampleAlloc !== undefined && f.gpmSampleFree !== undefined && f.gpmSampleGet !== undefined && f.gpmMetricsGet !== undefined;
  }

  /** nvmlGpmQueryDeviceSupport: whether the GPU supports GPM; null where the call is missing or fails. */
  gpmSupported(handle: bigint): boolean | null {
    const call = this.fns.gpmQueryDeviceSupport;
    if (!call) return null;
    this.scratch.fill(0, 0, 8);
    this.scratch.writeUInt32LE(GPM_STRUCT_VERSION, 0);
    if (call(handle, this.scratch) !== NVML_SUCCESS) return null;
    return this.scratch.readUInt32LE(4) !== 0; // nvmlGpmSupport_t.isSupportedDevice
  }

  /** A GPM sample buffer (nvmlGpmSampleAlloc), or the return code that refused it. */
  gpmSampleAlloc(): { sample: bigint } | { code: number } {
    const call = this.fns.gpmSampleAlloc;
    if (!call) return { code: CALL_UNAVAILABLE };
    this.second.fill(0);
    const code = call(this.second);
    return code === NVML_SUCCESS ? { sample: this.second.readBigUInt64LE(0) } : { code };
  }

  gpmSampleFree(sample: bigint): void {
    this.fns.gpmSampleFree?.(sample);
  }

  /** nvmlGpmSampleGet: reads the GPU's GPM counters into `sample`. */
  gpmSampleGet(handle: bigint, sample: bigint): number {
    return this.fns.gpmSampleGet ? this.fns.gpmSampleGet(handle, sample) : CALL_UNAVAILABLE;
  }

  /**
   * nvmlGpmMetricsGet: each of `metricIds` computed between two samples of one GPU (`first` taken
   * before `second`). Returns the call's code; each metric's own code and value go into `codes`
   * and `values` in the same order.
   */
  gpmMetrics(first: bigint, second: bigint, metricIds: readonly number[], codes: Int32Array, values: Float64Array): number {
    const call = this.fns.gpmMetricsGet;
    if (!call) return CALL_UNAVAILABLE;
    const n = Math.min(metricIds.length, GPM_METRICS_CAPACITY);
    const buf = (this.gpmBuffer ??= Buffer.alloc(GPM_METRICS_HEAD + GPM_METRIC_SIZE * GPM_METRICS_CAPACITY));
    buf.fill(0, 0, GPM_METRICS_HEAD + GPM_METRIC_SIZE * n);
    buf.writeUInt32LE(GPM_STRUCT_VERSION, 0);
    buf.writeUInt32LE(n, 4);
    buf.writeBigUInt64LE(first, 8);
    buf.writeBigUInt64LE(second, 16);
    for (let i = 0; i < n; i++) buf.writeUInt32LE(metricIds[i]!, GPM_METRICS_HEAD + GPM_METRIC_SIZE * i);
    const code = call(buf);
    if (code !== NVML_SUCCESS) return code;
    for (let i = 0; i < n; i++) {
      const at = GPM_METRICS_HEAD + GPM_METRIC_SIZE * i;
      codes[i] = buf.readInt32LE(at + 4);
      values[i] = buf.readDoubleLE(at + 8);
    }
    return NVML_SUCCESS;
  }

  shutdown(): void {
    this.fns.shutdown?.();
  }

  /** A string NVML writes into a buffer (`call(…args, buffer, length)`); null when the call is missing or fails. */
  private text(call: NvmlFn | undefined, ...args: unknown[]): string | null {
    if (!call) return null;
    this.scratch.fill(0, 0, STRING_LENGTH);
    return call(...args, this.scratch, STRING_LENGTH) === NVML_SUCCESS ? cString(this.scratch.subarray(0, STRING_LENGTH)) || null : null;
  }

  /** nvmlDeviceGetFieldValues of one power field (mW) at one scope: the GPU alone, or the whole module (GH200). */
  private readPowerField(handle: bigint, fieldId: number, scope: number): number {
    const { fns, field } = this;
    if (!fns.getFields) return CALL_UNAVAILABLE;
    field.fill(0);
    field.writeUInt32LE(fieldId, 0);
    field.writeUInt32LE(scope, 4);
    const code = fns.getFields(handle, 1, field);
    if (code !== NVML_SUCCESS) return code;
    const valueRc = field.readInt32LE(28);
    if (valueRc !== NVML_SUCCESS) return valueRc;
    this.value = fieldValue(field) / 1000; // mW → W
    return Number.isFinite(this.value) ? NVML_SUCCESS : CALL_UNAVAILABLE;
  }
}

function cString(buf: Buffer): string {
  const end = buf.indexOf(0);
  return buf.toString('utf8', 0, end < 0 ? buf.length : end);
}

/** Decodes nvmlFieldValue_t.value according to its valueType. */
function fieldValue(field: Buffer): number {
  switch (field.readInt32LE(24)) {
    case 0: return field.readDoubleLE(32);
    case 1: return field.readUInt32LE(32);
    case 2:
    case 3: return field.readUInt32LE(32) + field.readUInt32LE(36) * 4294967296;
    case 4: return Number(field.readBigInt64LE(32));
    case 5: return field.readInt32LE(32);
    case 6: return field.readUInt16LE(32);
    default: return Number.NaN;
  }
}
