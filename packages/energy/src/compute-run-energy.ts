import { counterEnergy } from './counter';
import { EnergyInputError } from './errors';
import { integratePower } from './integrate';
import { checkWindow, DEFAULT_GAP_FACTOR, usableSamples, valueAt, type Samples } from './sampling';
import { parseSensorName, type Gap, type NodeTelemetry, type SensorInfo, type Series, type Window } from './telemetry';

/**
 * How a figure was obtained, from the strongest claim to the weakest: every term read from a
 * hardware energy counter; at least one term integrated from power readings; at least one
 * term from a sensor whose source is a model (an estimate, not a measurement). Where nothing
 * was measured at all the method is 'integrated' (no claim of a counter) and coverage is 0.
 */
export type EnergyMethod = 'counter' | 'integrated' | 'model';

/** A gap in one sensor used for a figure. */
export interface SensorGap extends Gap {
  node: string;
  sensor: string;
}

/** One node's energy over the run window. */
export interface NodeEnergy {
  node: string;
  energyJ: number;
  method: EnergyMethod;
  /** 0–1: the minimum over the sensors used of the share of the window they cover; 0 when a GPU or module could not be measured at all. */
  coverage: number;
  /** The sensors whose energy makes up energyJ, e.g. ['module0.energy', 'module1.power']. */
  sensorsUsed: string[];
  /** J per component kind (module, gpu, cpu, grace, memory): exactly the terms that add up to energyJ. */
  components: Record<string, number>;
  /**
   * J per component kind for sensors measured but NOT counted in energyJ, for information only:
   * on a module node the parts inside the modules (gpu, grace, cpu, sysio, memory and
   * `dram_estimate` = Grace − CPU − SysIO); elsewhere a whole-node meter (`node`), which has a
   * different scope than GPU + CPU + DRAM. Never add these to energyJ.
   */
  breakdown: Record<string, number>;
}

/** The idle baseline and the energy net of it. */
export interface IdleEnergy {
  /** Mean power over the baseline window, summed over nodes, by the same selection rules as the run. */
  powerW: number;
  /** powerW × timeS: what the nodes would have used idling for the run's duration. */
  energyJ: number;
  /** The run's energyJ − this idle energy. */
  netEnergyJ: number;
  /** Coverage of the baseline window, as for the run. */
  coverage: number;
  method: EnergyMethod;
}

/** A run's energy figures over its window (the contract in docs/design.md, "Energy definitions"). */
export interface RunEnergy {
  /** T = (endMs − startMs) / 1000. */
  timeS: number;
  /** E, summed over nodes. */
  energyJ: number;
  /** EDP = E · T. */
  edpJs: number;
  /** ED²P = E · T². */
  ed2pJs2: number;
  /** E / T. */
  avgPowerW: number;
  /** The weakest method over the nodes: model, else integrated, else counter. */
  method: EnergyMethod;
  /** 0–1: the minimum over the nodes (and so over every sensor used); 0 with no nodes. */
  coverage: number;
  /** J per component kind summed over nodes and indices; the values add up to energyJ. */
  components: Record<string, number>;
  /** Informational energies not counted in energyJ (see NodeEnergy.breakdown), summed over nodes. */
  breakdown: Record<string, number>;
  nodes: NodeEnergy[];
  gaps: SensorGap[];
  warnings: string[];
  idle?: IdleEnergy;
}

/** What computeRunEnergy needs. */
export interface RunEnergyInput {
  /** The workload's window, as the job script measured it. */
  window: Window;
  nodes: readonly NodeTelemetry[];
  /** An idle stretch (before the workload) whose mean power is the baseline. */
  idleBaseline?: Window;
  /** Gap threshold in median sampling intervals (default 5). */
  gapFactor?: number;
}

/**
 * Energy-to-solution of one run, per node and summed, never double counting:
 *
 * - A node with `moduleN.*` sensors (GH200: the module covers GPU + Grace + memory) counts its
 *   modules only — per module the `moduleN.energy` counter, else ∫ `moduleN.power`. GPU, Grace,
 *   CPU, SysIO and memory sensors go to `breakdown`. A GPU or Grace without a matching module
 *   index is not covered by any module: warning, coverage 0.
 * - Any other node counts each GPU (`gpuN.energy` counter, else ∫ `gpuN.power`), each CPU
 *   (`cpuN.energy` — RAPL package — else ∫ `cpuN.power`, else Grace `graceN.energy`/`.power`)
 *   and memory (`memoryN.energy`, else `.power`; left out where Grace was used, since Grace
 *   includes its memory). A counter is used when it has samples in the window; otherwise
 *   power is.
 * - A GPU (or module) with neither counter nor power never counts as 0 J silently: a warning,
 *   and coverage 0. A node without any CPU energy sensor gets a warning only (reading RAPL
 *   needs root on most systems, so this is common and the GPUs still measure the bulk).
 * - Checks on GH200 power readings (warnings): GPU + Grace ≤ Module × 1.01, and
 *   DRAM ≈ Grace − CPU − SysIO ≥ 0, at every timestamp of either series (interpolated).
 *
 * A node listed twice is counted once (the first entry), with a warning: several ranks on one
 * node must not each count the whole node.
 */
export function computeRunEnergy(input: RunEnergyInput): RunEnergy {
  const { window, idleBaseline } = input;
  checkWindow(window);
  if (!(window.endMs > window.startMs)) {
    throw new EnergyInputError('ERG_ENERGY_BAD_WINDOW', `run window [${window.startMs}, ${window.endMs}] is empty; a run's window must have end > start`);
  }
  if (idleBaseline) {
    checkWindow(idleBaseline, 'idle baseline');
    if (!(idleBaseline.endMs > idleBaseline.startMs)) {
      throw new EnergyInputError('ERG_ENERGY_BAD_WINDOW', `idle baseline [${idleBaseline.startMs}, ${idleBaseline.endMs}] is empty; it must have end > start`);
    }
  }
  const gapFactor = input.gapFactor ?? DEFAULT_GAP_FACTOR;
  const warnings: string[] = [];
  const nodes: NodeTelemetry[] = [];
  const names = new Set<string>();
  for (const n of input.nodes) {
    if (names.has(n.node)) {
      warnings.push(`${n.node}: listed more than once; counted once (the first entry)`);
      continue;
    }
    names.add(n.node);
    nodes.push(n);
  }
  if (nodes.length === 0) warnings.push('no nodes: nothing was measured');

  const timeS = (window.endMs - window.startMs) / 1000;
  const perNode: NodeEnergy[] = [];
  const gaps: SensorGap[] = [];
  const components: Record<string, number> = {};
  const breakdown: Record<string, number> = {};
  for (const telemetry of nodes) {
    const index = indexNode(telemetry, warnings);
    const result = nodeEnergy(index, window, gapFactor);
    warnings.push(...result.warnings);
    warnings.push(...powerChecks(index, window));
    for (const term of result.terms) for (const g of term.gaps) gaps.push({ node: telemetry.node, sensor: term.sensor, ...g });
    addInto(components, result.node.components);
    addInto(breakdown, result.node.breakdown);
    perNode.push(result.node);
  }
  const energyJ = perNode.reduce((s, n) => s + n.energyJ, 0);
  const out: RunEnergy = {
    timeS,
    energyJ,
    edpJs: energyJ * timeS,
    ed2pJs2: energyJ * timeS * timeS,
    avgPowerW: energyJ / timeS,
    method: weakest(perNode.map((n) => n.method)),
    coverage: perNode.length === 0 ? 0 : Math.min(...perNode.map((n) => n.coverage)),
    components,
    breakdown,
    nodes: perNode,
    gaps,
    warnings,
  };
  if (idleBaseline) {
    let powerW = 0;
    let coverage = nodes.length === 0 ? 0 : 1;
    const methods: EnergyMethod[] = [];
    for (const telemetry of nodes) {
      const result = nodeEnergy(indexNode(telemetry, []), idleBaseline, gapFactor);
      // Mean power per sensor over the stretch it has samples for: dividing by the whole
      // baseline window would read missing edges as zero power.
      for (const term of result.terms) if (term.spanMs > 0) powerW += term.joules / (term.spanMs / 1000);
      coverage = Math.min(coverage, result.node.coverage);
      methods.push(result.node.method);
      warnings.push(...result.warnings.map((w) => `idle baseline: ${w}`));
    }
    const idleJ = powerW * timeS;
    out.idle = { powerW, energyJ: idleJ, netEnergyJ: energyJ - idleJ, coverage, method: weakest(methods) };
  }
  return out;
}

/** Energy per unit of work (J/step, J/sample, J/token); null when the count is not a positive number. */
export function perUnit(energyJ: number, count: number | null | undefined): number | null {
  if (typeof count !== 'number' || !Number.isFinite(count) || count <= 0 || !Number.isFinite(energyJ)) return null;
  return energyJ / count;
}

// ---------------------------------------------------------------------------------------------

interface NodeIndex {
  node: string;
  series: Map<string, Series>;
  info: Map<string, SensorInfo>;
  /** component → indices seen in any series or sensor description. */
  devices: Map<string, Set<string>>;
}

interface Term {
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
}

function indexNode(telemetry: NodeTelemetry, warnings: string[]): NodeIndex {
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
  for (const s of telemetry.series) {
    if (series.has(s.sensor)) {
      warnings.push(`${telemetry.node}: ${s.sensor} appears in more than one series; the first is used`);
      continue;
    }
    series.set(s.sensor, s);
    see(s.sensor);
  }
  for (const d of telemetry.sensors) {
    if (!info.has(d.sensor)) info.set(d.sensor, d);
    see(d.sensor);
  }
  return { node: telemetry.node, series, info, devices };
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
    return { ...common, joules: r.joules, coverage: r.coveredMs / windowMs, spanMs: r.spanMs, gaps: r.gaps, integrated: false, resets: r.resets };
  }
  const r = integratePower(series, window, { gapFactor });
  return { ...common, joules: r.joules, coverage: r.coveredMs / windowMs, spanMs: r.spanMs, gaps: r.gaps, integrated: true, resets: 0 };
}

/**
 * The first candidate with samples in the window; else the first that exists at all, whose
 * coverage is then 0 (with a warning); else null. Warnings go to `warnings` only for the
 * sensor chosen.
 */
function pick(index: NodeIndex, candidates: string[], window: Window, gapFactor: number, warnings: string[]): Term | null {
  let chosen: Term | null = null;
  for (const sensor of candidates) {
    const term = evaluate(index, sensor, window, gapFactor);
    if (!term) continue;
    if (term.spanMs > 0) {
      chosen = term;
      break;
    }
    chosen ??= term;
  }
  if (!chosen) return null;
  if (chosen.spanMs === 0) warnings.push(`${index.node}: ${chosen.sensor} has no samples in the window`);
  if (chosen.resets > 0) {
    warnings.push(
      `${index.node}: ${chosen.sensor} reset ${chosen.resets} time(s) in the window (no wrapAt known); energy used between a reset and the sample before it is lost`,
    );
  }
  return chosen;
}

function nodeEnergy(
  index: NodeIndex,
  window: Window,
  gapFactor: number,
): { node: NodeEnergy; terms: Term[]; warnings: string[] } {
  const warnings: string[] = [];
  const terms: Term[] = [];
  const breakdown: Record<string, number> = {};
  const inform = (kind: string, joules: number) => (breakdown[kind] = (breakdown[kind] ?? 0) + joules);
  let unmeasured = false;
  const node = index.node;
  const sources = (kind: string, i: string) => [`${kind}${i}.energy`, `${kind}${i}.power`];
  const modules = indicesOf(index, 'module');

  if (modules.length > 0) {
    for (const i of modules) {
      const term = pick(index, sources('module', i), window, gapFactor, warnings);
      if (term) terms.push(term);
      else {
        unmeasured = true;
        warnings.push(`${node}: module${i} has neither an energy counter nor a power reading; its energy is unknown (not 0), coverage 0`);
      }
    }
    for (const kind of ['gpu', 'grace']) {
      for (const i of indicesOf(index, kind)) {
        if (modules.includes(i)) continue;
        unmeasured = true;
        warnings.push(`${node}: ${kind}${i} has no module${i} sensor, so no module covers it; its energy is not in the node's total, coverage 0`);
      }
    }
    const parts: Record<string, Record<string, number>> = {};
    for (const kind of ['gpu', 'grace', 'cpu', 'sysio', 'memory']) {
      for (const i of indicesOf(index, kind)) {
        const term = pick(index, sources(kind, i), window, gapFactor, []);
        if (!term) continue;
        inform(kind, term.joules);
        (parts[i] ??= {})[kind] = term.joules;
      }
    }
    for (const p of Object.values(parts)) {
      if (p.grace !== undefined && p.cpu !== undefined && p.sysio !== undefined) inform('dram_estimate', p.grace - p.cpu - p.sysio);
    }
  } else {
    for (const i of indicesOf(index, 'gpu')) {
      const term = pick(index, sources('gpu', i), window, gapFactor, warnings);
      if (term) terms.push(term);
      else {
        unmeasured = true;
        warnings.push(`${node}: gpu${i} has neither an energy counter nor a power reading; its energy is unknown (not 0), coverage 0`);
      }
    }
    const cpuIndices = [...new Set([...indicesOf(index, 'cpu'), ...indicesOf(index, 'grace')])];
    let usedGrace = false;
    const cpuTerms: Term[] = [];
    for (const i of cpuIndices) {
      const term = pick(index, [...sources('cpu', i), ...sources('grace', i)], window, gapFactor, warnings);
      if (!term) continue;
      cpuTerms.push(term);
      usedGrace ||= term.kind === 'grace';
    }
    terms.push(...cpuTerms);
    if (cpuTerms.length === 0) {
      warnings.push(`${node}: no CPU energy counter or power reading (RAPL needs root on most systems); the node's energy excludes its CPUs`);
    }
    for (const i of indicesOf(index, 'memory')) {
      const term = pick(index, sources('memory', i), window, gapFactor, warnings);
      if (!term) continue;
      if (usedGrace) {
        warnings.push(`${node}: ${term.sensor} not added: the Grace reading used for the CPU already includes its memory`);
        inform(term.kind, term.joules);
      } else terms.push(term);
    }
    // Measured but outside the rule: a whole-node meter (another scope) and SysIO (inside Grace).
    for (const kind of ['node', 'sysio']) {
      for (const i of indicesOf(index, kind)) {
        const term = pick(index, sources(kind, i), window, gapFactor, []);
        if (term) inform(kind, term.joules);
      }
    }
  }

  if (terms.length === 0 && !unmeasured) warnings.push(`${node}: no energy counter or power reading at all; its energy is unknown (not 0), coverage 0`);
  const components: Record<string, number> = {};
  for (const t of terms) components[t.kind] = (components[t.kind] ?? 0) + t.joules;
  const coverage = unmeasured || terms.length === 0 ? 0 : Math.min(...terms.map((t) => t.coverage));
  const method: EnergyMethod = terms.some((t) => t.model) ? 'model' : terms.length === 0 || terms.some((t) => t.integrated) ? 'integrated' : 'counter';
  return {
    node: {
      node,
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

/**
 * GH200 plausibility checks on power readings inside the window, per index i where the sensors
 * exist: gpu_i + grace_i ≤ module_i × 1.01, and grace_i − cpu_i − sysio_i (the DRAM estimate) ≥ 0.
 */
function powerChecks(index: NodeIndex, window: Window): string[] {
  const warnings: string[] = [];
  const power = (sensor: string): Samples | null => {
    const s = index.series.get(sensor);
    if (!s) return null;
    const samples = usableSamples(s.t, s.v, sensor);
    return samples.t.length > 0 ? samples : null;
  };
  for (const i of indicesOf(index, 'module')) {
    const [m, g, c] = [power(`module${i}.power`), power(`gpu${i}.power`), power(`grace${i}.power`)];
    if (!m || !g || !c) continue;
    const r = atCommonTimes([m, g, c], window, ([mv, gv, cv]) => gv! + cv! <= mv! * 1.01);
    if (r.failed > 0) {
      warnings.push(`${index.node}: gpu${i} + grace${i} power exceeded module${i} + 1 % at ${r.failed} of ${r.checked} timestamps; check which sensor's scope or averaging differs`);
    }
  }
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

function addInto(target: Record<string, number>, source: Record<string, number>): void {
  for (const [k, v] of Object.entries(source)) target[k] = (target[k] ?? 0) + v;
}

function weakest(methods: EnergyMethod[]): EnergyMethod {
  if (methods.includes('model')) return 'model';
  if (methods.includes('integrated') || methods.length === 0) return 'integrated';
  return 'counter';
}
