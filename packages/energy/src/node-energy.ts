// One node's energy over a window: which of its sensors count (modules on GH200; else GPUs, CPUs
// and memory), never two covering the same thing, and the GH200 plausibility checks. The rules
// are documented on computeRunEnergy (compute-run-energy.ts), which sums nodes into a run.
import { DATA_MOVEMENT_QUANTITIES } from '@erg/spec/sensors';
import { counterEnergy } from './counter';
import { integratePower } from './integrate';
import { usableSamples, valueAt, type Samples } from './sampling';
import { parseSensorName, POWER_STATE_QUANTITIES, type Gap, type NodeTelemetry, type SensorInfo, type Series, type Window } from './telemetry';
import type { EnergyMethod, NodeEnergy } from './compute-run-energy';

export interface NodeIndex {
  node: string;
  series: Map<string, Series>;
  info: Map<string, SensorInfo>;
  /** component → indices seen in any series or sensor description. */
  devices: Map<string, Set<string>>;
}

export interface Term {
  sensor: string;
  kind: string;
  joules: number;
  coverage: number;
  spanMs: number;
  gaps: Gap[];
  integrated: boolean;
  model: boolean;
  /** Counter resets met inside the window (a decrease with no wrapAt known). */
  resets: number;
  /** The series' median sampling interval; null with fewer than two samples. */
  medianIntervalMs: number | null;
}

/**
 * The sensors of one node that can bear on its energy, by the name they count under. Power-state
 * sensors (POWER_STATE_QUANTITIES) and data-movement rates (DATA_MOVEMENT_QUANTITIES: PCIe, NVLink,
 * C2C, host memory) are left out entirely — no series, no device, no warning — so a node that
 * reports them gets exactly the energy, method, coverage and warnings it would without (a link
 * sensor of a GPU erg has no power reading for must not make that GPU's energy "unknown").
 */
export function indexNode(telemetry: NodeTelemetry, warnings: string[]): NodeIndex {
  const series = new Map<string, Series>();
  const info = new Map<string, SensorInfo>();
  const devices = new Map<string, Set<string>>();
  const see = (sensor: string) => {
    const name = parseSensorName(sensor);
    if (!name) return;
    let set = devices.get(name.component);
    if (!set) devices.set(name.component, (set = new Set()));
    set.add(name.index);
  };
  // Every sensor counts under the scope its source declared, so no figure mixes one scope into
  // another's term (a module-wide counter named as a GPU's would count the module as the GPU).
  const declared = new Map<string, SensorInfo>();
  for (const d of telemetry.sensors) if (!declared.has(d.sensor) && !isStateSensor(d.sensor)) declared.set(d.sensor, d);
  // A reading whose source could not tell what it covers (NVML's power usage on a superchip whose
  // GPU-scope field failed: the GPU's or the whole module's) is neither added nor subtracted: as
  // gpuN.power it could double-count the module in the breakdown and the GPU + Grace ≤ Module check.
  const unknownScope = new Set<string>();
  for (const d of declared.values()) {
    if (d.scope !== UNKNOWN_SCOPE) continue;
    unknownScope.add(d.sensor);
    declared.delete(d.sensor);
    warnings.push(`${telemetry.node}: ${d.sensor} has an unknown scope (its source could not tell the GPU from the whole module); it is not added to or subtracted from any figure`);
  }
  const renamed = new Map<string, string>();
  for (const d of declared.values()) {
    const as = scopedName(d);
    if (as === d.sensor) continue;
    renamed.set(d.sensor, as);
    warnings.push(`${telemetry.node}: ${d.sensor} covers the ${d.scope} (its source says so); counted as ${as}`);
  }
  for (const s of telemetry.series) {
    if (isStateSensor(s.sensor) || unknownScope.has(s.sensor)) continue;
    const sensor = renamed.get(s.sensor) ?? s.sensor;
    if (series.has(sensor)) {
      warnings.push(`${telemetry.node}: ${sensor} appears in more than one series; the first is used`);
      continue;
    }
    series.set(sensor, sensor === s.sensor ? s : { ...s, sensor });
    see(sensor);
  }
  for (const d of declared.values()) {
    const sensor = renamed.get(d.sensor) ?? d.sensor;
    if (!info.has(sensor)) info.set(sensor, sensor === d.sensor ? d : { ...d, sensor });
    see(sensor);
  }
  return { node: telemetry.node, series, info, devices };
}

/** SensorInfo.scope of a reading whose source could not tell what it covers (@erg/spec SENSOR_SCOPES). */
const UNKNOWN_SCOPE = 'unknown';

function isStateSensor(sensor: string): boolean {
  const name = parseSensorName(sensor);
  return name !== null && (POWER_STATE_QUANTITIES.includes(name.quantity) || Object.hasOwn(DATA_MOVEMENT_QUANTITIES, name.quantity));
}

/** The name a sensor counts under: its own, or its declared scope's where that differs (`gpu0.energy`, scope module → `module0.energy`). */
function scopedName(d: SensorInfo): string {
  const name = parseSensorName(d.sensor);
  if (!d.scope || !name || name.component === d.scope || !/^[a-z]+$/.test(d.scope)) return d.sensor;
  return `${d.scope}${name.index}.${name.quantity}`;
}

function indicesOf(index: NodeIndex, component: string): string[] {
  return [...(index.devices.get(component) ?? [])].sort((a, b) => Number(a) - Number(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/** One sensor's energy over the window; null when the node has no series for it. */
function evaluate(index: NodeIndex, sensor: string, window: Window, gapFactor: number): Term | null {
  const series = index.series.get(sensor);
  if (!series) return null;
  const info = index.info.get(sensor);
  const windowMs = window.endMs - window.startMs;
  const name = parseSensorName(sensor);
  const common = { sensor, kind: name?.component ?? sensor, model: info?.source === 'model' };
  if (name?.quantity === 'energy') {
    const r = counterEnergy(series, window, { gapFactor, wrapAt: info?.wrapAt });
    return { ...common, joules: r.joules, coverage: r.coveredMs / windowMs, spanMs: r.spanMs, gaps: r.gaps, integrated: false, resets: r.resets, medianIntervalMs: r.medianIntervalMs };
  }
  const r = integratePower(series, window, { gapFactor });
  return { ...common, joules: r.joules, coverage: r.coveredMs / windowMs, spanMs: r.spanMs, gaps: r.gaps, integrated: true, resets: 0, medianIntervalMs: r.medianIntervalMs };
}

/** How much better another source's coverage must be before it replaces the preferred one (edge effects aside). */
const BETTER_COVERAGE = 0.01;

/**
 * The first candidate with samples in the window (a counter before power, by the callers' order);
 * else the first that exists at all, whose coverage is then 0 (with a warning); else null. A
 * counter that covers only part of the window is not silently preferred: a later candidate of the
 * same component that covers clearly more of it (integrated power reaching where the counter was
 * not read) is used instead, and a warning says which and why. Warnings go to `warnings` only for
 * the sensor chosen.
 */
function pick(index: NodeIndex, candidates: string[], window: Window, gapFactor: number, warnings: string[]): Term | null {
  let chosen: Term | null = null;
  let firstPresent: Term | null = null;
  for (const sensor of candidates) {
    const term = evaluate(index, sensor, window, gapFactor);
    if (!term) continue;
    firstPresent ??= term;
    if (term.spanMs === 0) continue;
    if (!chosen) chosen = term;
    else if (term.kind === chosen.kind && term.coverage > chosen.coverage + BETTER_COVERAGE) {
      warnings.push(
        `${index.node}: ${chosen.sensor} covers ${percent(chosen.coverage)} of the window and ${term.sensor} ${percent(term.coverage)}; ` +
          `the better-covered ${term.sensor} is used`,
      );
      chosen = term;
    }
  }
  chosen ??= firstPresent;
  if (!chosen) return null;
  if (chosen.spanMs === 0) warnings.push(`${index.node}: ${chosen.sensor} has no samples in the window`);
  if (chosen.resets > 0) {
    warnings.push(
      `${index.node}: ${chosen.sensor} reset ${chosen.resets} time(s) in the window (no usable wrapAt declared); energy used between a reset and the sample before it is lost`,
    );
  }
  return chosen;
}

function percent(x: number): string {
  return `${(100 * x).toFixed(1)} %`;
}

/**
 * One node's energy over a window by erg's selection rules (see computeRunEnergy): the sensors
 * whose energy counts, never two covering the same thing, and the ones measured for information.
 */
export function nodeEnergy(index: NodeIndex, window: Window, gapFactor: number): { node: NodeEnergy; terms: Term[]; warnings: string[] } {
  const selection = indicesOf(index, 'module').length > 0 ? moduleNodeTerms(index, window, gapFactor) : discreteNodeTerms(index, window, gapFactor);
  const { terms, unmeasured, breakdown, warnings } = selection;
  if (terms.length === 0 && !unmeasured) warnings.push(`${index.node}: no energy counter or power reading at all; its energy is unknown (not 0), coverage 0`);
  const components: Record<string, number> = {};
  for (const t of terms) components[t.kind] = (components[t.kind] ?? 0) + t.joules;
  const coverage = unmeasured || terms.length === 0 ? 0 : Math.min(...terms.map((t) => t.coverage));
  const method = weakest(terms.map((t): EnergyMethod => (t.model ? 'model' : t.integrated ? 'integrated' : 'counter')));
  return {
    node: {
      node: index.node,
      energyJ: terms.reduce((s, t) => s + t.joules, 0),
      method,
      coverage: Math.max(0, Math.min(1, coverage)),
      sensorsUsed: terms.map((t) => t.sensor),
      components,
      breakdown,
    },
    terms,
    warnings,
  };
}

/** The terms a node's energy is made of, whether any device could not be measured, and what is measured for information only. */
interface Selection {
  terms: Term[];
  unmeasured: boolean;
  breakdown: Record<string, number>;
  warnings: string[];
}

const sources = (kind: string, i: string) => [`${kind}${i}.energy`, `${kind}${i}.power`];

/** A node with module sensors (GH200): the modules count; what is inside them goes to the breakdown. */
function moduleNodeTerms(index: NodeIndex, window: Window, gapFactor: number): Selection {
  const sel: Selection = { terms: [], unmeasured: false, breakdown: {}, warnings: [] };
  const node = index.node;
  const modules = indicesOf(index, 'module');
  for (const i of modules) {
    const term = pick(index, sources('module', i), window, gapFactor, sel.warnings);
    if (term) sel.terms.push(term);
    else {
      sel.unmeasured = true;
      sel.warnings.push(`${node}: module${i} has neither an energy counter nor a power reading; its energy is unknown (not 0), coverage 0`);
    }
  }
  for (const kind of ['gpu', 'grace']) {
    for (const i of indicesOf(index, kind)) {
      if (modules.includes(i)) continue;
      sel.unmeasured = true;
      sel.warnings.push(`${node}: ${kind}${i} has no module${i} sensor, so no module covers it; its energy is not in the node's total, coverage 0`);
    }
  }
  const parts: Record<string, Record<string, number>> = {};
  for (const kind of ['gpu', 'grace', 'cpu', 'sysio', 'memory']) {
    for (const i of indicesOf(index, kind)) {
      const term = pick(index, sources(kind, i), window, gapFactor, []);
      if (!term) continue;
      inform(sel.breakdown, kind, term.joules);
      (parts[i] ??= {})[kind] = term.joules;
    }
  }
  for (const p of Object.values(parts)) {
    if (p.grace !== undefined && p.cpu !== undefined && p.sysio !== undefined) inform(sel.breakdown, 'dram_estimate', p.grace - p.cpu - p.sysio);
  }
  return sel;
}

/** Any other node: each GPU, the CPUs (RAPL, else Grace) and memory (unless Grace already holds it). */
function discreteNodeTerms(index: NodeIndex, window: Window, gapFactor: number): Selection {
  const sel: Selection = { terms: [], unmeasured: false, breakdown: {}, warnings: [] };
  const node = index.node;
  for (const i of indicesOf(index, 'gpu')) {
    const term = pick(index, sources('gpu', i), window, gapFactor, sel.warnings);
    if (term) sel.terms.push(term);
    else {
      sel.unmeasured = true;
      sel.warnings.push(`${node}: gpu${i} has neither an energy counter nor a power reading; its energy is unknown (not 0), coverage 0`);
    }
  }
  const cpuIndices = [...new Set([...indicesOf(index, 'cpu'), ...indicesOf(index, 'grace')])];
  let usedGrace = false;
  const cpuTerms: Term[] = [];
  for (const i of cpuIndices) {
    const term = pick(index, [...sources('cpu', i), ...sources('grace', i)], window, gapFactor, sel.warnings);
    if (!term) continue;
    cpuTerms.push(term);
    usedGrace ||= term.kind === 'grace';
  }
  sel.terms.push(...cpuTerms);
  if (cpuTerms.length === 0) {
    sel.warnings.push(`${node}: no CPU energy counter or power reading (RAPL needs root on most systems); the node's energy excludes its CPUs`);
  }
  for (const i of indicesOf(index, 'memory')) {
    const term = pick(index, sources('memory', i), window, gapFactor, sel.warnings);
    if (!term) continue;
    if (usedGrace) {
      sel.warnings.push(`${node}: ${term.sensor} not added: the Grace reading used for the CPU already includes its memory`);
      inform(sel.breakdown, term.kind, term.joules);
    } else sel.terms.push(term);
  }
  // Measured but outside the rule: a whole-node meter (another scope) and SysIO (inside Grace).
  for (const kind of ['node', 'sysio']) {
    for (const i of indicesOf(index, kind)) {
      const term = pick(index, sources(kind, i), window, gapFactor, []);
      if (term) inform(sel.breakdown, kind, term.joules);
    }
  }
  return sel;
}

function inform(breakdown: Record<string, number>, kind: string, joules: number): void {
  breakdown[kind] = (breakdown[kind] ?? 0) + joules;
}

/**
 * GH200 plausibility checks on power readings inside the window, per index i where the sensors
 * exist: gpu_i + grace_i ≤ module_i × 1.01, and grace_i − cpu_i − sysio_i (the DRAM estimate) ≥ 0.
 */
export function powerChecks(index: NodeIndex, window: Window): string[] {
  const warnings: string[] = [];
  for (const r of moduleFit(index, window)) {
    if (r.failed > 0) {
      warnings.push(`${index.node}: gpu${r.index} + grace${r.index} power exceeded module${r.index} + 1 % at ${r.failed} of ${r.checked} timestamps; check which sensor's scope or averaging differs`);
    }
  }
  const power = (sensor: string) => powerSamples(index, sensor);
  for (const i of indicesOf(index, 'grace')) {
    const [g, c, s] = [power(`grace${i}.power`), power(`cpu${i}.power`), power(`sysio${i}.power`)];
    if (!g || !c || !s) continue;
    const r = atCommonTimes([g, c, s], window, ([gv, cv, sv]) => gv! - cv! - sv! >= 0);
    if (r.failed > 0) {
      warnings.push(`${index.node}: DRAM estimate grace${i} − cpu${i} − sysio${i} was negative at ${r.failed} of ${r.checked} timestamps; these meters disagree`);
    }
  }
  return warnings;
}

/** How far a GH200 module's parts may exceed it before the check fails: 1 % (the meters' stated accuracy and averaging differ). */
export const MODULE_FIT_TOLERANCE = 0.01;

/** The check gpu_i + grace_i ≤ module_i × (1 + MODULE_FIT_TOLERANCE) at every common timestamp, per index i where all three power sensors exist. */
export interface ModuleFit {
  index: string;
  checked: number;
  failed: number;
  /** The largest (gpu + grace) / module seen, for the reader (NaN where nothing was checked). */
  maxRatio: number;
}

export function moduleFit(index: NodeIndex, window: Window): ModuleFit[] {
  const out: ModuleFit[] = [];
  for (const i of indicesOf(index, 'module')) {
    const [m, g, c] = [powerSamples(index, `module${i}.power`), powerSamples(index, `gpu${i}.power`), powerSamples(index, `grace${i}.power`)];
    if (!m || !g || !c) continue;
    let maxRatio = Number.NaN;
    const r = atCommonTimes([m, g, c], window, ([mv, gv, cv]) => {
      const ratio = (gv! + cv!) / mv!;
      if (!(ratio <= maxRatio)) maxRatio = ratio;
      return gv! + cv! <= mv! * (1 + MODULE_FIT_TOLERANCE);
    });
    out.push({ index: i, ...r, maxRatio });
  }
  return out;
}

function powerSamples(index: NodeIndex, sensor: string): Samples | null {
  const s = index.series.get(sensor);
  if (!s) return null;
  const samples = usableSamples(s.t, s.v, sensor);
  return samples.t.length > 0 ? samples : null;
}

/** Evaluates `ok` at every timestamp of any series where all of them (and the window) are defined. */
function atCommonTimes(all: Samples[], window: Window, ok: (values: number[]) => boolean): { checked: number; failed: number } {
  const from = Math.max(window.startMs, ...all.map((s) => s.t[0]!));
  const to = Math.min(window.endMs, ...all.map((s) => s.t[s.t.length - 1]!));
  const times: number[] = [];
  for (const s of all) for (const x of s.t) if (x >= from && x <= to) times.push(x);
  times.sort((a, b) => a - b);
  let checked = 0;
  let failed = 0;
  let prev = NaN;
  for (const x of times) {
    if (x === prev) continue;
    prev = x;
    checked++;
    if (!ok(all.map((s) => valueAt(s.t, s.v, x)))) failed++;
  }
  return { checked, failed };
}

/** The weakest claim among some figures' methods: model, else integrated (also for none: no counter was read), else counter. */
export function weakest(methods: EnergyMethod[]): EnergyMethod {
  if (methods.includes('model')) return 'model';
  if (methods.includes('integrated') || methods.length === 0) return 'integrated';
  return 'counter';
}
