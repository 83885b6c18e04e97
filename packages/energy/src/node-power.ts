// One node's mean power and GPU temperatures over a window: its idle figures (computeRunEnergy's
// idle baseline, per node) and what a cooldown compares with them. The agent computes the same
// figures over its last seconds of samples (@erg/energy/node-power, bundled without zod), so a
// node counts as cool by exactly the rules its idle reference was measured with.
import type { EnergyMethod, IdleNodeFigures } from '@erg/spec';
import { indexNode, nodeEnergy } from './node-energy';
import { DEFAULT_GAP_FACTOR } from './sampling';
import { parseSensorName, type NodeTelemetry, type Window } from './telemetry';

/** A node's mean power over a window and how it was obtained. */
export interface NodePower {
  /** Null when no sensor whose energy counts had samples in the window. */
  powerW: number | null;
  coverage: number;
  method: EnergyMethod;
  warnings: string[];
}

/**
 * The node's mean power over `window` by the energy selection rules (modules where the node has
 * them, else GPUs + CPUs + memory; a counter before power): for each sensor that counts, its
 * energy over the stretch it has samples for divided by that stretch — dividing by the whole
 * window would read missing edges as zero power — summed over the sensors.
 */
export function meanNodePower(telemetry: NodeTelemetry, window: Window, gapFactor = DEFAULT_GAP_FACTOR): NodePower {
  const result = nodeEnergy(indexNode(telemetry, []), window, gapFactor);
  let powerW: number | null = null;
  for (const term of result.terms) if (term.spanMs > 0) powerW = (powerW ?? 0) + term.joules / (term.spanMs / 1000);
  return { powerW, coverage: result.node.coverage, method: result.node.method, warnings: result.warnings };
}

/** Each GPU's temperature (`gpuN.temp`, °C) over the window: the mean and the highest of its samples there, by GPU index. */
export function gpuTemperatures(telemetry: NodeTelemetry, window: Window): IdleNodeFigures['gpus'] {
  const out: IdleNodeFigures['gpus'] = [];
  for (const s of telemetry.series) {
    const name = parseSensorName(s.sensor);
    if (!name || name.component !== 'gpu' || name.quantity !== 'temp' || name.index === '') continue;
    let sum = 0;
    let n = 0;
    let max = -Infinity;
    for (let i = 0; i < s.t.length; i++) {
      const t = s.t[i]!;
      const v = s.v[i]!;
      if (t < window.startMs || t > window.endMs || !Number.isFinite(v)) continue;
      sum += v;
      n += 1;
      if (v > max) max = v;
    }
    if (n > 0 && !out.some((g) => g.gpu === Number(name.index))) out.push({ gpu: Number(name.index), meanTempC: sum / n, maxTempC: max });
  }
  return out.sort((a, b) => a.gpu - b.gpu);
}

/** A node's figures over an idle baseline: its mean power and its GPUs' temperatures. */
export function idleNodeFigures(telemetry: NodeTelemetry, window: Window, gapFactor = DEFAULT_GAP_FACTOR): IdleNodeFigures & { warnings: string[] } {
  const power = meanNodePower(telemetry, window, gapFactor);
  return { node: telemetry.node, powerW: power.powerW, coverage: power.coverage, method: power.method, gpus: gpuTemperatures(telemetry, window), warnings: power.warnings };
}
