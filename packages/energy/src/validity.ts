// Whether a run's measurement is sound enough to publish (issue 26 §3): the spec's validity gates
// applied to its telemetry over its window. Pure; runFiguresOf (@erg/results) calls it with the
// run's energy, so the gates look at exactly the sensors the energy was computed from.
import type { RunValidity, Validity, ValidityCheck, ValidityCheckName } from '@erg/spec';
import { counterEnergy } from './counter';
import { integratePower } from './integrate';
import { indexNode, nodeEnergy, type NodeIndex } from './node-energy';
import { DEFAULT_GAP_FACTOR, lastAtOrBefore, medianInterval, usableSamples } from './sampling';
import { sensorTimingOf } from './sensor-timing';
import { parseSensorName, type NodeTelemetry, type Window } from './telemetry';

/** One node agent's clock against erg's server: the largest sentAt − receivedAt over its pushes (a lower bound of the offset). */
export interface ClockOffset {
  node: string;
  offsetMs: number;
  /** Pushes the estimate is taken over. */
  readings: number;
}

export interface ValidityInput {
  /** The workload's window. */
  window: Window;
  /** The idle baseline's window; null: the campaign has none. */
  idleWindow: Window | null;
  nodes: readonly NodeTelemetry[];
  /** The sensors each node's energy uses over the window (NodeEnergy.sensorsUsed: the names they count under). */
  used: readonly { node: string; sensorsUsed: readonly string[] }[];
  /** The sampling interval the campaign asked its agents for (telemetry.intervalMs). */
  requestedIntervalMs: number;
  /** The agents' clock offsets; a node without one was not measured (telemetry from the spool, an older agent). */
  clocks: readonly ClockOffset[];
  limits: Validity;
}

/** Most stretches the idle baseline is cut into for its power's variation: the cost stays bounded however long it is. */
export const MAX_IDLE_BINS = 100;
/** Fewest stretches of the idle baseline a CV is computed over. */
export const MIN_IDLE_BINS = 3;
/** A counter and a power reading are compared only where together they cover at least this share of the window. */
export const MIN_COMPARED_SHARE = 0.5;

/**
 * The validity gates of one run, each with its worst value over the nodes and sensors it applies
 * to (docs/energy.md, "Validity gates"):
 * - sample_share: the share of the sample intervals expected at the requested interval that were
 *   kept, per sensor the energy uses, within the window (keptShare);
 * - longest_gap: the longest stretch between samples of a sensor the energy uses, the window's
 *   edges included (window start to the first sample where none came before it);
 * - sampling_interval: the achieved median interval inside the window ÷ the requested one;
 * - clock_offset: |offset| of each node agent's clock from erg's server;
 * - clock_spread: the largest minus the smallest offset over the run's agents (two or more);
 * - counter_agreement: |∫ power − counter delta| ÷ counter delta where one component has both
 *   (gpu0.energy and gpu0.power), over the stretch of the window both cover (counterDisagreement);
 * - idle_stability: the coefficient of variation of each node's power over the idle baseline, in
 *   up to MAX_IDLE_BINS stretches of at least the requested interval.
 * A gate with nothing to judge is `not_measured` and does not make the run invalid.
 */
export function runValidity(input: ValidityInput): RunValidity {
  const { limits } = input;
  const used = usedSeries(input);
  const checks = [
    sampleShare(used, input.window, input.requestedIntervalMs, limits.minSampleShare),
    longestGap(used, input.window, limits.maxGapS),
    samplingInterval(used, input.window, input.requestedIntervalMs, limits.maxIntervalRatio),
    clockOffset(input.clocks, limits.maxClockOffsetMs),
    clockSpread(input.clocks, limits.maxClockOffsetMs),
    counterAgreement(input.nodes, input.window, limits.maxCounterDisagreement),
    idleStability(input.nodes, input.idleWindow, input.requestedIntervalMs, limits.maxIdleCv),
  ];
  const reasons = checks.filter((c) => c.status === 'fail').map((c) => c.detail);
  const valid = reasons.length === 0;
  return { valid, checks, reasons, excluded: !valid && limits.excludeInvalid };
}

/** One sensor's sample times, cleaned. */
interface UsedSeries {
  where: string;
  t: Float64Array;
}

/** The sample times of every sensor the energy uses, under the names they count under (a module-scoped gpu0.energy is module0.energy). */
function usedSeries(input: ValidityInput): UsedSeries[] {
  const byNode = new Map(input.nodes.map((n) => [n.node, n]));
  const out: UsedSeries[] = [];
  for (const { node, sensorsUsed } of input.used) {
    const telemetry = byNode.get(node);
    if (!telemetry) continue;
    const index = indexNode(telemetry, []);
    for (const sensor of sensorsUsed) {
      const s = index.series.get(sensor);
      out.push({ where: `${node} ${sensor}`, t: s ? usableSamples(s.t, s.v, sensor).t : new Float64Array(0) });
    }
  }
  return out;
}

/** The worst value of a gate and where it was; null where nothing was measured. */
interface Worst {
  value: number;
  where: string;
}

/** Keeps the worse of two candidates: the larger value, or the smaller with `lower`. */
function worse(a: Worst | null, value: number | null, where: string, lower = false): Worst | null {
  if (value === null || !Number.isFinite(value)) return a;
  if (a === null || (lower ? value < a.value : value > a.value)) return { value, where };
  return a;
}

/**
 * A gate's verdict: pass when the worst value is within the limit (at the limit included), with its
 * sentence. `say(value, cmp)` words the value against the limit ("longest gap 20.1 s > 3 s").
 */
function judge(check: ValidityCheckName, worst: Worst | null, limit: number, lower: boolean, say: (value: number, cmp: string) => string, notMeasured: string): ValidityCheck {
  if (worst === null) return { check, status: 'not_measured', value: null, limit, where: null, detail: notMeasured };
  const pass = lower ? worst.value >= limit : worst.value <= limit;
  const cmp = pass ? (lower ? '≥' : '≤') : lower ? '<' : '>';
  return { check, status: pass ? 'pass' : 'fail', value: worst.value, limit, where: worst.where, detail: `${say(worst.value, cmp)} at ${worst.where}` };
}

function sampleShare(used: readonly UsedSeries[], window: Window, intervalMs: number, limit: number): ValidityCheck {
  let worst: Worst | null = null;
  for (const s of used) worst = worse(worst, keptShare(s.t, window, intervalMs), s.where, true);
  return judge('sample_share', worst, limit, true, (v, cmp) => `${percent(v)} of the sample intervals expected every ${ms(intervalMs)} kept ${cmp} ${percent(limit)}`, 'no sensor the energy uses');
}

/**
 * Share of the intervals a sampler at `intervalMs` should have delivered in the window that it
 * did: the intervals between consecutive samples, each counted by the part of it inside the
 * window, against the window's length ÷ `intervalMs`. A 20 s hole at 200 ms is one interval where
 * a hundred were due; timer jitter moves samples but drops no interval, and the samples' phase
 * against the window's edges costs nothing. Before the first and after the last sample, where no
 * sample lies beyond the window's edge, no interval was kept. At most 1; samples taken faster than
 * asked can make up for missing ones in this share, which is why longest_gap looks for holes
 * whatever the rate.
 */
export function keptShare(t: Float64Array, window: Window, intervalMs: number): number {
  const { startMs, endMs } = window;
  const expected = (endMs - startMs) / intervalMs;
  if (!(expected > 0)) return 1;
  let kept = 0;
  for (let j = Math.max(0, lastAtOrBefore(t, startMs)); j < t.length - 1 && t[j]! < endMs; j++) {
    const d = t[j + 1]! - t[j]!;
    const inside = Math.min(t[j + 1]!, endMs) - Math.max(t[j]!, startMs);
    if (d > 0 && inside > 0) kept += inside / d;
  }
  return Math.min(1, kept / expected);
}

function longestGap(used: readonly UsedSeries[], window: Window, limitS: number): ValidityCheck {
  let worst: Worst | null = null;
  for (const s of used) worst = worse(worst, longestGapMs(s.t, window) / 1000, s.where);
  return judge('longest_gap', worst, limitS, false, (v, cmp) => `longest gap ${seconds(v)} ${cmp} ${seconds(limitS)}`, 'no sensor the energy uses');
}

/**
 * The longest stretch of the window a series interpolates across or leaves bare: every interval
 * between consecutive samples that overlaps the window (whole: the energy is interpolated across
 * all of it), and the window's start to the first sample or the last sample to its end where no
 * sample lies beyond that edge. The whole window for a series without samples.
 */
export function longestGapMs(t: Float64Array, window: Window): number {
  const { startMs, endMs } = window;
  const n = t.length;
  if (n === 0) return endMs - startMs;
  const first = lastAtOrBefore(t, startMs);
  let longest = first < 0 ? Math.min(t[0]!, endMs) - startMs : 0;
  for (let j = Math.max(0, first); j < n - 1 && t[j]! < endMs; j++) {
    if (t[j + 1]! > startMs) longest = Math.max(longest, t[j + 1]! - t[j]!);
  }
  if (t[n - 1]! < endMs) longest = Math.max(longest, endMs - Math.max(t[n - 1]!, startMs));
  return longest;
}

function samplingInterval(used: readonly UsedSeries[], window: Window, intervalMs: number, limit: number): ValidityCheck {
  let worst: Worst | null = null;
  for (const s of used) {
    let first = lastAtOrBefore(s.t, window.startMs);
    if (first < 0 || s.t[first]! < window.startMs) first++;
    const inside = s.t.subarray(first, lastAtOrBefore(s.t, window.endMs) + 1);
    const median = medianInterval(inside);
    worst = worse(worst, median === null ? null : median / intervalMs, s.where);
  }
  return judge(
    'sampling_interval', worst, limit, false,
    (v, cmp) => `median sampling interval ${ms(v * intervalMs)}, ${ratio(v)} the requested ${ms(intervalMs)} ${cmp} ${ratio(limit)}`,
    'no sensor the energy uses has two samples in the window',
  );
}

function clockOffset(clocks: readonly ClockOffset[], limitMs: number): ValidityCheck {
  // The worst by size; the sentence keeps its sign (ahead of the server, or behind it).
  const worst = clocks.reduce<ClockOffset | null>((w, c) => (w === null || Math.abs(c.offsetMs) > Math.abs(w.offsetMs) ? c : w), null);
  return judge(
    'clock_offset', worst && { value: Math.abs(worst.offsetMs), where: `${worst.node} (${worst.readings} push${worst.readings === 1 ? '' : 'es'})` }, limitMs, false,
    (_, cmp) => `agent clock ${signedMs(worst!.offsetMs)} from erg's server ${cmp} ${ms(limitMs)}`,
    'no agent sent its clock (telemetry pulled from the spool, or an agent older than the x-erg-sent-at header)',
  );
}

function clockSpread(clocks: readonly ClockOffset[], limitMs: number): ValidityCheck {
  if (clocks.length < 2) {
    return judge('clock_spread', null, limitMs, false, () => '', clocks.length === 1 ? 'one agent sent its clock: nothing to compare it with' : 'no agent sent its clock');
  }
  const sorted = [...clocks].sort((a, b) => a.offsetMs - b.offsetMs);
  const lo = sorted[0]!;
  const hi = sorted[sorted.length - 1]!;
  return judge('clock_spread', { value: hi.offsetMs - lo.offsetMs, where: `${hi.node} vs ${lo.node}` }, limitMs, false, (v, cmp) => `agents' clocks ${ms(v)} apart ${cmp} ${ms(limitMs)}`, '');
}

function counterAgreement(nodes: readonly NodeTelemetry[], window: Window, limit: number): ValidityCheck {
  let worst: Worst | null = null;
  for (const telemetry of nodes) {
    const index = indexNode(telemetry, []);
    for (const device of devices(index)) {
      const disagreement = counterDisagreement(index, device, window);
      worst = worse(worst, disagreement, `${telemetry.node} ${device}.energy vs ${device}.power`);
    }
  }
  return judge(
    'counter_agreement', worst, limit, false,
    (v, cmp) => `energy counter and integrated power differ by ${percent(v)} ${cmp} ${percent(limit)}`,
    'no component has both an energy counter and a power reading',
  );
}

/** The devices of a node with both an energy counter and a power reading (under the names they count under). */
function devices(index: NodeIndex): string[] {
  const out: string[] = [];
  for (const sensor of index.series.keys()) {
    const name = parseSensorName(sensor);
    if (name?.quantity === 'energy' && index.series.has(`${name.device}.power`)) out.push(name.device);
  }
  return out.sort();
}

/**
 * |∫ power − counter delta| ÷ counter delta of one device, over the stretch of the window both
 * cover; null where they cannot be compared (together they cover less than MIN_COMPARED_SHARE of
 * the window, or the counter counted nothing). The counter is read over that stretch moved by its
 * own lag less half the power's averaging window: a power reading averaged over the `averagingMs`
 * before its timestamp stands for the middle of that span, and a counter value trails its
 * timestamp by `lagMs`. A counter that wrapped with its range known is unwrapped; one that reset
 * counts from 0 again, and the energy lost shows as disagreement.
 */
export function counterDisagreement(index: NodeIndex, device: string, window: Window): number | null {
  const power = index.series.get(`${device}.power`)!;
  const counter = index.series.get(`${device}.energy`)!;
  const p = usableSamples(power.t, power.v, power.sensor).t;
  const c = usableSamples(counter.t, counter.v, counter.sensor).t;
  if (p.length < 2 || c.length < 2) return null;
  const averagingMs = sensorTimingOf(`${device}.power`, index.info.get(`${device}.power`))?.averagingMs ?? 0;
  const counterInfo = index.info.get(`${device}.energy`);
  const shift = (sensorTimingOf(`${device}.energy`, counterInfo)?.lagMs ?? 0) - averagingMs / 2;
  const stretch = {
    startMs: Math.max(window.startMs, p[0]!, c[0]! - shift),
    endMs: Math.min(window.endMs, p[p.length - 1]!, c[c.length - 1]! - shift),
  };
  if (stretch.endMs - stretch.startMs < MIN_COMPARED_SHARE * (window.endMs - window.startMs)) return null;
  const integrated = integratePower(power, stretch).joules;
  const delta = counterEnergy(counter, { startMs: stretch.startMs + shift, endMs: stretch.endMs + shift }, { wrapAt: counterInfo?.wrapAt }).joules;
  return delta > 0 ? Math.abs(integrated - delta) / delta : null;
}

function idleStability(nodes: readonly NodeTelemetry[], idle: Window | null, intervalMs: number, limit: number): ValidityCheck {
  const say = (v: number, cmp: string) => `idle power varies by CV ${v.toFixed(3)} ${cmp} ${limit}`;
  if (!idle || !(idle.endMs > idle.startMs)) return judge('idle_stability', null, limit, false, say, 'no idle baseline (telemetry.idleBaselineS is 0)');
  let worst: Worst | null = null;
  for (const telemetry of nodes) worst = worse(worst, idleCv(telemetry, idle, intervalMs), telemetry.node);
  return judge('idle_stability', worst, limit, false, say, `the idle baseline is too short or bare for ${MIN_IDLE_BINS} stretches of ${ms(intervalMs)} with samples`);
}

/**
 * The coefficient of variation (sample standard deviation ÷ mean) of a node's power over the idle
 * baseline: the baseline cut into equal stretches of at least the requested interval (at most
 * MAX_IDLE_BINS), the node's power in each the energy of the sensors its idle energy uses (the
 * energy's own rules) over the stretch ÷ its length. Stretches a sensor has no samples across are
 * left out; null with fewer than MIN_IDLE_BINS left or a mean power not above 0.
 */
export function idleCv(telemetry: NodeTelemetry, idle: Window, intervalMs: number): number | null {
  const index = indexNode(telemetry, []);
  const sensors = nodeEnergy(index, idle, DEFAULT_GAP_FACTOR).node.sensorsUsed;
  const bins = Math.min(MAX_IDLE_BINS, Math.floor((idle.endMs - idle.startMs) / intervalMs));
  if (sensors.length === 0 || bins < MIN_IDLE_BINS) return null;
  const width = (idle.endMs - idle.startMs) / bins;
  const series = sensors.map((sensor) => {
    const s = index.series.get(sensor)!;
    return { sensor, counter: parseSensorName(sensor)?.quantity === 'energy', wrapAt: index.info.get(sensor)?.wrapAt, ...usableSamples(s.t, s.v, sensor) };
  });
  const powers: number[] = [];
  for (let k = 0; k < bins; k++) {
    const bin = { startMs: idle.startMs + k * width, endMs: k === bins - 1 ? idle.endMs : idle.startMs + (k + 1) * width };
    let joules = 0;
    let bare = false;
    for (const s of series) {
      // Only the samples that bracket the stretch: the cost is the baseline's samples once, not once per stretch.
      const from = Math.max(0, lastAtOrBefore(s.t, bin.startMs));
      const to = Math.min(s.t.length, lastAtOrBefore(s.t, bin.endMs) + 2);
      const part = { sensor: s.sensor, t: s.t.subarray(from, to), v: s.v.subarray(from, to) };
      const r = s.counter ? counterEnergy(part, bin, { wrapAt: s.wrapAt }) : integratePower(part, bin);
      if (r.spanMs < bin.endMs - bin.startMs) bare = true;
      joules += r.joules;
    }
    if (!bare) powers.push(joules / ((bin.endMs - bin.startMs) / 1000));
  }
  if (powers.length < MIN_IDLE_BINS) return null;
  const mean = powers.reduce((a, b) => a + b, 0) / powers.length;
  if (!(mean > 0)) return null;
  const variance = powers.reduce((a, b) => a + (b - mean) ** 2, 0) / (powers.length - 1);
  return Math.sqrt(variance) / mean;
}

function percent(x: number): string {
  return `${(100 * x).toFixed(1)} %`;
}

function seconds(x: number): string {
  return `${x >= 100 ? Math.round(x) : Number(x.toPrecision(3))} s`;
}

function ms(x: number): string {
  return `${Math.round(x).toLocaleString('en-US')} ms`;
}

function signedMs(x: number): string {
  return `${x >= 0 ? '+' : '−'}${ms(Math.abs(x))}`;
}

function ratio(x: number): string {
  return `${x.toFixed(2)} ×`;
}
