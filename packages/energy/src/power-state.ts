/**
 * A run's power state: what the campaign asked of the hardware (its `power` block, expanded for
 * the configuration), what was in force over the workload window (the agents' state sensors and
 * the node helper's read-back), and whether the GPUs were held down by power or heat. Kept apart
 * from computeRunEnergy: the energy is the same whatever state produced it; this says whether
 * that state is the one the study claims.
 *
 * Figures, per (node, GPU index), over the window only:
 * - powerLimitW (`gpuN.power_limit`), moduleLimitW (`moduleN.power_limit`, N the GPU's index —
 *   GH200 has one module per GPU) and appClockMHz (`gpuN.clock_app`): the median of the samples
 *   inside the window, else the last sample before it (a limit set before the run and never
 *   re-sampled is still the limit in force); null without either.
 * - smClockMaxMHz (`gpuN.clock`) and maxTempC (`gpuN.temp`): the largest sample inside the window.
 * - throttledShare (`gpuN.clock_events`): the share of the window's length during which the held
 *   value (each sample holds until the next; the last one before the window holds into it) has a
 *   throttling reason set — THROTTLING_REASONS, less sw_power_cap when the campaign set
 *   gpuPowerLimitW or moduleLimitW, since then the cap is the experiment, not a disturbance.
 *   Time before the first sample counts as not throttled (nothing says it was); null with no
 *   sample before the window's end. throttleReasons: the reasons that counted, by name.
 * - A GPU is listed when it has any of these sensors. `power` is undefined when nothing was
 *   requested and no node has a state sensor (power_limit, clock_app, temp, clock_events): the SM
 *   clock alone, which agents have always sampled, leaves sensor-less results as they were.
 *
 * Flags, each with one warning per finding:
 * - throttled: some GPU's throttledShare > maxThrottledShare (equal is not flagged). When the
 *   expected power cap alone held a GPU down for more than that share, a warning says so and why
 *   it is not a flag.
 * - power_state_mismatch (only with a request): per node and GPU, the value in force differs from
 *   the request — gpuPowerLimitW / moduleLimitW: the sensor's figure, else the record's read-back,
 *   beyond max(1 W, 0.5 %); gpuLockedClocksMHz [lo, hi]: an SM clock sample above hi + 15 MHz (one
 *   clock step of slack), or the record's read-back (when it has one) other than [lo, hi];
 *   cpuFreqKHz: the record's cpuMaxFreqKHz beyond 1 %. A node without a record, or whose record
 *   says ok: false, is a mismatch as well.
 * - power_state_unverified (only with a request): a knob neither a sensor nor the record can check
 *   on some node. Not raised for a node whose record is missing or failed: that is a mismatch
 *   already.
 */
import type { GpuPowerObserved, GpuPowerSettings, NodePowerSettings, PowerRecord, PowerState, RunFlag, RunPowerState } from '@erg/spec';
import { clockEventReasons, THROTTLING_REASONS, type ClockEventReason } from '@erg/spec/sensors';
import { EnergyInputError } from './errors';
import { checkWindow, lastAtOrBefore, usableSamples, type Samples } from './sampling';
import { parseSensorName, type NodeTelemetry, type Window } from './telemetry';

/** What assessPowerState needs. */
export interface PowerStateInput {
  /** The workload window. */
  window: Window;
  /** The campaign's power block for this configuration, expanded; null: none asked. */
  requested: PowerState | null;
  /** The telemetry computeRunEnergy gets; only the state sensors and `gpuN.clock` are read. */
  nodes: readonly NodeTelemetry[];
  /** The node helper's record per node name (present only when the campaign asked for a state). */
  records: ReadonlyMap<string, PowerRecord>;
  /** The campaign's telemetry.maxThrottledShare (its default is 0.1). */
  maxThrottledShare: number;
}

/** The power state of a run, and the flags and warnings it earns; merged into the run's RunEnergy by the caller. */
export interface PowerStateAssessment {
  power: RunPowerState | undefined;
  flags: RunFlag[];
  warnings: string[];
}

/** Slack on an SM clock sample above the locked maximum: one clock step. */
export const LOCKED_CLOCK_SLACK_MHZ = 15;

/** A GPU's state sensors on one node, cleaned. */
interface GpuSensors {
  powerLimit?: Samples;
  moduleLimit?: Samples;
  clock?: Samples;
  clockApp?: Samples;
  temp?: Samples;
  events?: Samples;
}

type Field = keyof GpuSensors;

/** Which sensor feeds which figure; `state` marks the sensors that make `power` worth reporting on their own. */
const SENSORS: readonly { component: string; quantity: string; field: Field; state: boolean }[] = [
  { component: 'gpu', quantity: 'power_limit', field: 'powerLimit', state: true },
  { component: 'module', quantity: 'power_limit', field: 'moduleLimit', state: true },
  { component: 'gpu', quantity: 'clock', field: 'clock', state: false },
  { component: 'gpu', quantity: 'clock_app', field: 'clockApp', state: true },
  { component: 'gpu', quantity: 'temp', field: 'temp', state: true },
  { component: 'gpu', quantity: 'clock_events', field: 'events', state: true },
];

/** Assesses a run's power state over its window (the rules are in this file's header). */
export function assessPowerState(input: PowerStateInput): PowerStateAssessment {
  const { window, requested, records, maxThrottledShare } = input;
  checkWindow(window);
  if (!(window.endMs > window.startMs)) {
    throw new EnergyInputError('ERG_ENERGY_BAD_WINDOW', `run window [${window.startMs}, ${window.endMs}] is empty; a run's window must have end > start`);
  }
  if (!(maxThrottledShare >= 0 && maxThrottledShare <= 1)) {
    throw new EnergyInputError('ERG_ENERGY_BAD_ARGUMENT', `maxThrottledShare must lie between 0 and 1, got ${maxThrottledShare}`);
  }
  const capExpected = requested !== null && (requested.gpuPowerLimitW !== undefined || requested.moduleLimitW !== undefined);
  const counted = new Set<ClockEventReason>(THROTTLING_REASONS.filter((r) => !(capExpected && r === 'sw_power_cap')));

  // As computeRunEnergy: a node listed twice is read once, its first entry.
  const nodes: NodeTelemetry[] = [];
  for (const n of input.nodes) if (!nodes.some((m) => m.node === n.node)) nodes.push(n);

  const gpus: GpuPowerObserved[] = [];
  const observedByNode = new Map<string, Map<number, GpuPowerObserved>>();
  const throttleWarnings: string[] = [];
  let throttled = false;
  let anyStateSensor = false;
  for (const telemetry of nodes) {
    const { byGpu, state } = gpuSensorsOf(telemetry);
    anyStateSensor ||= state;
    const observed = new Map<number, GpuPowerObserved>();
    observedByNode.set(telemetry.node, observed);
    for (const [gpu, sensors] of byGpu) {
      const o = observe(telemetry.node, gpu, sensors, window, counted);
      gpus.push(o.figures);
      observed.set(gpu, o.figures);
      const share = o.figures.throttledShare;
      const where = `${telemetry.node} gpu${gpu}`;
      if (share !== null && share > maxThrottledShare) {
        throttled = true;
        throttleWarnings.push(
          `${where} was throttled for ${pct(share)} of the window (${o.figures.throttleReasons.join(', ')}): its time and energy reflect a slowed GPU`,
        );
      } else if (capExpected && o.capShare > maxThrottledShare) {
        throttleWarnings.push(
          `${where} ran at its power cap for ${pct(o.capShare)} of the window (sw_power_cap): expected, since the campaign set the power limit, so not counted as throttling`,
        );
      }
    }
  }

  const mismatches: string[] = [];
  const unverified: string[] = [];
  const cpuMaxFreqKHz: Record<string, number | null> = {};
  if (requested !== null) {
    for (const telemetry of nodes) {
      const node = telemetry.node;
      const record = records.get(node);
      // Only an ok record describes what was in force; a failed one restored the previous state.
      let applied: NodePowerSettings | null = null;
      if (!record) mismatches.push(`no power record from node ${node}: the helper did not report what it set`);
      else if (!record.ok) mismatches.push(`${node}: the node helper could not apply the power state (${record.error ?? 'it gave no reason'}): what was requested was not in force`);
      else applied = record.applied ?? { gpus: [] };
      const check: NodeCheck = { node, observed: observedByNode.get(node) ?? new Map(), applied, mismatches, unverified };
      if (requested.gpuPowerLimitW !== undefined) checkLimit(check, requested.gpuPowerLimitW, 'power limit', 'powerLimitW', 'gpu{i}.power_limit');
      if (requested.moduleLimitW !== undefined) checkLimit(check, requested.moduleLimitW, 'module power limit', 'moduleLimitW', 'module{i}.power_limit');
      if (requested.gpuLockedClocksMHz !== undefined) checkLockedClocks(check, requested.gpuLockedClocksMHz);
      if (requested.cpuFreqKHz !== undefined) {
        const back = applied?.cpuMaxFreqKHz;
        cpuMaxFreqKHz[node] = typeof back === 'number' ? back : null;
        checkCpuFreq(check, requested.cpuFreqKHz);
      }
    }
  }

  const flags: RunFlag[] = [];
  if (mismatches.length > 0) flags.push('power_state_mismatch');
  if (unverified.length > 0) flags.push('power_state_unverified');
  if (throttled) flags.push('throttled');
  const power: RunPowerState | undefined =
    requested === null && !anyStateSensor ? undefined : { requested: requested === null ? null : { ...requested }, gpus, cpuMaxFreqKHz };
  return { power, flags, warnings: [...mismatches, ...unverified, ...throttleWarnings] };
}

/** A node's GPUs with any sensor this file reads, by index (ascending), and whether it has a state sensor. */
function gpuSensorsOf(telemetry: NodeTelemetry): { byGpu: Map<number, GpuSensors>; state: boolean } {
  const byGpu = new Map<number, GpuSensors>();
  let state = false;
  for (const s of telemetry.series) {
    const name = parseSensorName(s.sensor);
    if (!name || name.index === '') continue;
    const spec = SENSORS.find((x) => x.component === name.component && x.quantity === name.quantity);
    if (!spec) continue;
    const gpu = Number(name.index);
    const sensors = byGpu.get(gpu) ?? {};
    if (sensors[spec.field]) continue; // a sensor sent twice: the first series, as for energy
    sensors[spec.field] = usableSamples(s.t, s.v, `${telemetry.node}: ${s.sensor}`);
    byGpu.set(gpu, sensors);
    state ||= spec.state;
  }
  return { byGpu: new Map([...byGpu].sort(([a], [b]) => a - b)), state };
}

/** One GPU's figures over the window, and the share of it spent at its power cap (for the expected-cap warning). */
function observe(node: string, gpu: number, s: GpuSensors, window: Window, counted: ReadonlySet<ClockEventReason>): { figures: GpuPowerObserved; capShare: number } {
  let throttledShare: number | null = null;
  let capShare = 0;
  const reasons = new Set<ClockEventReason>();
  if (s.events) {
    const lengthMs = window.endMs - window.startMs;
    let throttledMs = 0;
    let capMs = 0;
    const held = forEachHeld(s.events, window, (mask, ms) => {
      const set = clockEventReasons(mask);
      const hits = set.filter((r) => counted.has(r));
      if (hits.length > 0) throttledMs += ms;
      if (set.includes('sw_power_cap')) capMs += ms;
      for (const r of hits) reasons.add(r);
    });
    if (held) {
      throttledShare = throttledMs / lengthMs;
      capShare = capMs / lengthMs;
    }
  }
  const figures: GpuPowerObserved = {
    node,
    gpu,
    powerLimitW: s.powerLimit ? inForce(s.powerLimit, window) : null,
    moduleLimitW: s.moduleLimit ? inForce(s.moduleLimit, window) : null,
    smClockMaxMHz: s.clock ? maxInside(s.clock, window) : null,
    appClockMHz: s.clockApp ? inForce(s.clockApp, window) : null,
    maxTempC: s.temp ? maxInside(s.temp, window) : null,
    throttledShare,
    throttleReasons: THROTTLING_REASONS.filter((r) => reasons.has(r)),
  };
  return { figures, capShare };
}

/**
 * Calls `visit(value, ms)` for each stretch of the window over which one sample's value holds
 * (until the next sample; the last one before the window holds into it). Stretches of zero
 * length are skipped. False when no sample holds anywhere in the window.
 */
function forEachHeld(s: Samples, window: Window, visit: (value: number, ms: number) => void): boolean {
  const { t, v } = s;
  const { startMs: a, endMs: b } = window;
  let any = false;
  for (let i = Math.max(0, lastAtOrBefore(t, a)); i < t.length && t[i]! < b; i++) {
    any = true;
    const from = Math.max(a, t[i]!);
    const to = i + 1 < t.length ? Math.min(b, t[i + 1]!) : b;
    if (to > from) visit(v[i]!, to - from);
  }
  return any;
}

/** The median of the samples inside the window, else the last one before it; null without either. */
function inForce(s: Samples, window: Window): number | null {
  const inside = samplesInside(s, window);
  if (inside.length > 0) return median(inside);
  const before = lastAtOrBefore(s.t, window.startMs);
  return before >= 0 ? s.v[before]! : null;
}

/** The largest sample inside the window; null without one. */
function maxInside(s: Samples, window: Window): number | null {
  const inside = samplesInside(s, window);
  return inside.length > 0 ? Math.max(...inside) : null;
}

function samplesInside(s: Samples, window: Window): number[] {
  const out: number[] = [];
  for (let i = 0; i < s.t.length; i++) if (s.t[i]! >= window.startMs && s.t[i]! <= window.endMs) out.push(s.v[i]!);
  return out;
}

function median(xs: number[]): number {
  const s = Float64Array.from(xs).sort();
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** What the checks of one node share. `applied` is null when the node has no ok record. */
interface NodeCheck {
  node: string;
  observed: ReadonlyMap<number, GpuPowerObserved>;
  applied: NodePowerSettings | null;
  mismatches: string[];
  unverified: string[];
}

/** The node's GPUs: those with sensors and those the record read back, ascending. */
function gpuIndices(c: NodeCheck): number[] {
  const all = new Set<number>(c.observed.keys());
  for (const g of c.applied?.gpus ?? []) all.add(g.index);
  return [...all].sort((a, b) => a - b);
}

function readBack(c: NodeCheck, gpu: number): GpuPowerSettings | undefined {
  return c.applied?.gpus?.find((g) => g.index === gpu);
}

/** Adds the unverified warning for `knob` when some GPU (or, with none known, the node) could not be checked; only on nodes with an ok record. */
function reportUnchecked(c: NodeCheck, unchecked: number[], known: number, what: string, sensors: string, requested: string): void {
  if (c.applied === null || (unchecked.length === 0 && known > 0)) return;
  const on = known === 0 ? 'any of its GPUs' : unchecked.map((i) => `gpu${i}`).join(', ');
  c.unverified.push(`${c.node}: nothing recorded the ${what} in force on ${on} (no ${sensors} sensor, no read-back in the node helper's record): the requested ${requested} could not be checked`);
}

/** A power limit knob: the sensor's figure where there is one, else the record's read-back, within max(1 W, 0.5 %). */
function checkLimit(c: NodeCheck, requestedW: number, what: string, field: 'powerLimitW' | 'moduleLimitW', sensor: string): void {
  const tolerance = Math.max(1, 0.005 * requestedW);
  const gpus = gpuIndices(c);
  const unchecked: number[] = [];
  for (const i of gpus) {
    const seen = c.observed.get(i)?.[field] ?? null;
    const back = readBack(c, i)?.[field];
    const name = sensor.replace('{i}', String(i));
    if (seen !== null) {
      if (Math.abs(seen - requestedW) > tolerance) c.mismatches.push(`${c.node} gpu${i}: the enforced ${what} was ${num(seen)} W, not the ${num(requestedW)} W requested (${name} over the window)`);
    } else if (typeof back === 'number') {
      if (Math.abs(back - requestedW) > tolerance) c.mismatches.push(`${c.node} gpu${i}: the node helper read back a ${what} of ${num(back)} W, not the ${num(requestedW)} W requested`);
    } else unchecked.push(i);
  }
  reportUnchecked(c, unchecked, gpus.length, what, sensor.replace('{i}', 'N'), `${num(requestedW)} W`);
}

/** Locked clocks: no SM clock sample above hi + one step, and the record's read-back (when it has one) equal to [lo, hi]. */
function checkLockedClocks(c: NodeCheck, [lo, hi]: [number, number]): void {
  const asked = `${num(lo)}–${num(hi)} MHz`;
  const gpus = gpuIndices(c);
  const unchecked: number[] = [];
  for (const i of gpus) {
    let checked = false;
    const maxMHz = c.observed.get(i)?.smClockMaxMHz ?? null;
    if (maxMHz !== null) {
      checked = true;
      if (maxMHz > hi + LOCKED_CLOCK_SLACK_MHZ) c.mismatches.push(`${c.node} gpu${i}: the SM clock reached ${num(maxMHz)} MHz, above the locked clocks ${asked} requested`);
    }
    const back = readBack(c, i)?.lockedClocksMHz;
    if (back !== undefined) {
      checked = true;
      if (back === null || back[0] !== lo || back[1] !== hi) {
        const got = back === null ? 'no locked clocks' : `locked clocks ${num(back[0])}–${num(back[1])} MHz`;
        c.mismatches.push(`${c.node} gpu${i}: the node helper read back ${got}, not the ${asked} requested`);
      }
    }
    if (!checked) unchecked.push(i);
  }
  reportUnchecked(c, unchecked, gpus.length, 'locked clocks', 'gpuN.clock', asked);
}

/** The CPUs' maximum frequency: only the record knows it; within 1 %. */
function checkCpuFreq(c: NodeCheck, requestedKHz: number): void {
  if (c.applied === null) return;
  const back = c.applied.cpuMaxFreqKHz;
  if (typeof back !== 'number') {
    c.unverified.push(`${c.node}: nothing recorded the CPUs' maximum frequency in force (no read-back in the node helper's record): the requested ${num(requestedKHz)} kHz could not be checked`);
  } else if (Math.abs(back - requestedKHz) > 0.01 * requestedKHz) {
    c.mismatches.push(`${c.node}: the node helper read back a CPU maximum frequency of ${num(back)} kHz, not the ${num(requestedKHz)} kHz requested`);
  }
}

/** A share as a percentage, to 0.1 % ("34 %", "10.4 %"). */
function pct(share: number): string {
  return `${num(100 * share)} %`;
}

/** A number to 0.1, without a trailing ".0". */
function num(x: number): string {
  return String(Math.round(x * 10) / 10);
}
