/**
 * Data movement joined to energy (issue 15 §3): the bytes each link moved over a run's window,
 * J per GB per kind of link, how much of the GPUs' busy time overlapped with transfers, and the
 * bytes of each phase beside its energy. The result type is the API's (RunDataMovement in
 * @erg/spec); the words are defined there.
 */
import { NODE_FILE_SUFFIXES, UNMARKED_PHASE, type GpuTransferOverlap, type LinkBytes, type LinkKindMovement, type PhaseDataMovement, type RunDataMovement, type RunPhases } from '@erg/spec';
import { C2C_FLOOR, COUNTED_DIRECTIONS, DATA_MOVEMENT_QUANTITIES, LINK_KINDS, type DataMovementQuantity, type LinkKind, type TransferDirection } from '@erg/spec/sensors';
import { EnergyInputError } from './errors';
import { nodeTimeline, type PhaseMarkInput } from './phase-timeline';
import { checkWindow, coverage, DEFAULT_GAP_FACTOR, usableSamples } from './sampling';
import { distinctNodes, parseSensorName, type NodeTelemetry, type SensorInfo, type Series, type Window } from './telemetry';

export type { GpuTransferOverlap, LinkBytes, LinkKindMovement, PhaseDataMovement, RunDataMovement, TransferOverlap } from '@erg/spec';

/**
 * A GPU is busy while its utilisation (`gpuN.util`: NVML's "percent of time over the past sample
 * period during which one or more kernels was executing") is above this: 10 % leaves out an idle
 * GPU woken by a stray kernel now and then and keeps any GPU that computes for real.
 */
export const BUSY_UTIL_PCT = 10;

/**
 * A GPU is transferring while its links (PCIe, NVLink, C2C, both directions) together move more
 * than this: 100 MB/s is about 0.2 % of one direction of PCIe 5.0 x16 and far less of NVLink or
 * NVLink-C2C, yet well above the kilobytes per second of a GPU nobody is feeding. Chosen, not measured.
 */
export const TRANSFER_RATE_BPS = 100e6;

/**
 * A link sensor covering less of the window than this is warned about: its bytes miss what moved
 * in the gaps (a dropped sensor — a saturated 32-bit InfiniBand counter — covers only the time
 * before it was dropped). 0.9 leaves the first reading's interval of a counter (no rate before
 * its second reading) and a late batch or two unremarked.
 */
export const LOW_COVERAGE = 0.9;

/** Bytes in a GB (decimal: link bandwidths are quoted in 10⁹ B/s). */
const GB = 1e9;

/** What computeRunDataMovement needs. */
export interface RunDataMovementInput {
  /** The workload's window, as the job script measured it. */
  window: Window;
  /** The same telemetry computeRunEnergy gets; only its B/s data-movement sensors and `gpuN.util` are read. */
  nodes: readonly NodeTelemetry[];
  /** The run's energy (computeRunEnergy's energyJ): what J per GB divides. */
  energyJ: number;
  /** The run's phase marks (as computeRunPhases gets them); none or absent: no per-phase bytes. */
  marks?: readonly PhaseMarkInput[];
  /** Energy per phase (computeRunPhases' result over the same window), put beside each phase's bytes. */
  phases?: RunPhases | null;
  /** Busy threshold, % (default BUSY_UTIL_PCT). */
  busyUtilPct?: number;
  /** Transfer threshold, B/s (default TRANSFER_RATE_BPS). */
  transferRateBps?: number;
  /** Gap threshold in median sampling intervals, for coverage (default 5). */
  gapFactor?: number;
}

/**
 * One rate sensor's readings as a cumulative byte curve. Every source erg reads reports a rate
 * that is the mean over the interval since its previous reading (counter differences — NVML's
 * NVLink and resctrl's byte counters —, NVML GPM and DCGM's profiling rates over their sample
 * period), so each reading's rate holds over the interval before it: the bytes between two
 * readings are exactly rate × interval. Nothing is counted before the first reading (its interval
 * is unknown) or after the last.
 */
interface RateCurve {
  sensor: string;
  quantity: DataMovementQuantity;
  /** Usable readings, time-sorted. */
  t: Float64Array;
  v: Float64Array;
  /** Bytes from the first reading to `x`. */
  bytesAt(x: number): number;
}

function rateCurve(series: Series, quantity: DataMovementQuantity): RateCurve {
  const { t, v } = usableSamples(series.t, series.v, series.sensor);
  const n = t.length;
  const cum = new Float64Array(n);
  for (let i = 1; i < n; i++) cum[i] = cum[i - 1]! + (v[i]! * (t[i]! - t[i - 1]!)) / 1000;
  // Reading the curve at increasing times (segments, the window's edges) walks forward from the last index.
  let at = 0;
  const bytesAt = (x: number): number => {
    if (n === 0 || x <= t[0]!) return 0;
    if (x >= t[n - 1]!) return cum[n - 1]!;
    if (t[at]! > x) at = 0;
    while (at + 1 < n && t[at + 1]! <= x) at++;
    return cum[at]! + (v[at + 1]! * (x - t[at]!)) / 1000;
  };
  return { sensor: series.sensor, quantity, t, v, bytesAt };
}

/** One link of one node as it is being measured: its sensors' curves and which directions count. */
interface Link {
  node: string;
  device: string;
  kind: LinkKind;
  curves: RateCurve[];
  /** Directions shown per direction (memory: read and write where measured, else total). */
  shown: Set<TransferDirection>;
  /** Of those, the directions that add up to the link's bytes (COUNTED_DIRECTIONS: sent only over the network). */
  counted: Set<TransferDirection>;
  sensors: string[];
  sources: Set<string>;
  coverage: number;
}

const direction = (q: DataMovementQuantity): TransferDirection => DATA_MOVEMENT_QUANTITIES[q].direction;

function isDataMovement(quantity: string): quantity is DataMovementQuantity {
  return Object.hasOwn(DATA_MOVEMENT_QUANTITIES, quantity);
}

/**
 * A run's data movement over its window, from the nodes' B/s sensors (`<device>.<kind>_<direction>`:
 * DATA_MOVEMENT_QUANTITIES); null when no node has any such sensor.
 *
 * - Bytes per link and direction: each rate series integrated over the window as a step function
 *   (RateCurve: a reading's rate holds over the interval before it). A link's bytes add its
 *   counted directions (COUNTED_DIRECTIONS): host memory adds read and write where they are
 *   measured, else its total, never both; InfiniBand ports and network interfaces count what they
 *   sent (tx), so that a byte between two of the run's nodes counts once, and show rx beside it.
 * - Per kind of link (LINK_KINDS): bytes over every node and device, mean rate,
 *   and J per GB = the run's energyJ / (bytes / 10⁹) — the energy of the whole run, so kinds are
 *   not to be added: each says what a gigabyte over that kind of link cost in the run's energy.
 * - Overlap, per GPU with a `gpuN.util` and at least one link sensor: the time its utilisation was
 *   above `busyUtilPct` (busy), and of it the time its links' rates added up to more than
 *   `transferRateBps` (overlapped). Both are read at every timestamp of any of its series, each
 *   reading holding over the interval before it (a link without a reading there counts as idle).
 * - Per phase (when marks are given): each node's window cut by phase (phase-timeline.ts, the
 *   segments energy per phase divides), each segment's bytes read from the curves; inclusive
 *   bytes while a phase was open, self bytes while it was innermost; the phase's energy from
 *   `phases`, and J per GB from both.
 *
 * A node listed twice is counted once (the first entry), with a warning, as in computeRunEnergy.
 */
export function computeRunDataMovement(input: RunDataMovementInput): RunDataMovement | null {
  const { window, energyJ } = input;
  checkWindow(window);
  if (!(window.endMs > window.startMs)) {
    throw new EnergyInputError('ERG_ENERGY_BAD_WINDOW', `run window [${window.startMs}, ${window.endMs}] is empty; a run's window must have end > start`);
  }
  const busyUtilPct = input.busyUtilPct ?? BUSY_UTIL_PCT;
  const transferRateBps = input.transferRateBps ?? TRANSFER_RATE_BPS;
  const gapFactor = input.gapFactor ?? DEFAULT_GAP_FACTOR;
  const warnings: string[] = [];
  const nodes = distinctNodes(input.nodes, warnings);
  const windowMs = window.endMs - window.startMs;

  const linksByNode = new Map<string, Link[]>();
  for (const telemetry of nodes) {
    const links = nodeLinks(telemetry, window, gapFactor, warnings);
    if (links.length > 0) linksByNode.set(telemetry.node, links);
  }
  if (linksByNode.size === 0) return null;
  const all = [...linksByNode.values()].flat();

  const links: LinkBytes[] = all.map((l) => {
    const byDirection = linkBytes(l, window.startMs, window.endMs);
    return {
      node: l.node,
      device: l.device,
      kind: l.kind,
      bytes: countedBytes(l, byDirection),
      byDirection,
      sensors: l.sensors,
      sources: [...l.sources].sort(),
      coverage: l.coverage,
    };
  });

  const timeS = windowMs / 1000;
  const kinds: LinkKindMovement[] = [];
  for (const kind of LINK_KINDS) {
    const of = links.filter((l) => l.kind === kind);
    if (of.length === 0) continue;
    const byDirection: Partial<Record<TransferDirection, number>> = {};
    for (const l of of) for (const [d, b] of Object.entries(l.byDirection) as [TransferDirection, number][]) byDirection[d] = (byDirection[d] ?? 0) + b;
    const bytes = sum(of.map((l) => l.bytes));
    kinds.push({ kind, bytes, byDirection, meanRateBps: bytes / timeS, joulesPerGB: joulesPerGB(energyJ, bytes), links: of.length, coverage: Math.min(...of.map((l) => l.coverage)) });
  }

  const overlap = transferOverlap(nodes, linksByNode, window, busyUtilPct, transferRateBps);
  const marks = input.marks ?? [];
  const phases = marks.length > 0 ? phaseBytes(nodes, linksByNode, marks, window, input.phases ?? null) : null;
  return { timeS, energyJ, kinds, links, overlap, phases, warnings };
}

/** A node's links: its data-movement sensors grouped by device and kind (declared sensors without samples included: they cover nothing). */
/**
 * A superchip's GPU (gpuN beside moduleN, or a sensor the agent scoped to the module) with no C2C
 * sensor: its CPU↔GPU traffic is not in the figures, and the usual reason is the driver's or
 * DCGM's age. The agent's note in its meta file (NODE_FILE_SUFFIXES.meta) says which it was on the node.
 */
function missingC2c(telemetry: NodeTelemetry, measured: ReadonlySet<string>): string[] {
  const modules = new Set<string>();
  const gpus = new Set<string>();
  const see = (sensor: string, scope?: string) => {
    const name = parseSensorName(sensor);
    if (!name) return;
    if (name.component === 'module' || scope === 'module') modules.add(name.index);
    if (name.component === 'gpu') gpus.add(name.index);
  };
  for (const d of telemetry.sensors) see(d.sensor, d.scope);
  for (const s of telemetry.series) see(s.sensor);
  return [...gpus]
    .filter((i) => modules.has(i) && !measured.has(`gpu${i}`))
    .sort((a, b) => Number(a) - Number(b))
    .map((i) => `${telemetry.node}: gpu${i} is a superchip's GPU but has no C2C sensor (${C2C_FLOOR}); its CPU–GPU traffic is not counted — the agent's notes (${telemetry.node}${NODE_FILE_SUFFIXES.meta}) say why`);
}

function nodeLinks(telemetry: NodeTelemetry, window: Window, gapFactor: number, warnings: string[]): Link[] {
  const info = new Map<string, SensorInfo>();
  for (const d of telemetry.sensors) if (!info.has(d.sensor)) info.set(d.sensor, d);
  const series = new Map<string, Series>();
  for (const s of telemetry.series) {
    if (series.has(s.sensor)) {
      if (isDataMovement(parseSensorName(s.sensor)?.quantity ?? '')) warnings.push(`${telemetry.node}: ${s.sensor} appears in more than one series; the first is used`);
      continue;
    }
    series.set(s.sensor, s);
  }
  const byKey = new Map<string, Link>();
  const windowMs = window.endMs - window.startMs;
  for (const sensor of new Set([...series.keys(), ...info.keys()])) {
    const name = parseSensorName(sensor);
    if (!name || !isDataMovement(name.quantity)) continue;
    const kind = DATA_MOVEMENT_QUANTITIES[name.quantity].link;
    const key = `${name.device}\u0000${kind}`;
    let link = byKey.get(key);
    if (!link) byKey.set(key, (link = { node: telemetry.node, device: name.device, kind, curves: [], shown: new Set(), counted: new Set(), sensors: [], sources: new Set(), coverage: 1 }));
    const s = series.get(sensor) ?? { sensor, t: [], v: [] };
    const curve = rateCurve(s, name.quantity);
    link.curves.push(curve);
    link.sensors.push(sensor);
    const source = info.get(sensor)?.source;
    if (source) link.sources.add(source);
    const cov = coverage(curve.t, window, gapFactor);
    link.coverage = Math.min(link.coverage, Math.max(0, Math.min(1, cov.coveredMs / windowMs)));
    if (cov.spanMs === 0) warnings.push(`${telemetry.node}: ${sensor} has no samples in the window; its bytes are unknown (counted as 0)`);
    else if (cov.coveredMs / windowMs < LOW_COVERAGE) {
      warnings.push(`${telemetry.node}: ${sensor} covers ${Math.round((100 * cov.coveredMs) / windowMs)} % of the window: its bytes are a lower bound (gaps, or a sensor the agent dropped, such as a saturated counter)`);
    }
  }
  const links = [...byKey.values()];
  warnings.push(...missingC2c(telemetry, new Set(links.filter((l) => l.kind === 'c2c').map((l) => l.device))));
  for (const l of links) {
    l.sensors.sort();
    const directions = new Set(l.curves.map((c) => direction(c.quantity)));
    for (const d of directions) l.shown.add(d);
    if (l.kind === 'memory' && directions.has('total') && (directions.has('read') || directions.has('write'))) {
      l.shown.delete('total');
      warnings.push(`${l.node}: ${l.device}.mem_traffic not added: its reads and writes are measured (it would count them twice)`);
    }
    const only = COUNTED_DIRECTIONS[l.kind];
    for (const d of l.shown) if (!only || only.includes(d)) l.counted.add(d);
    if (only && l.counted.size === 0) warnings.push(`${l.node}: ${l.device} (${l.kind}) measures no ${only.join('/')} direction: its bytes count 0 (${l.kind} counts what nodes sent)`);
  }
  return links.sort((a, b) => LINK_KINDS.indexOf(a.kind) - LINK_KINDS.indexOf(b.kind) || compareDevices(a.device, b.device));
}

/** gpu2 before gpu10. */
function compareDevices(a: string, b: string): number {
  const [, ca = '', ia = ''] = /^([a-z]+)(\d*)$/.exec(a) ?? [];
  const [, cb = '', ib = ''] = /^([a-z]+)(\d*)$/.exec(b) ?? [];
  return ca < cb ? -1 : ca > cb ? 1 : Number(ia) - Number(ib);
}

/** A link's bytes per shown direction between two times. */
function linkBytes(link: Link, fromMs: number, toMs: number): Partial<Record<TransferDirection, number>> {
  const out: Partial<Record<TransferDirection, number>> = {};
  for (const c of link.curves) {
    const d = direction(c.quantity);
    if (!link.shown.has(d)) continue;
    out[d] = (out[d] ?? 0) + c.bytesAt(toMs) - c.bytesAt(fromMs);
  }
  return out;
}

/** The bytes of a link's counted directions (its `bytes`) out of its bytes per direction. */
function countedBytes(link: Link, byDirection: Partial<Record<TransferDirection, number>>): number {
  let total = 0;
  for (const d of link.counted) total += byDirection[d] ?? 0;
  return total;
}

function joulesPerGB(energyJ: number, bytes: number): number | null {
  return bytes > 0 && Number.isFinite(energyJ) && energyJ > 0 ? energyJ / (bytes / GB) : null;
}

function sum(values: readonly number[]): number {
  return values.reduce((s, x) => s + x, 0);
}

/**
 * The value of a step series (each reading holding over the interval before it) on the interval
 * ending at `x`, walking a cursor forward; undefined where no reading covers it (at or before the
 * first reading, after the last).
 */
class StepReader {
  private j = 0;
  constructor(private readonly t: Float64Array, private readonly v: Float64Array) {}

  at(x: number): number | undefined {
    const { t } = this;
    while (this.j < t.length && t[this.j]! < x) this.j++;
    return this.j >= 1 && this.j < t.length ? this.v[this.j] : undefined;
  }
}

/** GPU busy time and its overlap with transfers, per GPU that has both a utilisation and a link sensor. */
function transferOverlap(
  nodes: readonly NodeTelemetry[],
  linksByNode: ReadonlyMap<string, Link[]>,
  window: Window,
  busyUtilPct: number,
  transferRateBps: number,
): RunDataMovement['overlap'] {
  const gpus: GpuTransferOverlap[] = [];
  for (const telemetry of nodes) {
    const links = (linksByNode.get(telemetry.node) ?? []).filter((l) => l.kind !== 'memory');
    for (const device of [...new Set(links.map((l) => l.device))].sort(compareDevices)) {
      const utilSeries = telemetry.series.find((s) => s.sensor === `${device}.util`);
      if (!utilSeries) continue;
      const util = usableSamples(utilSeries.t, utilSeries.v, utilSeries.sensor);
      const n = util.t.length;
      if (n < 2) continue;
      const from = Math.max(window.startMs, util.t[0]!);
      const to = Math.min(window.endMs, util.t[n - 1]!);
      const curves = links.filter((l) => l.device === device).flatMap((l) => l.curves);
      // Every timestamp of any of the GPU's series inside (from, to), and the two ends.
      const grid: number[] = [from, to];
      for (const x of util.t) if (x > from && x < to) grid.push(x);
      for (const c of curves) for (const x of c.t) if (x > from && x < to) grid.push(x);
      grid.sort((a, b) => a - b);
      const utilAt = new StepReader(util.t, util.v);
      const rates = curves.map((c) => new StepReader(c.t, c.v));
      let busyMs = 0;
      let overlappedMs = 0;
      for (let k = 1; k < grid.length; k++) {
        const [a, b] = [grid[k - 1]!, grid[k]!];
        if (!(b > a)) continue;
        const u = utilAt.at(b);
        if (u === undefined || !(u > busyUtilPct)) {
          for (const r of rates) r.at(b);
          continue;
        }
        busyMs += b - a;
        let rate = 0;
        for (const r of rates) rate += r.at(b) ?? 0;
        if (rate > transferRateBps) overlappedMs += b - a;
      }
      gpus.push({ node: telemetry.node, gpu: device, busyS: busyMs / 1000, overlappedS: overlappedMs / 1000, fraction: busyMs > 0 ? overlappedMs / busyMs : null });
    }
  }
  if (gpus.length === 0) return null;
  const busyS = sum(gpus.map((g) => g.busyS));
  const overlappedS = sum(gpus.map((g) => g.overlappedS));
  return { utilThresholdPct: busyUtilPct, rateThresholdBps: transferRateBps, busyS, overlappedS, fraction: busyS > 0 ? overlappedS / busyS : null, gpus };
}

/** A phase's (or the unmarked time's) sums over nodes and segments. */
interface PhaseTally {
  timeMs: number;
  bytes: Map<LinkKind, Partial<Record<TransferDirection, number>>>;
  /** Inclusive bytes of the counted directions (COUNTED_DIRECTIONS), per kind. */
  counted: Map<LinkKind, number>;
  selfBytes: Map<LinkKind, number>;
}

/** Bytes per phase: each node's segments (the same partition as energy per phase), each link's bytes over each segment. */
function phaseBytes(
  nodes: readonly NodeTelemetry[],
  linksByNode: ReadonlyMap<string, Link[]>,
  marks: readonly PhaseMarkInput[],
  window: Window,
  energy: RunPhases | null,
): PhaseDataMovement[] {
  const marksByNode = new Map<string, PhaseMarkInput[]>();
  for (const m of marks) {
    const list = marksByNode.get(m.node) ?? [];
    list.push(m);
    marksByNode.set(m.node, list);
  }
  const tallies = new Map<string, PhaseTally>();
  const tally = (name: string): PhaseTally => {
    let t = tallies.get(name);
    if (!t) tallies.set(name, (t = { timeMs: 0, bytes: new Map(), counted: new Map(), selfBytes: new Map() }));
    return t;
  };
  for (const telemetry of nodes) {
    // Warnings about the marks themselves are energy per phase's to give (the same timeline).
    const { segments } = nodeTimeline(telemetry.node, marksByNode.get(telemetry.node) ?? [], window);
    const links = linksByNode.get(telemetry.node) ?? [];
    for (const seg of segments) {
      const keys = seg.leaf === null ? [UNMARKED_PHASE] : seg.open;
      const leaf = seg.leaf ?? UNMARKED_PHASE;
      for (const key of keys) tally(key).timeMs += seg.toMs - seg.fromMs;
      for (const link of links) {
        const byDirection = linkBytes(link, seg.fromMs, seg.toMs);
        const total = countedBytes(link, byDirection);
        const self = tally(leaf);
        self.selfBytes.set(link.kind, (self.selfBytes.get(link.kind) ?? 0) + total);
        for (const key of keys) {
          const into = tally(key);
          const acc = into.bytes.get(link.kind) ?? {};
          for (const [d, b] of Object.entries(byDirection) as [TransferDirection, number][]) acc[d] = (acc[d] ?? 0) + b;
          into.bytes.set(link.kind, acc);
          into.counted.set(link.kind, (into.counted.get(link.kind) ?? 0) + total);
        }
      }
    }
  }
  // Each phase's energy by name, read once: a search of the list per phase would cost names².
  const phaseJ = new Map<string, number>();
  for (const p of energy?.phases ?? []) {
    const name = p.name;
    if (!phaseJ.has(name)) phaseJ.set(name, p.energyJ);
  }
  const energyOf = (name: string): number | null => {
    if (!energy) return null;
    if (name === UNMARKED_PHASE) return energy.unmarked.energyJ;
    return phaseJ.get(name) ?? null;
  };
  const out: (PhaseDataMovement & { totalBytes: number })[] = [];
  for (const [name, t] of tallies) {
    const kinds: PhaseDataMovement['kinds'] = {};
    const perGB: PhaseDataMovement['joulesPerGB'] = {};
    const selfBytes: PhaseDataMovement['selfBytes'] = {};
    const energyJ = energyOf(name);
    let totalBytes = 0;
    for (const kind of LINK_KINDS) {
      const byDirection = t.bytes.get(kind);
      if (!byDirection) continue;
      const bytes = t.counted.get(kind) ?? 0;
      totalBytes += bytes;
      kinds[kind] = { bytes, byDirection };
      perGB[kind] = energyJ === null ? null : joulesPerGB(energyJ, bytes);
      selfBytes[kind] = t.selfBytes.get(kind) ?? 0;
    }
    out.push({ name, timeS: t.timeMs / 1000, energyJ, kinds, selfBytes, joulesPerGB: perGB, totalBytes });
  }
  out.sort((a, b) => Number(a.name === UNMARKED_PHASE) - Number(b.name === UNMARKED_PHASE) || b.totalBytes - a.totalBytes || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return out.map(({ totalBytes: _, ...p }) => p);
}
