/**
 * How the nodes a campaign's runs ran on differ (issue 26): per run, how far its time and energy
 * lie from its configuration's mean (its relative residual, run / mean − 1), averaged per node
 * with an interval at the campaign's confidence. A node whose interval excludes 0 measures
 * differently from the others — chip-to-chip power differences of a few percent are common — and
 * a configuration whose runs all ran on one node cannot be told apart from that node's effect
 * (it is confounded with it).
 */
import type { CampaignNodes, NodeEffect } from '@erg/spec';
import { EnergyInputError } from './errors';
import { level, percent } from './percent';
import type { RunFigures } from './run-figures';
import { studentTQuantile } from './student-t';

/** At most this many nodes get an effect (those with the most runs); a cluster may have thousands. */
export const MAX_NODE_EFFECTS = 100;

/** At most this many confounded configurations are named. */
export const MAX_CONFOUNDED = 100;

/** One configuration with its counted runs (each with its node where known). */
export interface NodeRuns {
  key: string;
  runs: readonly RunFigures[];
}

type Figure = 'time' | 'energy';
const FIGURES: Record<Figure, (r: RunFigures) => number | null> = { time: (r) => r.timeS, energy: (r) => r.energyJ };

/** Per node: its counted runs and the relative residuals of their figures. */
interface NodeTally {
  runs: number;
  residuals: Record<Figure, number[]>;
}

/**
 * The node effects of a campaign's configurations; null when its counted runs (those with a time
 * or an energy) ran on fewer than 2 known nodes. Residuals come from configurations with at
 * least 2 runs with the figure and a positive mean.
 */
export function campaignNodes(configs: readonly NodeRuns[], options: { confidence: number }): CampaignNodes | null {
  const { confidence } = options;
  if (!(confidence > 0 && confidence < 1)) throw new EnergyInputError('ERG_ENERGY_BAD_ARGUMENT', `confidence must lie strictly between 0 and 1, got ${confidence}`);
  const counted = (r: RunFigures) => isNumber(r.timeS) || isNumber(r.energyJ);
  const tallies = new Map<string, NodeTally>();
  const tallyOf = (node: string) => {
    let t = tallies.get(node);
    if (!t) tallies.set(node, (t = { runs: 0, residuals: { time: [], energy: [] } }));
    return t;
  };
  for (const c of configs) for (const r of c.runs) if (counted(r) && isNode(r.node)) tallyOf(r.node).runs++;
  if (tallies.size < 2) return null;

  let residualRuns = 0;
  let residualConfigs = 0;
  for (const c of configs) {
    let used = false;
    for (const figure of ['time', 'energy'] as const) {
      const having = c.runs.filter((r) => isNumber(FIGURES[figure](r)));
      if (having.length < 2) continue;
      const mean = having.reduce((s, r) => s + FIGURES[figure](r)!, 0) / having.length;
      if (!(mean > 0)) continue;
      used = true;
      for (const r of having) if (isNode(r.node)) tallyOf(r.node).residuals[figure].push(FIGURES[figure](r)! / mean - 1);
    }
    if (used) {
      residualConfigs++;
      residualRuns += c.runs.filter(counted).length;
    }
  }

  const nodes = [...tallies].sort(([x, a], [y, b]) => b.runs - a.runs || (x < y ? -1 : x > y ? 1 : 0));
  const effects = nodes.slice(0, MAX_NODE_EFFECTS).map(([node, t]): NodeEffect => {
    const time = meanWithInterval(t.residuals.time, confidence);
    const energy = meanWithInterval(t.residuals.energy, confidence);
    return { node, runs: t.runs, time, energy, distinguishable: excludesZero(time.interval) || excludesZero(energy.interval) };
  });
  const confounded = confoundedConfigurations(configs, counted);
  return { nodes: tallies.size, effects, confounded: confounded.slice(0, MAX_CONFOUNDED), note: noteOf(effects, confounded, tallies.size, residualRuns, residualConfigs, confidence) };
}

/** Configurations whose counted runs on known nodes (at least 2) all ran on one node. */
function confoundedConfigurations(configs: readonly NodeRuns[], counted: (r: RunFigures) => boolean): CampaignNodes['confounded'] {
  const out: CampaignNodes['confounded'] = [];
  for (const c of configs) {
    const onNodes = c.runs.filter((r) => counted(r) && isNode(r.node));
    if (onNodes.length >= 2 && onNodes.every((r) => r.node === onNodes[0]!.node)) out.push({ key: c.key, node: onNodes[0]!.node!, runs: onNodes.length });
  }
  return out;
}

/** The mean of the residuals with its t-interval at `confidence` (null with fewer than 2). */
function meanWithInterval(xs: readonly number[], confidence: number): NodeEffect['time'] {
  const n = xs.length;
  if (n === 0) return { mean: null, interval: null };
  const mean = xs.reduce((s, x) => s + x, 0) / n;
  if (n < 2) return { mean, interval: null };
  let ss = 0;
  for (const x of xs) ss += (x - mean) ** 2;
  const half = studentTQuantile((1 + confidence) / 2, n - 1) * Math.sqrt(ss / (n - 1) / n);
  return { mean, interval: [mean - half, mean + half] };
}

function excludesZero(interval: [number, number] | null): boolean {
  return interval !== null && (interval[0] > 0 || interval[1] < 0);
}

/** The node effects in words: what was compared, the nodes that measure differently, the confounded configurations. */
function noteOf(effects: readonly NodeEffect[], confounded: CampaignNodes['confounded'], nodes: number, runs: number, configs: number, confidence: number): string {
  const parts = [
    `relative residuals (a run's figure / its configuration's mean − 1) of ${runs} run${runs === 1 ? '' : 's'} of ${configs} configuration${configs === 1 ? '' : 's'} with at least 2 runs, on ${nodes} nodes, at ${level(confidence)}`,
  ];
  const differing = effects.filter((e) => e.distinguishable);
  if (differing.length === 0) parts.push('no node measures distinguishably differently');
  else {
    for (const e of differing) {
      const said = (['time', 'energy'] as const).filter((f) => excludesZero(e[f].interval)).map((f) => `${signed(e[f].mean!)} ${f} [${signed(e[f].interval![0])}, ${signed(e[f].interval![1])}]`);
      parts.push(`${e.node} measures ${said.join(' and ')}`);
    }
  }
  if (effects.length < nodes) parts.push(`effects shown for the ${effects.length} nodes with the most runs`);
  if (confounded.length > 0) {
    const named = confounded.slice(0, 3).map((c) => `${c.key} on ${c.node}`).join(', ');
    parts.push(`${confounded.length} configuration${confounded.length === 1 ? '' : 's'} ran on one node only (${named}${confounded.length > 3 ? ` and ${confounded.length - 3} more` : ''}): ${confounded.length === 1 ? 'its figures cannot' : 'their figures cannot'} be told apart from that node's effect`);
  }
  return parts.join('; ');
}

function signed(x: number): string {
  return `${x > 0 ? '+' : x < 0 ? '−' : ''}${percent(Math.abs(x))}`;
}

function isNode(node: string | null | undefined): node is string {
  return typeof node === 'string' && node !== '';
}

function isNumber(x: number | null | undefined): x is number {
  return typeof x === 'number' && Number.isFinite(x);
}
