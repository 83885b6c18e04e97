import type * as Koffi from 'koffi';
import type { SampleSink } from '../samples';
import { sensorName, type Component, type Quantity, type SensorInfo } from '../wire';
import type { DetectContext, Source } from './types';

// NVIDIA GPUs through NVML, called in-process with koffi (FFI). koffi has a native binary and is
// not bundled: where it cannot be required, or the library cannot be loaded, this source is
// simply absent (and nvidia-smi is tried instead). Every read goes through a few reused
// Buffers; no per-tick allocation beyond koffi's own.

const NVML_SUCCESS = 0;
const NVML_ERROR_NOT_SUPPORTED = 3;
const NVML_ERROR_GPU_IS_LOST = 15;
const NVML_CLOCK_SM = 1;
const NVML_PCIE_UTIL_TX_BYTES = 0;
const NVML_PCIE_UTIL_RX_BYTES = 1;
const NVML_FI_DEV_POWER_INSTANT = 186;
const NVML_SCOPE_MODULE = 1;
/** sizeof(nvmlFieldValue_t): fieldId, scopeId (u32), timestamp, latencyUsec (i64), valueType, nvmlReturn (i32), value (8-byte union). */
const FIELD_VALUE_SIZE = 40;

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

/** Loads koffi if it can be required; a string says why not. */
function loadKoffi(): typeof Koffi | string {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('koffi') as typeof Koffi;
  } catch (err) {
    return `koffi cannot be loaded (${(err as Error).message.split('\n')[0]}); install it beside the agent or point NODE_PATH at it`;
  }
}

/** How one sensor is read: which call, on which GPU. */
type ReadKind = 'power' | 'energy' | 'clock' | 'util' | 'mem_used' | 'module_power';
interface Reader {
  kind: ReadKind;
  gpu: number;
  handle: bigint;
  local: number;
  errors: number;
}
interface PcieGpu {
  gpu: number;
  handle: bigint;
  tx: number;
  rx: number;
  txBuf: Buffer;
  rxBuf: Buffer;
}

export function detectNvml(ctx: DetectContext): Source | null {
  const koffi = loadKoffi();
  if (typeof koffi === 'string') {
    ctx.note(koffi);
    return null;
  }
  let lib: Koffi.LibraryHandle;
  try {
    lib = koffi.load(ctx.config.nvmlLib);
  } catch (err) {
    ctx.note(`${ctx.config.nvmlLib}: ${(err as Error).message}`);
    return null;
  }
  const missing: string[] = [];
  const fn = (proto: string): NvmlFn | undefined => {
    try {
      return lib.func(proto) as unknown as NvmlFn;
    } catch {
      missing.push(/(\w+)\(/.exec(proto)?.[1] ?? proto);
      return undefined;
    }
  };
  const init = fn('int nvmlInit_v2()');
  const shutdown = fn('int nvmlShutdown()');
  const getDriverVersion = fn('int nvmlSystemGetDriverVersion(void *version, unsigned int length)');
  const getCount = fn('int nvmlDeviceGetCount_v2(void *count)');
  const getHandle = fn('int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void *device)');
  const getName = fn('int nvmlDeviceGetName(void *device, void *name, unsigned int length)');
  const getPower = fn('int nvmlDeviceGetPowerUsage(void *device, void *power)');
  const getEnergy = fn('int nvmlDeviceGetTotalEnergyConsumption(void *device, void *energy)');
  const getClock = fn('int nvmlDeviceGetClockInfo(void *device, int type, void *clock)');
  const getUtil = fn('int nvmlDeviceGetUtilizationRates(void *device, void *utilization)');
  const getMemory = fn('int nvmlDeviceGetMemoryInfo(void *device, void *memory)');
  const getPcie = fn('int nvmlDeviceGetPcieThroughput(void *device, int counter, void *value)');
  const getFields = fn('int nvmlDeviceGetFieldValues(void *device, int count, void *values)');
  if (!init || !getCount || !getHandle) {
    ctx.note(`${ctx.config.nvmlLib} lacks ${missing.join(', ')}`);
    lib.unload();
    return null;
  }
  const rc = init();
  if (rc !== NVML_SUCCESS) {
    ctx.note(`nvmlInit_v2: ${nvmlReturnName(rc)}`);
    lib.unload();
    return null;
  }

  const scratch = Buffer.alloc(128);
  const field = Buffer.alloc(FIELD_VALUE_SIZE);
  let driverVersion: string | null = null;
  if (getDriverVersion && getDriverVersion(scratch, 96) === NVML_SUCCESS) driverVersion = cString(scratch);
  if (getCount(scratch) !== NVML_SUCCESS) {
    ctx.note('nvmlDeviceGetCount_v2 failed');
    shutdown?.();
    return null;
  }
  const count = scratch.readUInt32LE(0);

  /** Reads one value with the call of `kind`; returns the NVML return code, the value in `out.value` (SI units). */
  const out = { value: 0 };
  const call = (kind: ReadKind, handle: bigint): number => {
    let code: number;
    switch (kind) {
      case 'power':
        code = getPower ? getPower(handle, scratch) : -1;
        out.value = scratch.readUInt32LE(0) / 1000; // mW → W
        return code;
      case 'energy':
        code = getEnergy ? getEnergy(handle, scratch) : -1;
        out.value = (scratch.readUInt32LE(0) + scratch.readUInt32LE(4) * 4294967296) / 1000; // mJ → J
        return code;
      case 'clock':
        code = getClock ? getClock(handle, NVML_CLOCK_SM, scratch) : -1;
        out.value = scratch.readUInt32LE(0); // MHz
        return code;
      case 'util':
        code = getUtil ? getUtil(handle, scratch) : -1;
        out.value = scratch.readUInt32LE(0); // nvmlUtilization_t.gpu, %
        return code;
      case 'mem_used':
        code = getMemory ? getMemory(handle, scratch) : -1;
        out.value = scratch.readUInt32LE(16) + scratch.readUInt32LE(20) * 4294967296; // nvmlMemory_t.used, bytes
        return code;
      case 'module_power': {
        if (!getFields) return -1;
        field.fill(0);
        field.writeUInt32LE(NVML_FI_DEV_POWER_INSTANT, 0);
        field.writeUInt32LE(NVML_SCOPE_MODULE, 4);
        code = getFields(handle, 1, field);
        if (code !== NVML_SUCCESS) return code;
        const valueRc = field.readInt32LE(28);
        if (valueRc !== NVML_SUCCESS) return valueRc;
        out.value = fieldValue(field) / 1000; // mW → W
        return Number.isFinite(out.value) ? NVML_SUCCESS : -1;
      }
    }
  };

  const sensors: SensorInfo[] = [];
  const readers: Reader[] = [];
  const pcie: PcieGpu[] = [];
  const devices: { index: number; name: string | null }[] = [];
  const unsupported: string[] = [];
  const add = (component: Component, index: number, quantity: Quantity, unit: SensorInfo['unit']): number => {
    sensors.push({ sensor: sensorName(component, index, quantity), source: 'nvml', unit });
    return sensors.length - 1;
  };
  const KINDS: [ReadKind, Component, Quantity, SensorInfo['unit']][] = [
    ['power', 'gpu', 'power', 'W'],
    ['energy', 'gpu', 'energy', 'J'],
    ['clock', 'gpu', 'clock', 'MHz'],
    ['util', 'gpu', 'util', '%'],
    ['mem_used', 'gpu', 'mem_used', 'B'],
    ['module_power', 'module', 'power', 'W'],
  ];
  for (let gpu = 0; gpu < count; gpu += 1) {
    scratch.fill(0);
    const hrc = getHandle(gpu, scratch);
    if (hrc !== NVML_SUCCESS) {
      unsupported.push(`gpu${gpu}: nvmlDeviceGetHandleByIndex_v2 ${nvmlReturnName(hrc)}`);
      continue;
    }
    const handle = scratch.readBigUInt64LE(0);
    let name: string | null = null;
    if (getName && getName(handle, scratch, 96) === NVML_SUCCESS) name = cString(scratch);
    devices.push({ index: gpu, name });
    for (const [kind, component, quantity, unit] of KINDS) {
      const code = call(kind, handle);
      if (code === NVML_SUCCESS) readers.push({ kind, gpu, handle, local: add(component, gpu, quantity, unit), errors: 0 });
      else unsupported.push(`${sensorName(component, gpu, quantity)}: ${code === -1 ? 'call unavailable' : nvmlReturnName(code)}`);
    }
    if (getPcie) {
      const txBuf = Buffer.alloc(8);
      const rxBuf = Buffer.alloc(8);
      const txRc = getPcie(handle, NVML_PCIE_UTIL_TX_BYTES, txBuf);
      const rxRc = getPcie(handle, NVML_PCIE_UTIL_RX_BYTES, rxBuf);
      if (txRc === NVML_SUCCESS && rxRc === NVML_SUCCESS) {
        pcie.push({ gpu, handle, txBuf, rxBuf, tx: add('gpu', gpu, 'pcie_tx', 'B/s'), rx: add('gpu', gpu, 'pcie_rx', 'B/s') });
      } else {
        unsupported.push(`gpu${gpu}.pcie_tx/rx: ${nvmlReturnName(txRc === NVML_SUCCESS ? rxRc : txRc)}`);
      }
    }
  }
  for (const u of unsupported) ctx.note(u);
  if (sensors.length === 0) {
    ctx.note(`NVML found ${count} GPU(s) but no sensor answered`);
    shutdown?.();
    return null;
  }

  let errors = 0;
  let lastSink: SampleSink | undefined;
  let pcieInFlight = 0;
  let stopped = false;
  const pcieDone = (t: number, local: number, buf: Buffer) => (err: unknown, code: number) => {
    pcieInFlight -= 1;
    if (stopped || !lastSink) return;
    if (err || code !== NVML_SUCCESS) {
      if (code === NVML_ERROR_NOT_SUPPORTED) lastSink.drop(local, 'NOT_SUPPORTED');
      else errors += 1;
      return;
    }
    lastSink.push(local, t, buf.readUInt32LE(0) * 1000); // KB/s → B/s
  };

  return {
    name: 'nvml',
    sensors,
    details: { library: ctx.config.nvmlLib, driverVersion, gpuCount: count, devices, ...(unsupported.length > 0 ? { unsupported } : {}), ...(missing.length > 0 ? { missingFunctions: missing } : {}) },
    read(t: number, sink: SampleSink) {
      lastSink = sink;
      for (let i = 0; i < readers.length; i += 1) {
        const r = readers[i] as Reader;
        if (r.local < 0) continue;
        const code = call(r.kind, r.handle);
        if (code === NVML_SUCCESS) sink.push(r.local, t, out.value);
        else if (code === NVML_ERROR_NOT_SUPPORTED || code === NVML_ERROR_GPU_IS_LOST) {
          sink.drop(r.local, nvmlReturnName(code));
          r.local = -1;
        } else {
          r.errors += 1;
          errors += 1;
        }
      }
      // nvmlDeviceGetPcieThroughput measures over 20 ms and blocks that long, so it runs on
      // koffi's worker threads; a new round starts only when the last one finished (at high
      // sampling rates PCIe is therefore sampled less often than the other sensors). Each value
      // carries the time of the cycle that started its measurement.
      if (pcieInFlight === 0 && getPcie) {
        for (const p of pcie) {
          pcieInFlight += 2;
          getPcie.async(p.handle, NVML_PCIE_UTIL_TX_BYTES, p.txBuf, pcieDone(t, p.tx, p.txBuf));
          getPcie.async(p.handle, NVML_PCIE_UTIL_RX_BYTES, p.rxBuf, pcieDone(t, p.rx, p.rxBuf));
        }
      }
    },
    stats: () => ({ errors }),
    async stop() {
      stopped = true;
      // Let in-flight PCIe calls return before the library is shut down.
      for (let i = 0; i < 50 && pcieInFlight > 0; i += 1) await new Promise((r) => setTimeout(r, 10));
      if (pcieInFlight === 0) shutdown?.();
    },
  };
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
