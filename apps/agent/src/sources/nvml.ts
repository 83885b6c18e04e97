import type { SampleSink } from '../samples';
import { sensorName, type Component, type Quantity, type SensorInfo } from '../wire';
import type { SensorScope } from '@erg/spec/sensors';
import { StateCadence, STATE_PERIOD_MS, STATE_QUANTITIES } from './state-cadence';
import {
  CALL_UNAVAILABLE,
  NVML_ERROR_GPU_IS_LOST,
  NVML_ERROR_NOT_SUPPORTED,
  NVML_FI_DEV_ENERGY,
  NVML_PCIE_UTIL_RX_BYTES,
  NVML_PCIE_UTIL_TX_BYTES,
  NVML_SUCCESS,
  NVML_POWER_SCOPE_GPU,
  NVML_POWER_SCOPE_MODULE,
  nvmlReturnName,
  openNvml,
  type FieldResult,
  type NvmlLibrary,
  type ReadKind,
} from './nvml-library';
import { driverBranch } from '@erg/spec/driver-floors';
import { describeC2c, describeNvlink, emptyLinks, NvmlLinks, type LinkGpus } from './nvml-links';
import { declarableMs, probeUpdatePeriods, type UpdateProbe } from './sensor-timing';
import type { DetectContext, GpuStackIdentity, Source } from './types';

// NVIDIA GPUs through NVML (nvml-library.ts: koffi, the calls, their units). detectNvml opens the
// library, asks every GPU for every sensor once (describeGpus: a sensor exists where the call
// answered) and returns NvmlSource, which reads them each cycle — the state sensors (power limit,
// application clock, temperature, clock-event reasons) at most once a second (state-cadence.ts).
// It also names the GPUs and the driver for the node's fingerprint (identity()). Each sensor says
// its timing where it is known: nvmlDeviceGetPowerUsage's 1 s averaging (powerUsageAveragingMs)
// and how often each energy counter changes, measured at detection (probeEnergyUpdates).
// Data movement: PCIe here (nvmlDeviceGetPcieThroughput); NVLink and NVLink-C2C traffic in
// nvml-links.ts, which describeGpus asks after each GPU's own sensors and NvmlSource reads each cycle.

export { nvmlReturnName } from './nvml-library';

/** One sensor read with one call on one GPU. */
interface Reader {
  kind: ReadKind;
  gpu: number;
  handle: bigint;
  /** Index in the source's sensors; -1 once the sensor was dropped. */
  local: number;
  errors: number;
  /** A state sensor: read at most once a second. */
  state: boolean;
}

/** A GPU's two PCIe counters (sensors `tx` and `rx`) and the buffers their asynchronous calls write. */
interface PcieGpu {
  gpu: number;
  handle: bigint;
  tx: number;
  rx: number;
  txBuf: Buffer;
  rxBuf: Buffer;
}

/** One sensor a GPU may offer: the call that reads it, and the sensor's name parts (its component is its scope). */
type Kind = [ReadKind, Component, Quantity, SensorInfo['unit']];

/** The state in force on every GPU: what a power-state study must be able to show was set (read at most once a second). */
const STATE_KINDS: Kind[] = [
  ['power_limit', 'gpu', 'power_limit', 'W'],
  ['clock_app', 'gpu', 'clock_app', 'MHz'],
  ['temp', 'gpu', 'temp', '°C'],
  ['clock_events', 'gpu', 'clock_events', 'bitmask'],
];

/**
 * Where a call fails, the call tried instead: the GPU-scope power field → nvmlDeviceGetPowerUsage
 * (whose scope a superchip leaves unknown: describeGpus), and NVML 13's replacements for the
 * calls it deprecates → those calls, for drivers before the replacements (nvmlDeviceGetClock has
 * the applications clock target since NVML 11; nvmlDeviceGetTemperatureV is in nvml.h from 12.8).
 */
const FALLBACK: Partial<Record<ReadKind, ReadKind>> = { gpu_power: 'power', clock_app: 'clock_app_legacy', temp: 'temp_legacy' };
/** The NVML call behind each kind that has a fallback, for meta.json. */
const CALL_NAMES: Partial<Record<ReadKind, string>> = {
  clock_app: 'nvmlDeviceGetClock(APP_CLOCK_TARGET)',
  clock_app_legacy: 'nvmlDeviceGetApplicationsClock',
  temp: 'nvmlDeviceGetTemperatureV',
  temp_legacy: 'nvmlDeviceGetTemperature',
};

/** What a discrete GPU may offer, in sensor order; PCIe (two counters, one call each) comes after these. */
const DISCRETE_KINDS: Kind[] = [
  ['power', 'gpu', 'power', 'W'],
  ['energy', 'gpu', 'energy', 'J'],
  ['clock', 'gpu', 'clock', 'MHz'],
  ['util', 'gpu', 'util', '%'],
  ['mem_used', 'gpu', 'mem_used', 'B'],
  ['module_power', 'module', 'power', 'W'],
  ...STATE_KINDS,
];

/**
 * What a C2C superchip (GH200) may offer. Its NVML energy counter counts the whole module — GPU,
 * Grace and memory — so it is `moduleN.energy`; the GPU's own power is the GPU-scope power field
 * (its energy is that power integrated). Naming the counter `gpuN.energy` would put the module's
 * energy into the GPU's column of every breakdown.
 */
const SUPERCHIP_KINDS: Kind[] = [
  ['gpu_power', 'gpu', 'power', 'W'],
  ['energy', 'module', 'energy', 'J'],
  ['clock', 'gpu', 'clock', 'MHz'],
  ['util', 'gpu', 'util', '%'],
  ['mem_used', 'gpu', 'mem_used', 'B'],
  ['module_power', 'module', 'power', 'W'],
  ...STATE_KINDS,
  // The module's cap (GPU + Grace + memory), which a superchip enforces beside the GPU's own limit.
  ['module_power_limit', 'module', 'power_limit', 'W'],
];

/** Device names of NVLink-C2C superchips, for libraries without nvmlDeviceGetC2cModeInfoV. */
const SUPERCHIP_NAME = /\b(GH200|GB200|GB300|GB10)\b|Grace/i;

type SuperchipFrom = 'nvmlDeviceGetC2cModeInfoV' | 'name';

/**
 * Whether a GPU is a C2C superchip, and how erg knows. nvmlDeviceGetC2cModeInfoV has three
 * answers: NOT_SUPPORTED (no C2C: discrete), SUCCESS with isC2cEnabled 1 (a superchip), and
 * SUCCESS with isC2cEnabled 0 — a C2C device whose link is not in use; a device named as a
 * superchip stays one then (its module sensors do not depend on the link), with a note. Without
 * the call (before NVML 12.3 / R545), the name decides.
 */
function superchipOf(nvml: NvmlLibrary, handle: bigint, name: string | null, gpu: number, notes: string[]): { superchip: boolean; superchipFrom: SuperchipFrom } {
  const c2c = nvml.c2cMode(handle);
  const named = name !== null && SUPERCHIP_NAME.test(name);
  if (c2c === 'enabled') return { superchip: true, superchipFrom: 'nvmlDeviceGetC2cModeInfoV' };
  if (c2c === 'disabled' && named) {
    notes.push(`gpu${gpu}: nvmlDeviceGetC2cModeInfoV says C2C is not enabled (isC2cEnabled 0) on "${name}"; treated as a superchip by its name`);
    return { superchip: true, superchipFrom: 'name' };
  }
  if (c2c !== null) return { superchip: false, superchipFrom: 'nvmlDeviceGetC2cModeInfoV' };
  return { superchip: named, superchipFrom: 'name' };
}

/** What the energy counter (nvmlDeviceGetTotalEnergyConsumption) covers, and how erg knows. */
interface EnergyScope {
  component: 'gpu' | 'module';
  from: 'NVML_FI_DEV_ENERGY' | SuperchipFrom;
}

/**
 * The counter's scope: where the driver answers NVML_FI_DEV_ENERGY (field 191, mJ) at power scope
 * 0 (GPU) or 1 (module), the scope whose value is the counter's (read just before, so within
 * ENERGY_MATCH of it) — once, at detection. Where neither scope answers, or both alike, the
 * superchip test decides (a superchip's counter is the module's, as Zeus records for GH200).
 */
function energyScopeOf(nvml: NvmlLibrary, handle: bigint, gpu: number, chip: { superchip: boolean; superchipFrom: SuperchipFrom }, notes: string[]): EnergyScope {
  const assumed: EnergyScope = { component: chip.superchip ? 'module' : 'gpu', from: chip.superchipFrom };
  if (nvml.read('energy', handle) !== NVML_SUCCESS) return assumed;
  const counterJ = nvml.value;
  const out: FieldResult[] = [];
  if (nvml.readFields(handle, [[NVML_FI_DEV_ENERGY, NVML_POWER_SCOPE_GPU], [NVML_FI_DEV_ENERGY, NVML_POWER_SCOPE_MODULE]], out) !== NVML_SUCCESS) return assumed;
  const matches = (r: FieldResult | undefined) => r !== undefined && r.code === NVML_SUCCESS && Math.abs(r.value / 1000 - counterJ) <= Math.max(ENERGY_MATCH_J, ENERGY_MATCH_SHARE * counterJ);
  const [gpuScope, moduleScope] = [matches(out[0]), matches(out[1])];
  if (gpuScope !== moduleScope) return { component: gpuScope ? 'gpu' : 'module', from: 'NVML_FI_DEV_ENERGY' };
  const answered = out.filter((r) => r.code === NVML_SUCCESS).length;
  notes.push(
    `gpu${gpu}.energy: NVML_FI_DEV_ENERGY ${answered === 0 ? `answered at neither power scope (${nvmlReturnName(out[0]?.code ?? CALL_UNAVAILABLE)})` : gpuScope ? 'answers the counter at both power scopes' : 'answers at no scope what the counter reads'}; ` +
      `its scope is taken from ${chip.superchipFrom === 'name' ? 'the device name' : 'nvmlDeviceGetC2cModeInfoV'}: ${assumed.component}`,
  );
  return assumed;
}
/** How far NVML_FI_DEV_ENERGY may be from the counter read just before it and still be the same counter: 1 J or 0.1 %. */
const ENERGY_MATCH_J = 1;
const ENERGY_MATCH_SHARE = 0.001;

/** The GPUs' sensors as found by one call each. */
interface NvmlGpus {
  sensors: SensorInfo[];
  readers: Reader[];
  pcie: PcieGpu[];
  /** NVLink and C2C (nvml-links.ts). */
  links: LinkGpus;
  devices: {
    index: number;
    name: string | null;
    superchip: boolean;
    superchipFrom: SuperchipFrom;
    /** What the energy counter covers and how erg knows (energyScopeOf). */
    energyScope: EnergyScope['component'];
    energyScopeFrom: EnergyScope['from'];
    computeCapability: string | null;
    /** The calls that answered where erg has a choice (FALLBACK), by quantity. */
    calls: Record<string, string>;
  }[];
  /** Every GPU NVML counts, named as far as it could be (nulls where a call failed). */
  identities: GpuStackIdentity['gpus'];
  /** Sensors (or GPUs) that did not answer, and NVML's reason. */
  unsupported: string[];
}

export function detectNvml(ctx: DetectContext): Source | null {
  const nvml = openNvml(ctx.config.nvmlLib);
  if (typeof nvml === 'string') {
    ctx.note(nvml);
    return null;
  }
  const driverVersion = nvml.driverVersion();
  const count = nvml.deviceCount();
  if (count === null) {
    ctx.note('nvmlDeviceGetCount_v2 failed');
    nvml.shutdown();
    return null;
  }
  const gpus = describeGpus(nvml, count, ctx.taken ?? new Set(), driverBranch(driverVersion));
  for (const u of gpus.unsupported) ctx.note(u);
  if (gpus.sensors.length === 0) {
    ctx.note(`NVML found ${count} GPU(s) but no sensor answered`);
    nvml.shutdown();
    return null;
  }
  const energyUpdates = probeEnergyUpdates(nvml, gpus);
  const { missing } = nvml;
  const details = {
    library: ctx.config.nvmlLib,
    driverVersion,
    gpuCount: count,
    devices: gpus.devices,
    clockEventsCall: nvml.clockEventsCall,
    stateEveryMs: Math.max(STATE_PERIOD_MS, ctx.config.intervalMs),
    links: { nvlink: gpus.links.nvlink.map((g) => g.gpu), c2c: gpus.links.c2c.map((g) => g.gpu) },
    ...(Object.keys(energyUpdates).length > 0 ? { energyUpdates } : {}),
    ...(gpus.unsupported.length > 0 ? { unsupported: gpus.unsupported } : {}),
    ...(missing.length > 0 ? { missingFunctions: missing } : {}),
  };
  const identity: GpuStackIdentity = { gpus: gpus.identities, driverVersion, cudaVersion: nvml.cudaVersion(), nvmlVersion: nvml.nvmlVersion() };
  return new NvmlSource(nvml, gpus, details, identity, new StateCadence(ctx.config.intervalMs));
}

/**
 * Calls every sensor of every GPU once: a sensor exists where the call answered. `skip`: sensors
 * an earlier source already provides (DCGM's link traffic), which NVML then does not read.
 */
function describeGpus(nvml: NvmlLibrary, count: number, skip: ReadonlySet<string>, branch: number | null): NvmlGpus {
  const found: NvmlGpus = { sensors: [], readers: [], pcie: [], links: emptyLinks(), devices: [], identities: [], unsupported: [] };
  const superchips: { gpu: number; handle: bigint }[] = [];
  const add = (component: Component, index: number, quantity: Quantity, unit: SensorInfo['unit'], averagingMs?: number, scope: SensorScope = component): number => {
    found.sensors.push({ sensor: sensorName(component, index, quantity), source: 'nvml', unit, scope, ...(averagingMs !== undefined ? { averagingMs } : {}) });
    return found.sensors.length - 1;
  };
  for (let gpu = 0; gpu < count; gpu += 1) {
    const device = nvml.deviceHandle(gpu);
    if ('code' in device) {
      found.unsupported.push(`gpu${gpu}: nvmlDeviceGetHandleByIndex_v2 ${nvmlReturnName(device.code)}`);
      found.identities.push({ index: gpu, name: null, uuid: null, vbios: null });
      continue;
    }
    const { handle } = device;
    const name = nvml.deviceName(handle);
    const chip = superchipOf(nvml, handle, name, gpu, found.unsupported);
    const energyScope = energyScopeOf(nvml, handle, gpu, chip, found.unsupported);
    const cc = nvml.computeCapability(handle);
    const calls: Record<string, string> = {};
    found.devices.push({ index: gpu, name, ...chip, energyScope: energyScope.component, energyScopeFrom: energyScope.from, computeCapability: cc ? `${cc.major}.${cc.minor}` : null, calls });
    found.identities.push({ index: gpu, name, uuid: nvml.deviceUuid(handle), vbios: nvml.vbiosVersion(handle) });
    for (const kind of chip.superchip ? SUPERCHIP_KINDS : DISCRETE_KINDS) {
      let [call, component, quantity, unit] = kind;
      if (call === 'energy') component = energyScope.component;
      let scope: SensorScope = component;
      let code = nvml.read(call, handle);
      const fallback = FALLBACK[call];
      if (fallback && code !== NVML_SUCCESS) {
        const why = code === CALL_UNAVAILABLE ? 'unavailable' : nvmlReturnName(code);
        call = fallback;
        code = nvml.read(call, handle);
        if (call === 'power') {
          // No GPU-scope field on this superchip. nvmlDeviceGetPowerUsage may then be the GPU's or
          // the whole module's (Zeus: GH200 does not support GPU-scope power): filed as gpuN.power
          // with scope `unknown`, which no figure adds or subtracts.
          scope = 'unknown';
          found.unsupported.push(`gpu${gpu}.power: GPU-scope power field ${why}; nvmlDeviceGetPowerUsage instead, whose scope (GPU or module) is unknown on a superchip: filed with scope unknown`);
        } else found.unsupported.push(`${sensorName(component, gpu, quantity)}: ${CALL_NAMES[kind[0]]} ${why}; ${CALL_NAMES[call]} instead`);
      }
      if (code === NVML_SUCCESS) {
        const averagingMs = call === 'power' ? powerUsageAveragingMs(cc) : undefined;
        const callName = CALL_NAMES[call];
        if (callName) calls[quantity] = callName;
        found.readers.push({ kind: call, gpu, handle, local: add(component, gpu, quantity, unit, averagingMs, scope), errors: 0, state: STATE_QUANTITIES.has(quantity) });
      } else found.unsupported.push(`${sensorName(component, gpu, quantity)}: ${code === CALL_UNAVAILABLE ? 'call unavailable' : nvmlReturnName(code)}`);
    }
    if (chip.superchip) superchips.push({ gpu, handle });
    if (nvml.hasPcie && !skip.has(sensorName('gpu', gpu, 'pcie_tx')) && !skip.has(sensorName('gpu', gpu, 'pcie_rx'))) {
      const txBuf = Buffer.alloc(8);
      const rxBuf = Buffer.alloc(8);
      const txRc = nvml.pcieThroughput(handle, NVML_PCIE_UTIL_TX_BYTES, txBuf);
      const rxRc = nvml.pcieThroughput(handle, NVML_PCIE_UTIL_RX_BYTES, rxBuf);
      if (txRc === NVML_SUCCESS && rxRc === NVML_SUCCESS) {
        found.pcie.push({ gpu, handle, txBuf, rxBuf, tx: add('gpu', gpu, 'pcie_tx', 'B/s'), rx: add('gpu', gpu, 'pcie_rx', 'B/s') });
      } else {
        found.unsupported.push(`gpu${gpu}.pcie_tx/rx: ${nvmlReturnName(txRc === NVML_SUCCESS ? rxRc : txRc)}`);
      }
    }
    describeNvlink(nvml, gpu, handle, add, found.unsupported, found.links, skip);
  }
  // After every GPU's own sensors: the C2C probe waits once for all of them.
  describeC2c(nvml, superchips, add, found.unsupported, found.links, skip, branch);
  return found;
}

/**
 * The window nvmlDeviceGetPowerUsage averages over (ms), from the GPU's compute capability: nvml.h
 * says "On Ampere (except GA100) or newer GPUs, the API returns power averaged over 1 sec interval.
 * On GA100 and older architectures, instantaneous power is returned." GA100 is compute capability
 * 8.0, the other Ampere chips 8.6 and 8.7, Ada 8.9, Hopper 9.0, Blackwell 10.0 and up. Undefined
 * (instantaneous, or unknown without the call): the sensor declares no averaging. The power
 * fields erg reads otherwise (NVML_FI_DEV_POWER_INSTANT, GPU and module scope) are instantaneous.
 */
export function powerUsageAveragingMs(cc: { major: number; minor: number } | null): number | undefined {
  if (!cc) return undefined;
  return cc.major > 8 || (cc.major === 8 && cc.minor > 0) ? 1000 : undefined;
}

/**
 * Measures how often each energy counter changes on the GPU's own clock (NVML documents no period;
 * ~20–100 ms is what tools observe) and declares it as the sensor's updateMs: a reading trails its
 * timestamp by half of it on average. What the probe saw goes into meta.json either way; a counter
 * that changed too seldom, or at every read (faster than the probe resolves), declares none.
 */
function probeEnergyUpdates(nvml: NvmlLibrary, gpus: NvmlGpus): Record<string, UpdateProbe> {
  const counters = gpus.readers.filter((r) => r.kind === 'energy');
  if (counters.length === 0) return {};
  const seen = probeUpdatePeriods(counters.map((r) => () => (nvml.read('energy', r.handle) === NVML_SUCCESS ? nvml.value : Number.NaN)));
  const out: Record<string, UpdateProbe> = {};
  counters.forEach((r, i) => {
    const info = gpus.sensors[r.local] as SensorInfo;
    const probe = seen[i] as UpdateProbe;
    const updateMs = probe.updateMs === null ? undefined : declarableMs(probe.updateMs);
    if (updateMs !== undefined) info.updateMs = updateMs;
    out[info.sensor] = probe;
  });
  return out;
}

/** Reads the GPUs' sensors each cycle; PCIe in rounds on koffi's worker threads. */
class NvmlSource implements Source {
  readonly name = 'nvml';
  readonly sensors: readonly SensorInfo[];
  private readonly readers: Reader[];
  private readonly pcie: PcieGpu[];
  private readonly links: NvmlLinks;
  /** Calls that failed with an error other than the sensor going away. */
  private errors = 0;
  /** The sink of the latest cycle, for PCIe values that arrive after it. */
  private lastSink: SampleSink | undefined;
  /** PCIe calls of the current round not yet returned. */
  private pcieInFlight = 0;
  private stopped = false;

  constructor(
    private readonly nvml: NvmlLibrary,
    gpus: NvmlGpus,
    readonly details: Record<string, unknown>,
    private readonly gpuStack: GpuStackIdentity,
    private readonly stateCadence: StateCadence,
  ) {
    this.sensors = gpus.sensors;
    this.readers = gpus.readers;
    this.pcie = gpus.pcie;
    this.links = new NvmlLinks(nvml, gpus.links);
  }

  read(t: number, sink: SampleSink): void {
    this.lastSink = sink;
    this.readSensors(t, sink);
    this.links.read(t, sink);
    this.startPcieRound(t);
  }

  stats(): Record<string, unknown> {
    return { errors: this.errors + this.links.errors };
  }

  identity(): GpuStackIdentity {
    return this.gpuStack;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    // Let in-flight PCIe calls return before the library is shut down.
    for (let i = 0; i < 50 && this.pcieInFlight > 0; i += 1) await new Promise((r) => setTimeout(r, 10));
    if (this.pcieInFlight === 0) {
      this.links.stop();
      this.nvml.shutdown();
    }
  }

  private readSensors(t: number, sink: SampleSink): void {
    const { nvml, readers } = this;
    const stateDue = this.stateCadence.due(t);
    for (let i = 0; i < readers.length; i += 1) {
      const r = readers[i] as Reader;
      if (r.local < 0 || (r.state && !stateDue)) continue;
      const code = nvml.read(r.kind, r.handle);
      if (code === NVML_SUCCESS) sink.push(r.local, t, nvml.value);
      else if (code === NVML_ERROR_NOT_SUPPORTED || code === NVML_ERROR_GPU_IS_LOST) {
        sink.drop(r.local, nvmlReturnName(code));
        r.local = -1;
      } else {
        r.errors += 1;
        this.errors += 1;
      }
    }
  }

  /**
   * nvmlDeviceGetPcieThroughput measures over 20 ms and blocks that long, so it runs on koffi's
   * worker threads; a new round starts only when the last one finished (at high sampling rates
   * PCIe is therefore sampled less often than the other sensors). Each value carries the time of
   * the cycle that started its measurement.
   */
  private startPcieRound(t: number): void {
    if (this.pcieInFlight !== 0 || !this.nvml.hasPcie) return;
    for (const p of this.pcie) {
      this.pcieInFlight += 2;
      this.nvml.pcieThroughputAsync(p.handle, NVML_PCIE_UTIL_TX_BYTES, p.txBuf, this.pcieDone(t, p.tx, p.txBuf));
      this.nvml.pcieThroughputAsync(p.handle, NVML_PCIE_UTIL_RX_BYTES, p.rxBuf, this.pcieDone(t, p.rx, p.rxBuf));
    }
  }

  private pcieDone(t: number, local: number, buf: Buffer): (err: unknown, code: number) => void {
    return (err, code) => {
      this.pcieInFlight -= 1;
      if (this.stopped || !this.lastSink) return;
      if (err || code !== NVML_SUCCESS) {
        if (code === NVML_ERROR_NOT_SUPPORTED) this.lastSink.drop(local, 'NOT_SUPPORTED');
        else this.errors += 1;
        return;
      }
      this.lastSink.push(local, t, buf.readUInt32LE(0) * 1000); // KB/s → B/s
    };
  }
}
