import { EnergyInputError } from './errors';
import { indexNode, nodeEnergy, powerChecks, weakest } from './node-energy';
import { idleNodeFigures } from './node-power';
import { checkWindow, DEFAULT_GAP_FACTOR } from './sampling';
import type { IdleNodeFigures, NodeEnergy, RunEnergy, SensorGap } from '@erg/spec';
import { distinctNodes, type NodeTelemetry, type Window } from './telemetry';

// The result types are the API's (GET /v1/runs/:id/energy): one definition, in @erg/spec.
export type { EnergyMethod, IdleEnergy, IdleNodeFigures, NodeEnergy, RunEnergy, SensorGap } from '@erg/spec';

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
  const nodes = distinctNodes(input.nodes, warnings);
  if (nodes.length === 0) warnings.push('no nodes: nothing was measured');

  const timeS = (window.endMs - window.startMs) / 1000;
  const perNode: NodeEnergy[] = [];
  const gaps: SensorGap[] = [];
  const components: Record<string, number> = {};
  const breakdown: Record<string, number> = {};
  let slowestIntervalMs = 0;
  for (const telemetry of nodes) {
    const index = indexNode(telemetry, warnings);
    const result = nodeEnergy(index, window, gapFactor);
    warnings.push(...result.warnings);
    warnings.push(...powerChecks(index, window));
    for (const term of result.terms) for (const g of term.gaps) gaps.push({ node: telemetry.node, sensor: term.sensor, ...g });
    for (const term of result.terms) slowestIntervalMs = Math.max(slowestIntervalMs, term.medianIntervalMs ?? 0);
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
    flags: [],
  };
  if (slowestIntervalMs > 0 && timeS * 1000 < MIN_INTERVALS_PER_RUN * slowestIntervalMs) {
    out.flags.push('too_short');
    warnings.push(
      `the run lasted ${timeS.toPrecision(3)} s, fewer than ${MIN_INTERVALS_PER_RUN} sampling intervals (${slowestIntervalMs.toPrecision(3)} ms): too few samples to trust its energy`,
    );
  }
  if (idleBaseline) {
    let powerW = 0;
    let coverage = nodes.length === 0 ? 0 : 1;
    const perNodeIdle: IdleNodeFigures[] = [];
    for (const telemetry of nodes) {
      // Per node, kept: a later run's cooldown compares the node with these (node-power.ts).
      const { warnings: idleWarnings, ...figures } = idleNodeFigures(telemetry, idleBaseline, gapFactor);
      powerW += figures.powerW ?? 0;
      coverage = Math.min(coverage, figures.coverage);
      perNodeIdle.push(figures);
      warnings.push(...idleWarnings.map((w) => `idle baseline: ${w}`));
    }
    const idleJ = powerW * timeS;
    out.idle = {
      powerW, energyJ: idleJ, netEnergyJ: energyJ - idleJ, coverage, method: weakest(perNodeIdle.map((n) => n.method)), nodes: perNodeIdle,
    };
    // Below zero by more than rounding: an idle draw equal to the run's is 0 J net, not a flag.
    if (out.idle.netEnergyJ < -1e-9 * Math.abs(energyJ)) {
      out.flags.push('negative_net_energy');
      warnings.push(
        `its net energy is negative (${out.idle.netEnergyJ.toPrecision(3)} J): the idle baseline drew ${powerW.toPrecision(3)} W, more than the run's ` +
          `${out.avgPowerW.toPrecision(3)} W on average — was something else running during the baseline?`,
      );
    }
  }
  return out;
}

/** A run shorter than this many sampling intervals of its slowest sensor is flagged too_short. */
export const MIN_INTERVALS_PER_RUN = 10;

/**
 * Energy per unit of work (J/step, J/sample, J/token); null when the count is not a positive
 * number, or so small that the quotient is no finite number (a workload's 1e-320 steps).
 */
export function perUnit(energyJ: number, count: number | null | undefined): number | null {
  if (typeof count !== 'number' || !Number.isFinite(count) || count <= 0 || !Number.isFinite(energyJ)) return null;
  const quotient = energyJ / count;
  return Number.isFinite(quotient) ? quotient : null;
}

function addInto(target: Record<string, number>, source: Record<string, number>): void {
  for (const [k, v] of Object.entries(source)) target[k] = (target[k] ?? 0) + v;
}
