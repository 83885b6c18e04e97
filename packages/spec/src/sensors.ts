/**
 * Sensors and the telemetry wire format, without zod: the names, units and sources every sensor
 * uses, and the plain types of a batch. The agent's bundle imports this module as
 * `@erg/spec/sensors` (it cannot carry zod's RSS on compute nodes); telemetry.ts builds the
 * API's zod schemas from the same constants, so the agent and the API cannot drift apart.
 *
 * - sensor: one measured quantity on one node, named `<component><index>.<quantity>`, e.g.
 *   `gpu0.power`, `module0.power`, `cpu0.energy`, `node0.mem_used`.
 * - sample: one reading (t, v) of one sensor; t in Unix milliseconds (fractions allowed), v in
 *   the quantity's unit.
 * - batch: the samples one node collected during one batch window, columnar per sensor,
 *   numbered by `seq` = 0, 1, 2, … per node and run.
 * - mark: a phase boundary or a step the workload wrote to `<node>.marks` (marks.ts), carried by
 *   the next batch; identified by its line's byte offset in that file.
 */
import type { BatchMark } from './marks';
import type { NodeFingerprint, PowerRecord } from './node-info';

/**
 * The physical things a sensor can measure. `ib` is one InfiniBand (or RoCE) port, `nic` one
 * network interface; their indices are the agent's numbering on its node (its meta.json names
 * each: `ib0` = mlx5_0 port 1, `nic0` = hsn0), not the kernel's.
 */
export const COMPONENTS = ['gpu', 'cpu', 'grace', 'module', 'memory', 'sysio', 'node', 'ib', 'nic'] as const;
export type Component = (typeof COMPONENTS)[number];

/**
 * What a sensor may say it covers: a component, or `unknown` where its source cannot tell — NVML's
 * nvmlDeviceGetPowerUsage on a superchip whose GPU-scope power field failed may be the GPU's or
 * the whole module's (Zeus records that GH200 does not support GPU-scope power). Results never add
 * or subtract an `unknown` reading.
 */
export const SENSOR_SCOPES = [...COMPONENTS, 'unknown'] as const;
export type SensorScope = (typeof SENSOR_SCOPES)[number];

/**
 * The floors below which a GPU's NVLink-C2C traffic cannot be read (NVML's GPM metrics 100/101 from
 * R575, DCGM's 1076/1078 from 4.1.0): owned by driver-floors.ts with every other floor. The agent's
 * notes and a run's data-movement warnings quote C2C_FLOOR.
 */
export { C2C_FLOOR, C2C_MIN_DRIVER_BRANCH } from './driver-floors';

/** Every quantity with its unit and the values a sane sensor can report. `energy` is a monotonic hardware counter (it may wrap at `wrapAt`). */
export const QUANTITIES = {
  power: { unit: 'W', min: 0, max: 100_000 },
  energy: { unit: 'J', min: 0, max: Number.MAX_SAFE_INTEGER },
  util: { unit: '%', min: 0, max: 100 },
  clock: { unit: 'MHz', min: 0, max: 100_000 },
  mem_used: { unit: 'B', min: 0, max: 2 ** 60 },
  pcie_tx: { unit: 'B/s', min: 0, max: 2 ** 50 },
  pcie_rx: { unit: 'B/s', min: 0, max: 2 ** 50 },
  c2c_tx: { unit: 'B/s', min: 0, max: 2 ** 50 },
  c2c_rx: { unit: 'B/s', min: 0, max: 2 ** 50 },
  /** NVLink traffic out of (tx) / into (rx) the GPU, all its links together. */
  nvlink_tx: { unit: 'B/s', min: 0, max: 2 ** 50 },
  nvlink_rx: { unit: 'B/s', min: 0, max: 2 ** 50 },
  /** Host memory traffic: reads, writes, or both together where the interface does not tell them apart (resctrl's mbm_total_bytes). */
  mem_read: { unit: 'B/s', min: 0, max: 2 ** 50 },
  mem_write: { unit: 'B/s', min: 0, max: 2 ** 50 },
  mem_traffic: { unit: 'B/s', min: 0, max: 2 ** 50 },
  /** InfiniBand/RoCE port traffic sent (tx) and received (rx): the port's data counters (sources/infiniband.ts). */
  ib_tx: { unit: 'B/s', min: 0, max: 2 ** 50 },
  ib_rx: { unit: 'B/s', min: 0, max: 2 ** 50 },
  /** A network interface's traffic sent (tx) and received (rx): the kernel's tx_bytes/rx_bytes (sources/net.ts). */
  net_tx: { unit: 'B/s', min: 0, max: 2 ** 50 },
  net_rx: { unit: 'B/s', min: 0, max: 2 ** 50 },
  // The state the hardware was in (issue 13 §3): what a power-state study must be able to defend.
  /** The power limit in force (NVML's enforced limit: the lowest of every limit set, in- or out-of-band). */
  power_limit: { unit: 'W', min: 0, max: 100_000 },
  /** The applications (target) graphics clock; `clock` is the SM clock actually running. */
  clock_app: { unit: 'MHz', min: 0, max: 100_000 },
  temp: { unit: '°C', min: -60, max: 250 },
  /** Why clocks are held down, as NVML's clocks-event-reasons bitmask (CLOCK_EVENT_REASONS). */
  clock_events: { unit: 'bitmask', min: 0, max: Number.MAX_SAFE_INTEGER },
} as const;
export type Quantity = keyof typeof QUANTITIES;
export type Unit = (typeof QUANTITIES)[Quantity]['unit'];

/**
 * Data movement (issue 15 §3, issue 28 §3): the kinds of link erg integrates bytes over, and the
 * direction of each rate quantity. tx/rx are the device's view (tx leaves the GPU: device-to-host
 * over PCIe; tx leaves the node over a network port); `total` is a link's traffic where the
 * interface does not split it (reads and writes together). `infiniband` is RDMA-capable ports'
 * own counters (IB, RoCE, EFA: RDMA traffic included); `network` is the kernel's network
 * interfaces (Ethernet, IPoIB, Slingshot's hsn*: what passes through the kernel's stack).
 */
export const LINK_KINDS = ['pcie', 'nvlink', 'c2c', 'memory', 'infiniband', 'network'] as const;
export type LinkKind = (typeof LINK_KINDS)[number];
export const TRANSFER_DIRECTIONS = ['tx', 'rx', 'read', 'write', 'total'] as const;
export type TransferDirection = (typeof TRANSFER_DIRECTIONS)[number];
/** Every data-movement quantity (all in B/s): which link it measures, in which direction. */
export const DATA_MOVEMENT_QUANTITIES = {
  pcie_tx: { link: 'pcie', direction: 'tx' },
  pcie_rx: { link: 'pcie', direction: 'rx' },
  nvlink_tx: { link: 'nvlink', direction: 'tx' },
  nvlink_rx: { link: 'nvlink', direction: 'rx' },
  c2c_tx: { link: 'c2c', direction: 'tx' },
  c2c_rx: { link: 'c2c', direction: 'rx' },
  mem_read: { link: 'memory', direction: 'read' },
  mem_write: { link: 'memory', direction: 'write' },
  mem_traffic: { link: 'memory', direction: 'total' },
  ib_tx: { link: 'infiniband', direction: 'tx' },
  ib_rx: { link: 'infiniband', direction: 'rx' },
  net_tx: { link: 'network', direction: 'tx' },
  net_rx: { link: 'network', direction: 'rx' },
} as const satisfies Partial<Record<Quantity, { link: LinkKind; direction: TransferDirection }>>;
export type DataMovementQuantity = keyof typeof DATA_MOVEMENT_QUANTITIES;

/**
 * The directions whose bytes a link's (and a kind's) `bytes` adds up; the others are shown per
 * direction only. Inter-node links count what was sent: a byte one node sends to another is its
 * tx and the other's rx, so adding both over a run's nodes would count every byte between them
 * twice (and a one-node run's traffic once). Sent bytes summed over nodes are each inter-node
 * byte once, whatever the number of nodes, and traffic leaving the job (to storage, say) once;
 * what the nodes received from outside the job is in `byDirection.rx`, not in `bytes`. Kinds not
 * listed add every direction they measure: the traffic through each device's port (NVLink between
 * two GPUs of a node is counted at both GPUs).
 */
export const COUNTED_DIRECTIONS: Partial<Record<LinkKind, readonly TransferDirection[]>> = {
  infiniband: ['tx'],
  network: ['tx'],
};

/**
 * A network interface the agent's net source may be told to read (`--net-interfaces`,
 * a campaign's `telemetry.netInterfaces`): a name as the kernel allows it (dev_valid_name: at most
 * 15 bytes, no '/', ':' or white space; erg also refuses ',' and '*' inside), or a prefix ending
 * in '*' (`hsn*`). It reaches the agent's command line, so nothing a shell would read is allowed.
 */
export const NET_INTERFACE = /^[A-Za-z0-9_.@+-]{1,15}\*?$/;

/**
 * The bits of NVML's clocks-event (formerly "throttle") reasons (nvmlClocksEventReason*): a
 * `gpuN.clock_events` sample is their OR. THROTTLING_REASONS are those that mean the GPU ran
 * slower than asked because of power or heat; the others are idling or settings.
 */
export const CLOCK_EVENT_REASONS = {
  gpu_idle: 0x1,
  applications_clocks_setting: 0x2,
  sw_power_cap: 0x4,
  hw_slowdown: 0x8,
  sync_boost: 0x10,
  sw_thermal_slowdown: 0x20,
  hw_thermal_slowdown: 0x40,
  hw_power_brake_slowdown: 0x80,
  display_clock_setting: 0x100,
} as const;
export type ClockEventReason = keyof typeof CLOCK_EVENT_REASONS;
export const THROTTLING_REASONS: readonly ClockEventReason[] = ['sw_power_cap', 'hw_slowdown', 'sw_thermal_slowdown', 'hw_thermal_slowdown', 'hw_power_brake_slowdown'];

/** The reasons set in a clocks-event bitmask, by name. */
export function clockEventReasons(mask: number): ClockEventReason[] {
  const out: ClockEventReason[] = [];
  for (const [name, bit] of Object.entries(CLOCK_EVENT_REASONS)) if (Math.floor(mask / bit) % 2 === 1) out.push(name as ClockEventReason);
  return out;
}

/** A valid sensor name: a known component, a 1–3 digit index, a known quantity. */
export const SENSOR_NAME = new RegExp(`^(${COMPONENTS.join('|')})(\\d{1,3})\\.(${Object.keys(QUANTITIES).join('|')})$`);

/** The quantity of a valid sensor name; null for any other string. */
export function quantityOf(sensor: string): Quantity | null {
  const m = SENSOR_NAME.exec(sensor);
  return m ? (m[3] as Quantity) : null;
}

/** The component of a valid sensor name; null for any other string. */
export function componentOf(sensor: string): Component | null {
  const m = SENSOR_NAME.exec(sensor);
  return m ? (m[1] as Component) : null;
}

/** Builds a sensor name from its parts. */
export function sensorName(component: Component, index: number, quantity: Quantity): string {
  return `${component}${index}.${quantity}`;
}

/** Where a sensor's values come from; `model` marks an estimate, not a measurement; `import` marks values measured elsewhere and imported. */
export const SENSOR_SOURCES = ['nvml', 'nvidia-smi', 'dcgm', 'hwmon', 'rapl', 'resctrl', 'perf', 'infiniband', 'net', 'procfs', 'model', 'import'] as const;
export type SensorSource = (typeof SENSOR_SOURCES)[number];

/** What a batch says about one sensor (on the first batch of an agent process, and whenever its sensor set changes). */
export interface SensorInfo {
  /** `<component><index>.<quantity>` */
  sensor: string;
  source: SensorSource;
  unit: Unit;
  /**
   * What the reading covers, stated by the source that knows it: `gpu` the GPU alone, `module` a
   * whole superchip (on GH200: GPU + Grace + memory — NVML's energy counter there), `grace` /
   * `cpu` / `sysio` / `memory` those parts, `node` the whole node. A sensor's name begins with its
   * scope (the agent names a GH200's counter `moduleN.energy`, never `gpuN.energy`); results read
   * the scope, so a figure never mixes one scope into another's term. `unknown`: the source could
   * not tell (SENSOR_SCOPES); no figure counts the reading.
   */
  scope?: SensorScope;
  /** Counters only: the value (in `unit`) at which the raw counter wraps back to 0. */
  wrapAt?: number;
  /**
   * Power sensors whose reading is a mean: the averaging window (ms) that ends at the reading's
   * timestamp, as the source knows it (hwmon: `power1_average_interval` read from sysfs; NVML's
   * nvmlDeviceGetPowerUsage: 1000 ms on Ampere, except GA100, and newer, per nvml.h). Absent: the
   * source does not know, or the reading is instantaneous. At most MAX_SENSOR_TIMING_MS.
   */
  averagingMs?: number;
  /**
   * Counters only: how often (ms) the value changes on the device's own clock, as the agent
   * measured it (the median spacing of value changes in a short probe at start-up): a reading
   * trails its timestamp by half of it on average. Absent: not measured. At most MAX_SENSOR_TIMING_MS.
   */
  updateMs?: number;
}

/**
 * The widest range a counter may declare (`wrapAt`, J): a 64-bit count of µJ, the widest any
 * kernel interface reports (powercap's max_energy_range_uj, hwmon's energy*_input; the agent
 * divides by 1e6 exactly so). A decrease of a counter is read as one wrap past its range, so a
 * range beyond any counter's (1e308) made one decrease count as more energy than a double holds:
 * the stored energy was Infinity.
 */
export const MAX_WRAP_AT = 2 ** 64 / 1e6;

/** The longest averaging window or update period a sensor may declare (ms): one hour. */
export const MAX_SENSOR_TIMING_MS = 3_600_000;

/** All samples of one sensor in one batch; `t` (Unix ms, fractional) and `v` have equal length. */
export interface SampleColumn {
  sensor: string;
  t: number[];
  v: number[];
}

/** A batch as an agent sends it (the API also accepts single samples `{ sensor, t, v }` with numbers). */
export interface TelemetryBatchShape {
  node: string;
  seq: number;
  sensors?: SensorInfo[];
  samples: SampleColumn[];
  /** What exactly was measured (node-info.ts): sent with `sensors`, on an agent process's first batch. */
  fingerprint?: NodeFingerprint;
  /** The power state the node helper applied for the run, when the campaign asked for one: sent with the fingerprint. */
  power?: PowerRecord;
  /** Phase marks the workload wrote since the last batch (marks.ts), at most MAX_BATCH_MARKS; absent when there are none. */
  marks?: BatchMark[];
}

/** The API's answer to an accepted batch. */
export interface TelemetryAck {
  /** Samples stored. */
  accepted: number;
  /** This (node, seq) was stored before; nothing changed. */
  duplicate: boolean;
}

/**
 * The header an agent sends with each push: its wall clock (Unix ms, the clock its samples are
 * stamped with) when it sent the request. The API reads a clock offset from it (clockReading).
 */
export const SENT_AT_HEADER = 'x-erg-sent-at';

/** A reading further from the server's clock than this is no clock (seconds or µs sent for ms, a garbled header): ignored. */
export const MAX_CLOCK_READING_MS = 24 * 3_600_000;

const SENT_AT = /^\d{1,16}(\.\d{1,6})?$/;

/**
 * What one push says of its agent's clock: sentAt − receivedAt (ms), which is the agent's offset
 * from the server's clock less the request's one-way latency — a lower bound of the offset. The
 * largest over many pushes is the tightest: the offset lies in [that, that + the smallest latency].
 * Null when the header is absent, not a plain non-negative number, or further than
 * MAX_CLOCK_READING_MS from the server's clock: a reading that cannot be trusted is no reading,
 * and never costs the batch.
 */
export function clockReading(header: string | string[] | undefined, receivedAtMs: number): number | null {
  if (typeof header !== 'string' || !SENT_AT.test(header)) return null;
  const offset = Number(header) - receivedAtMs;
  return Number.isFinite(offset) && Math.abs(offset) <= MAX_CLOCK_READING_MS ? offset : null;
}
