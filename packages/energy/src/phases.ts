import type { PhaseAttributionMethod, PhaseEnergy, PhaseFit, RunPhases, StepEnergy, StepStatistics, UnmarkedEnergy } from '@erg/spec';
import { EnergyInputError } from './errors';
import { indexNode, nodeEnergy, type NodeIndex, type Term } from './node-energy';
import { attributeSensor, type SensorAttribution } from './phase-attribution';
import { nodeTimeline, type Label, type NodeTimeline, type PhaseMarkInput, type Segment } from './phase-timeline';
import { checkWindow, DEFAULT_GAP_FACTOR } from './sampling';
import { sensorReadings, type SensorReadings, type SensorTiming } from './sensor-readings';
import { sensorTimingOf } from './sensor-timing';
import { distinctNodes, type NodeTelemetry, type Window } from './telemetry';

// The result types are the API's (GET /v1/runs/:id/phases): one definition, in @erg/spec.
export type { PhaseAttributionMethod, PhaseEnergy, PhaseFit, RunPhases, StepEnergy, StepStatistics, UnmarkedEnergy } from '@erg/spec';
export type { PhaseMarkInput } from './phase-timeline';
export type { SensorTiming } from './sensor-readings';

/** What computeRunPhases needs. */
export interface RunPhasesInput {
  /** The workload's window, as the job script measured it. */
  window: Window;
  /** The same telemetry computeRunEnergy gets: the phases divide exactly its energy. */
  nodes: readonly NodeTelemetry[];
  /** The run's phase and step marks, on the samples' timeline, any order (equal times: the order written). */
  marks: readonly PhaseMarkInput[];
  /** Gap threshold in median sampling intervals (default 5). */
  gapFactor?: number;
  /**
   * Per sensor name (`module0.power`, `gpu0.energy`; the same on every node), what interval its
   * readings cover: e.g. `{ averagingMs: 50 }` for GH200 hwmon at its default. Default: a reading
   * covers the time since the one before. Phases shorter than a reading are resolved only as
   * well as this is known.
   */
  sensorTiming?: Readonly<Record<string, SensorTiming>>;
  /** regression (the default; proportional where the readings cannot separate the phases), or proportional throughout. */
  attribution?: PhaseAttributionMethod;
}

/** A step shorter than this many sampling intervals of its node's slowest sensor is below the sensors' resolution. */
export const MIN_INTERVALS_PER_STEP = 2;

/**
 * A run's energy per phase and per step. Each node's phases divide that node's energy as
 * computeRunEnergy counts it (the same sensors: modules on GH200, else GPUs, CPUs and memory),
 * so the phases' self energies and the unmarked time add up to the run's energy:
 *
 * 1. Per node, the marks become a timeline (phase-timeline.ts): the window cut into segments,
 *    each labelled by its innermost open phase, or unmarked.
 * 2. Per sensor counted, its energy is divided among those labels (phase-attribution.ts): each
 *    label's mean power is estimated from all its readings by non-negative least squares — which
 *    resolves phases shorter than a reading — or, where the readings cannot separate the labels,
 *    by splitting each reading's energy by time; the estimates are rescaled to add up to the
 *    sensor's energy, and the regression's residuals give each phase a 95 % interval.
 * 3. Per phase name, over occurrences and nodes: inclusive figures (its time and that of phases
 *    nested in it), self figures (its leaf-label share).
 * 4. Per step counter, a step spans two consecutive `step` marks on one node; its energy is that
 *    node's sensors read directly (counters interpolated, power integrated) between them.
 *
 * A node listed twice is counted once (the first entry), and marks of a node without telemetry
 * are ignored, each with a warning.
 */
export function computeRunPhases(input: RunPhasesInput): RunPhases {
  const { window } = input;
  checkWindow(window);
  if (!(window.endMs > window.startMs)) {
    throw new EnergyInputError('ERG_ENERGY_BAD_WINDOW', `run window [${window.startMs}, ${window.endMs}] is empty; a run's window must have end > start`);
  }
  const options: AttributionOptions = {
    window,
    gapFactor: input.gapFactor ?? DEFAULT_GAP_FACTOR,
    sensorTiming: input.sensorTiming ?? {},
    method: input.attribution ?? 'regression',
  };
  const warnings: string[] = [];
  const nodes = distinctNodes(input.nodes, warnings);
  if (nodes.length === 0) warnings.push('no nodes: nothing was measured');
  const marksByNode = groupMarks(input.marks, new Set(nodes.map((n) => n.node)), warnings);

  const totals = new PhaseTotals();
  const steps = new StepTotals();
  const fits: PhaseFit[] = [];
  let energyJ = 0;
  let resolutionMs: number | null = null;
  // For the run's overall rescale: the sensors' energy and what their estimates added up to.
  let rescaledJ = 0;
  let estimatedJ = 0;
  for (const telemetry of nodes) {
    const timeline = nodeTimeline(telemetry.node, marksByNode.get(telemetry.node) ?? [], window);
    warnings.push(...timeline.warnings);
    const sensors = attributeNode(telemetry, timeline, options, warnings);
    totals.addTimes(timeline);
    let nodeResolutionMs: number | null = null;
    for (const s of sensors) {
      energyJ += s.term.joules;
      totals.addEnergy(timeline.segments, s.attribution);
      if (s.attribution.estimatedJ > 0) {
        rescaledJ += s.attribution.rescaledJ;
        estimatedJ += s.attribution.estimatedJ;
      }
      if (s.readings.resolutionMs !== null) nodeResolutionMs = Math.max(nodeResolutionMs ?? 0, s.readings.resolutionMs);
      fits.push({
        node: telemetry.node,
        sensor: s.term.sensor,
        energyJ: s.term.joules,
        method: s.attribution.method,
        observations: s.attribution.observations,
        labels: s.attribution.labels,
        rescale: s.attribution.rescale,
      });
    }
    if (nodeResolutionMs !== null) resolutionMs = Math.max(resolutionMs ?? 0, nodeResolutionMs);
    steps.add(timeline, sensors.map((s) => s.readings), nodeResolutionMs);
  }

  const phases = totals.phases(energyJ);
  const unmarked = totals.unmarked(energyJ);
  const stepEnergy = steps.summaries(warnings);
  // The weakest claim: proportional where any phase's is, or where nothing was regressed at all.
  const regressed = fits.some((f) => f.method === 'regression') && ![...phases, unmarked].some((p) => p.method === 'proportional' && p.timeS > 0);
  return {
    timeS: (window.endMs - window.startMs) / 1000,
    energyJ,
    method: regressed ? 'regression' : 'proportional',
    resolutionMs,
    rescale: estimatedJ > 0 ? rescaledJ / estimatedJ : null,
    phases,
    unmarked,
    steps: stepEnergy,
    fits,
    warnings,
  };
}

interface AttributionOptions {
  window: Window;
  gapFactor: number;
  sensorTiming: Readonly<Record<string, SensorTiming>>;
  method: PhaseAttributionMethod;
}

/** One counted sensor of a node: its term in the node's energy, its readings, how its energy divides. */
interface AttributedSensor {
  term: Term;
  readings: SensorReadings;
  attribution: SensorAttribution;
}

/** Divides each sensor the node's energy counts among the node's labels. */
function attributeNode(telemetry: NodeTelemetry, timeline: NodeTimeline, options: AttributionOptions, warnings: string[]): AttributedSensor[] {
  const index: NodeIndex = indexNode(telemetry, warnings);
  const energy = nodeEnergy(index, options.window, options.gapFactor);
  warnings.push(...energy.warnings);
  const out: AttributedSensor[] = [];
  for (const term of energy.terms) {
    const series = index.series.get(term.sensor);
    if (!series) continue; // nodeEnergy only returns terms of series it has
    const info = index.info.get(term.sensor);
    // The caller's word first (benches, imports), else what the sensor and its source say (sensor-timing.ts).
    const timing = Object.hasOwn(options.sensorTiming, term.sensor) ? options.sensorTiming[term.sensor] : sensorTimingOf(term.sensor, info);
    const readings = sensorReadings(series, info, options.window, options.gapFactor, timing);
    const attribution = attributeSensor({
      who: `${telemetry.node} ${term.sensor}`,
      segments: timeline.segments,
      readings,
      joules: term.joules,
      span: readings.span,
      method: options.method,
    });
    warnings.push(...attribution.warnings);
    out.push({ term, readings, attribution });
  }
  return out;
}

/** The marks by node; those of a node without telemetry are dropped with a warning (no energy to attribute). */
function groupMarks(marks: readonly PhaseMarkInput[], nodes: ReadonlySet<string>, warnings: string[]): Map<string, PhaseMarkInput[]> {
  const byNode = new Map<string, PhaseMarkInput[]>();
  const orphans = new Map<string, number>();
  for (const m of marks) {
    if (!nodes.has(m.node)) {
      orphans.set(m.node, (orphans.get(m.node) ?? 0) + 1);
      continue;
    }
    const list = byNode.get(m.node) ?? [];
    list.push(m);
    byNode.set(m.node, list);
  }
  for (const [node, n] of orphans) warnings.push(`${node}: ${n} phase mark(s) from a node without telemetry ignored; its energy is not known`);
  return byNode;
}

/** One phase's (or the unmarked time's) figures as they are summed over nodes and sensors. */
interface Tally {
  occurrences: number;
  timeMs: number;
  selfTimeMs: number;
  energyJ: number;
  selfEnergyJ: number;
  halfWidthSq: number;
  selfHalfWidthSq: number;
  proportional: boolean;
}

/** The per-phase sums. Key null: the unmarked time. */
class PhaseTotals {
  private readonly byLabel = new Map<Label, Tally>();

  private tally(label: Label): Tally {
    let t = this.byLabel.get(label);
    if (!t) {
      t = { occurrences: 0, timeMs: 0, selfTimeMs: 0, energyJ: 0, selfEnergyJ: 0, halfWidthSq: 0, selfHalfWidthSq: 0, proportional: false };
      this.byLabel.set(label, t);
    }
    return t;
  }

  /** A node's phase times: inclusive while a phase is open anywhere in the stack, self while it is innermost. */
  addTimes(timeline: NodeTimeline): void {
    for (const [name, n] of timeline.occurrences) this.tally(name).occurrences += n;
    for (const seg of timeline.segments) {
      const d = seg.toMs - seg.fromMs;
      this.tally(seg.leaf).selfTimeMs += d;
      if (seg.leaf === null) this.tally(null).timeMs += d;
      for (const name of seg.open) this.tally(name).timeMs += d;
    }
  }

  /**
   * One sensor's energy on a node's segments, and its uncertainty: per phase, the time each label
   * spends under it (inclusive) or as it (self) is what the sensor's interval half-width needs.
   * Sensors are independent, so their squared half-widths add.
   */
  addEnergy(segments: readonly Segment[], attribution: SensorAttribution): void {
    if (attribution.span.toMs <= attribution.span.fromMs) return;
    const inclusive = new Map<Label, Map<Label, number>>();
    const self = new Map<Label, Map<Label, number>>();
    const addMs = (into: Map<Label, Map<Label, number>>, key: Label, leaf: Label, ms: number) => {
      const m = into.get(key) ?? new Map<Label, number>();
      m.set(leaf, (m.get(leaf) ?? 0) + ms);
      into.set(key, m);
    };
    for (let s = 0; s < segments.length; s++) {
      const seg = segments[s]!;
      const e = attribution.segmentJ[s]!;
      const ms = Math.max(0, Math.min(seg.toMs, attribution.span.toMs) - Math.max(seg.fromMs, attribution.span.fromMs));
      const keys: readonly Label[] = seg.leaf === null ? [null] : seg.open;
      this.tally(seg.leaf).selfEnergyJ += e;
      addMs(self, seg.leaf, seg.leaf, ms);
      for (const key of keys) {
        this.tally(key).energyJ += e;
        addMs(inclusive, key, seg.leaf, ms);
      }
    }
    const touchesProportional = (byLeaf: Map<Label, number>) => [...byLeaf].some(([leaf, ms]) => ms > 0 && attribution.proportional.has(leaf));
    for (const [key, byLeaf] of inclusive) {
      const t = this.tally(key);
      t.halfWidthSq += attribution.halfWidthSq(byLeaf);
      t.proportional ||= touchesProportional(byLeaf);
    }
    for (const [key, byLeaf] of self) {
      const t = this.tally(key);
      t.selfHalfWidthSq += attribution.halfWidthSq(byLeaf);
      t.proportional ||= touchesProportional(byLeaf);
    }
  }

  /** The phases, largest inclusive energy first. */
  phases(runJ: number): PhaseEnergy[] {
    const out: PhaseEnergy[] = [];
    for (const [name, t] of this.byLabel) {
      if (name === null) continue;
      const timeS = t.timeMs / 1000;
      out.push({
        name,
        occurrences: t.occurrences,
        timeS,
        selfTimeS: t.selfTimeMs / 1000,
        energyJ: t.energyJ,
        selfEnergyJ: t.selfEnergyJ,
        meanPowerW: timeS > 0 ? t.energyJ / timeS : null,
        share: runJ !== 0 ? t.energyJ / runJ : null,
        ci95J: t.proportional ? null : Math.sqrt(t.halfWidthSq),
        selfCi95J: t.proportional ? null : Math.sqrt(t.selfHalfWidthSq),
        method: t.proportional ? 'proportional' : 'regression',
      });
    }
    return out.sort((a, b) => b.energyJ - a.energyJ || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  unmarked(runJ: number): UnmarkedEnergy {
    const t = this.byLabel.get(null);
    const timeS = (t?.timeMs ?? 0) / 1000;
    const energyJ = t?.energyJ ?? 0;
    const proportional = t?.proportional ?? false;
    return {
      timeS,
      energyJ,
      meanPowerW: timeS > 0 ? energyJ / timeS : null,
      share: runJ !== 0 ? energyJ / runJ : null,
      ci95J: proportional ? null : Math.sqrt(t?.halfWidthSq ?? 0),
      method: proportional ? 'proportional' : 'regression',
    };
  }
}

/** Per step counter name, its steps' energy and time over the nodes. */
class StepTotals {
  private readonly byName = new Map<string, { count: number; energyJ: number[]; timeS: number[]; belowResolution: number }>();

  /** A node's steps: between consecutive marks, the node's sensors' energy read from their curves. */
  add(timeline: NodeTimeline, readings: readonly SensorReadings[], resolutionMs: number | null): void {
    for (const [name, times] of timeline.steps) {
      const s = this.byName.get(name) ?? { count: 0, energyJ: [], timeS: [], belowResolution: 0 };
      s.count += times.length;
      for (let i = 1; i < times.length; i++) {
        const [a, b] = [times[i - 1]!, times[i]!];
        s.energyJ.push(readings.reduce((sum, r) => sum + r.energyAt(b) - r.energyAt(a), 0));
        s.timeS.push((b - a) / 1000);
        if (resolutionMs !== null && b - a < MIN_INTERVALS_PER_STEP * resolutionMs) s.belowResolution += 1;
      }
      this.byName.set(name, s);
    }
  }

  summaries(warnings: string[]): StepEnergy[] {
    const out: StepEnergy[] = [];
    for (const [name, s] of [...this.byName].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (s.belowResolution > 0) {
        warnings.push(
          `steps ${name}: ${s.belowResolution} of ${s.energyJ.length} lasted less than ${MIN_INTERVALS_PER_STEP} sampling intervals of their node's slowest sensor; ` +
            `their energy is interpolated between readings, below what the sensors resolve`,
        );
      }
      out.push({ name, count: s.count, energyJ: stepStatistics(s.energyJ), timeS: stepStatistics(s.timeS), belowResolution: s.belowResolution });
    }
    return out;
  }
}

/** n, mean, standard deviation and the 5th, 50th and 95th percentiles of some values. */
export function stepStatistics(values: readonly number[]): StepStatistics {
  const n = values.length;
  if (n === 0) return { n, mean: null, std: null, p5: null, p50: null, p95: null };
  const mean = values.reduce((s, x) => s + x, 0) / n;
  const std = n > 1 ? Math.sqrt(values.reduce((s, x) => s + (x - mean) ** 2, 0) / (n - 1)) : 0;
  const sorted = Float64Array.from(values).sort();
  return { n, mean, std, p5: quantile(sorted, 0.05), p50: quantile(sorted, 0.5), p95: quantile(sorted, 0.95) };
}

/** The q-quantile of sorted values, interpolating linearly between order statistics (R's type 7). */
function quantile(sorted: Float64Array, q: number): number {
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!);
}
