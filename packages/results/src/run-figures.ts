import type { CarbonIntensityRow, NeighbourJob, RunMarkRecord, StoredSensor } from '@erg/db';
import { expandHostlist } from '@erg/slurm/hostlist';
import { clockCorrection, shiftMarks, shiftSeries } from './clock-correction';
import {
  assessPowerState, computeRunDataMovement, computeRunEnergy, computeRunPhases, perUnit, runCarbon, runCost, runValidity, type ClockOffset, type NodeTelemetry, type RunEnergy,
  type RunPhases, type SensorInfo, type Window,
} from '@erg/energy';
import { expandPower, type CampaignSpec, type ClusterCarbon, type ClusterPrice, type PowerRecord, type PowerState, type RunEnergyView, type SlurmEnergy } from '@erg/spec';

/**
 * A run's figures from everything they depend on, and nothing else: the pure half of
 * refreshRunEnergy (store-run-energy.ts reads the inputs from the database and stores the
 * result), and what `erg verify` recomputes from an evidence bundle offline. Both call
 * runFiguresOf with inputs of the same shape, so a bundle's figures are the stored ones exactly.
 * This module imports no database code (types only), so the CLI can bundle it.
 */

/**
 * What is stored per run: the view without the run id, the time it was computed and whether it is
 * stale (those are columns), and the run's cooldown (the run's own record, which finalizing stores).
 */
export type StoredRunEnergy = Omit<RunEnergyView, 'runId' | 'computedAt' | 'stale' | 'cooldown'>;

/** One sensor's samples on one node, in time order. */
export interface FigureSeries {
  node: string;
  sensor: string;
  t: number[] | Float64Array;
  v: number[] | Float64Array;
}

/** Everything a run's stored figures are computed from. */
export interface RunFigureInputs {
  /** The workload's window, as the job script measured it. */
  window: Window;
  /** The idle baseline's window; null: the campaign has none. */
  idleWindow: Window | null;
  execution: CampaignSpec['execution'];
  /** The campaign's stored spec (its power block, metrics and telemetry settings apply). */
  spec: CampaignSpec;
  configuration: { key: string; parameters: Record<string, string | number | boolean> };
  /** The figures of merit parsed from the workload's output. */
  metrics: Record<string, number | null>;
  /** Slurm's node list of the job; null for an import or before it ran. */
  nodeList: string | null;
  /** sacct's ConsumedEnergyRaw (J); null: none. */
  slurmEnergyJ: number | null;
  /** Every sample of the run (figureSeries keeps those the figures use). */
  series: readonly FigureSeries[];
  /** The sensors the agents declared, sampled or not. */
  sensors: readonly StoredSensor[];
  /** The workload's phase marks (on each node in time order, then offset): all of them, or the first MAX_ATTRIBUTED_MARKS by time when markCount says more. */
  marks: readonly RunMarkRecord[];
  /** How many marks the run has, where `marks` holds only the first MAX_ATTRIBUTED_MARKS by time; absent: `marks` is all of them. */
  markCount?: number;
  /** Other jobs on the cluster that may have shared the run's nodes during its windows. */
  neighbours: readonly NeighbourJob[];
  /** The node helper's power records, by node. */
  powerRecords: readonly { node: string; power: PowerRecord }[];
  /** The carbon and price settings of the run's cluster when the figures were computed; null: none. */
  cluster: { carbon: ClusterCarbon | null; price: ClusterPrice | null } | null;
  /** The cluster's carbon intensity series around the window (readCarbonIntensityAround). */
  carbonIntensity: readonly CarbonIntensityRow[];
  /** Each node agent's clock offset from erg's server, as its pushes bounded it (run_nodes); a node without one was not measured. */
  clocks: readonly ClockOffset[];
}

/** Samples this far outside the window are still read: the edges are interpolated from them. */
export const EDGE_MARGIN_MS = 60_000;

/** The span whose samples the figures are computed from: both windows, with EDGE_MARGIN_MS either side. */
export function figureSpan(window: Window, idleWindow: Window | null): Window {
  return { startMs: Math.min(window.startMs, idleWindow?.startMs ?? window.startMs) - EDGE_MARGIN_MS, endMs: window.endMs + EDGE_MARGIN_MS };
}

/**
 * The samples of each series the figures use: those inside figureSpan, and the nearest one before
 * and after it however far out (a slow meter's last sample before the window). Defined on the
 * samples alone, so the figures do not depend on how they were split into batches or stored.
 */
export function figureSeries(series: readonly FigureSeries[], span: Window): FigureSeries[] {
  const out: FigureSeries[] = [];
  for (const s of series) {
    const n = s.t.length;
    let first = 0;
    while (first < n && s.t[first]! < span.startMs) first++;
    let end = first;
    while (end < n && s.t[end]! <= span.endMs) end++;
    const from = Math.max(0, first - 1);
    const to = Math.min(n, end + 1);
    if (to <= from) continue;
    out.push({ node: s.node, sensor: s.sensor, t: s.t.slice(from, to), v: s.v.slice(from, to) });
  }
  return out;
}

/**
 * A run's stored figures: energy (per node, components, idle baseline), shared-node flags, the
 * power state asked for and in force, the validity gates (flag `invalid` where one failed), energy
 * per unit of work, phases, data movement, carbon and cost. Null when no sample falls in figureSpan (there is nothing to compute from).
 */
export function runFiguresOf(inputs: RunFigureInputs): StoredRunEnergy | null {
  const { window, spec } = inputs;
  const idle = inputs.idleWindow ?? undefined;
  // The nodes' clocks put on the batch host's, which timed the window, where they are too far off it.
  const clock = clockCorrection(inputs.clocks, inputs.nodeList, spec.validity.maxClockOffsetMs);
  const series = figureSeries(shiftSeries(inputs.series, clock.shifts), figureSpan(window, inputs.idleWindow));
  if (series.length === 0) return null;
  const nodes = nodeTelemetry(inputs, series);
  const energy = computeRunEnergy({ window, nodes, ...(idle ? { idleBaseline: idle } : {}) });
  flagSharedNodes(inputs.neighbours, inputs.nodeList, window, idle, energy);
  flagMissingNodes(inputs.nodeList, energy);
  energy.warnings.push(...clock.warnings);

  // The power state asked for and the one in force (the agents' state sensors, the helper's records).
  const requested: PowerState | null = spec.power ? expandPower(spec.power, inputs.configuration.key, inputs.configuration.parameters).state : null;
  const records = new Map<string, PowerRecord>();
  for (const r of inputs.powerRecords) records.set(r.node, r.power);
  const assessed = assessPowerState({ window, requested, nodes, records, maxThrottledShare: spec.telemetry.maxThrottledShare });
  if (assessed.power) energy.power = assessed.power;
  energy.flags.push(...assessed.flags);
  energy.warnings.push(...assessed.warnings);

  // The campaign's validity gates, over the sensors the energy was computed from.
  const validity = runValidity({
    window, idleWindow: idle ?? null, nodes, used: energy.nodes, requestedIntervalMs: spec.telemetry.intervalMs, clocks: inputs.clocks, limits: spec.validity,
  });
  if (!validity.valid) {
    energy.flags.push('invalid');
    energy.warnings.push(...validity.reasons.map((r) => `invalid measurement: ${r}`));
  }

  // Energy per unit of work, for every metric the spec marks as counting work.
  const perUnitOfWork: Record<string, number | null> = {};
  for (const m of spec.metrics) {
    if (m.work) perUnitOfWork[m.name] = perUnit(energy.energyJ, inputs.metrics[m.name] ?? null);
  }
  const attributed = attributedMarks(shiftMarks(inputs.marks, clock.shifts));
  const phases = phasesOf(window, nodes, attributed, Math.max(inputs.markCount ?? 0, inputs.marks.length));
  return {
    ...energy, energyPerUnit: perUnitOfWork, window, idleWindow: idle ?? null, slurmEnergy: slurmEnergyBeside(inputs.slurmEnergyJ, energy.energyJ),
    phases,
    dataMovement: computeRunDataMovement({ window, nodes, energyJ: energy.energyJ, marks: attributed, phases }),
    ...carbonAndCost(inputs, energy),
    validity,
  };
}

/** The series and declared sensors by node, each sensor described as its agent declared it. */
function nodeTelemetry(inputs: RunFigureInputs, series: readonly FigureSeries[]): NodeTelemetry[] {
  const fallbackSource = (inputs.execution === 'import' ? 'import' : 'unknown') as SensorInfo['source'];
  const described = new Map(inputs.sensors.map((d) => [`${d.node}\u0000${d.sensor}`, d]));
  const infoOf = (node: string, sensor: string): SensorInfo => {
    const d = described.get(`${node}\u0000${sensor}`);
    return {
      sensor, source: (d?.source ?? fallbackSource) as SensorInfo['source'], ...(d?.scope ? { scope: d.scope as SensorInfo['scope'] } : {}), ...(d?.wrapAt ? { wrapAt: d.wrapAt } : {}),
      // What interval a reading covers, where the agent declared it: the phase attribution needs it.
      ...(d?.averagingMs ? { averagingMs: d.averagingMs } : {}), ...(d?.updateMs ? { updateMs: d.updateMs } : {}),
    };
  };
  const nodes = new Map<string, NodeTelemetry>();
  const nodeOf = (name: string): NodeTelemetry => {
    let node = nodes.get(name);
    if (!node) nodes.set(name, (node = { node: name, series: [], sensors: [] }));
    return node;
  };
  const sampled = new Set<string>();
  for (const s of series) {
    const node = nodeOf(s.node);
    node.series.push({ sensor: s.sensor, t: s.t, v: s.v });
    node.sensors.push(infoOf(s.node, s.sensor));
    sampled.add(`${s.node}\u0000${s.sensor}`);
  }
  // Sensors an agent declared that never delivered a sample: the energy math must hear of them
  // (a GPU declared and never measured is a warning and coverage 0), not miss them silently.
  for (const d of inputs.sensors) if (!sampled.has(`${d.node}\u0000${d.sensor}`)) nodeOf(d.node).sensors.push(infoOf(d.node, d.sensor));
  return [...nodes.values()];
}

/** Most marks of one run its phases are computed from (all nodes together). */
export const MAX_ATTRIBUTED_MARKS = 100_000;

/**
 * The marks energy per phase and bytes per phase are computed from: all of them, or under a
 * budget the first MAX_ATTRIBUTED_MARKS by time — the attribution's cost grows with the marks
 * (about 10 ms per 1,000 here). Every computation runs in the scheduler's energy worker, which
 * reads only these from the database (store-run-energy.ts).
 */
function attributedMarks(marks: readonly RunMarkRecord[]): RunMarkRecord[] {
  return marks.length <= MAX_ATTRIBUTED_MARKS ? [...marks] : [...marks].sort((a, b) => a.t - b.t).slice(0, MAX_ATTRIBUTED_MARKS);
}

/**
 * Energy per phase, where the workload marked any: the same telemetry divided among the phases
 * (computeRunPhases divides exactly computeRunEnergy's figure). A run without marks has none.
 * `stored`: how many marks the run has, of which `marks` are those attributed.
 */
function phasesOf(window: Window, nodes: NodeTelemetry[], marks: RunMarkRecord[], stored: number): RunPhases | null {
  if (marks.length === 0) return null;
  const phases = computeRunPhases({ window, nodes, marks });
  if (stored > marks.length) {
    phases.warnings.push(
      `${stored} phase marks, more than the ${MAX_ATTRIBUTED_MARKS} erg attributes: the phases are those of the first ${MAX_ATTRIBUTED_MARKS} (until ${new Date(marks.at(-1)!.t).toISOString()}); later ones count as unmarked`,
    );
  }
  return phases;
}

/**
 * The run's carbon and cost, with its cluster's settings and intensity series as they were when
 * the figures were computed: the figures say what they were computed with, and a later change of
 * the settings recomputes nothing (only a refresh of the run's energy does, with the settings
 * then). Null each where the cluster has nothing to compute it from.
 */
function carbonAndCost(inputs: RunFigureInputs, energy: RunEnergy): Pick<StoredRunEnergy, 'carbon' | 'cost'> {
  const { cluster, window } = inputs;
  if (!cluster) return { carbon: null, cost: null };
  // The PUE is the site's: it scales the energy drawn for the price per kWh too.
  const pue = cluster.carbon?.pue ?? 1;
  const carbon = runCarbon({ energyJ: energy.energyJ, window, pue, constant: cluster.carbon?.gCO2ePerKWh ?? null, series: [...inputs.carbonIntensity] });
  // The nodes billed are the job's (Slurm's node list); an import has none, so those that sent telemetry.
  const listed = inputs.nodeList ? (expandHostlist(inputs.nodeList)?.length ?? 0) : 0;
  const nodes = listed > 0 ? listed : energy.nodes.length;
  const cost = cluster.price ? runCost({ energyJ: energy.energyJ, timeS: energy.timeS, nodes, pue, price: cluster.price }) : null;
  return { carbon, cost };
}

/**
 * Slurm's own figure beside erg's, where it has one: sacct's ConsumedEnergy comes from an
 * acct_gather_energy plugin (IPMI, RAPL, pm_counters…) over the whole job — queue-side set-up, the
 * agents' start and the idle baseline included — so a ratio a little above 1 is expected; erg's
 * figure covers the workload window only. Where Slurm measured nothing it says so instead of 0.
 */
export function slurmEnergyBeside(slurmJ: number | null, ergJ: number): SlurmEnergy {
  if (slurmJ === null) {
    return {
      energyJ: null, ratio: null,
      note: "Slurm reported no energy for this job (sacct ConsumedEnergy empty or 0: no acct_gather_energy plugin measures these nodes — its gpu plugin records nothing for NVIDIA GPUs)",
    };
  }
  const ratio = ergJ > 0 ? slurmJ / ergJ : null;
  return {
    energyJ: slurmJ, ratio,
    note: `Slurm's acct_gather_energy measured ${slurmJ} J for the whole job${ratio === null ? '' : ` (${ratio.toFixed(3)} × erg's figure)`}; it covers the whole allocation — set-up, agents, idle baseline — where erg's covers the workload window, and its sensors may differ in scope`,
  };
}

/**
 * Node-level sensors (module, Grace, RAPL package, the power model) measure everything on their
 * node: where other jobs ran on this run's nodes during its window, or its idle baseline, its
 * figures include their work. Say so — flags and warnings — rather than attribute it silently.
 */
/**
 * Flags missing_node when a node of the job (Slurm's node list) has no figures: its agent sent
 * nothing, so the run's energy is its other nodes' alone — a figure that must not pass for the
 * whole job's. An agent naming itself by its fully qualified host name counts for the node of
 * that short name, as Slurm names nodes.
 */
export function flagMissingNodes(nodeList: string | null, energy: RunEnergy): void {
  const expected = nodeList ? (expandHostlist(nodeList) ?? []) : [];
  if (expected.length === 0) return;
  const measured = new Set(energy.nodes.flatMap((n) => [n.node, n.node.split('.')[0]!]));
  const missing = expected.filter((name) => !measured.has(name));
  if (missing.length === 0) return;
  energy.flags.push('missing_node');
  for (const name of missing) {
    energy.warnings.push(
      `node ${name}: no telemetry from its agent (it failed to start, or died before its first batch; see the run's telemetry/agent.log): ` +
        `the energy is that of ${expected.length - missing.length} of the job's ${expected.length} nodes and lacks ${name}'s`,
    );
  }
}

function flagSharedNodes(neighbourJobs: readonly NeighbourJob[], nodeList: string | null, window: Window, idle: Window | undefined, energy: RunEnergy): void {
  const mine = new Set(nodeList ? (expandHostlist(nodeList) ?? []) : []);
  if (mine.size === 0) return;
  const neighbours = neighbourJobs
    .map((n) => ({ ...n, common: (expandHostlist(n.nodeList) ?? []).filter((name) => mine.has(name)) }))
    .filter((n) => n.common.length > 0);
  const shared = (w: Window) => {
    const during = neighbours.filter((n) => n.busyFromMs < w.endMs && n.busyToMs > w.startMs);
    return { jobs: during.length, nodes: [...new Set(during.flatMap((n) => n.common))].sort().join(', ') };
  };
  const during = shared(window);
  if (during.jobs > 0) {
    energy.flags.push('shared_node');
    energy.warnings.push(
      `shared node(s) ${during.nodes} with ${during.jobs} other job(s) during its window: node-level sensors (module, Grace, RAPL package, the power model) ` +
        'also measured their work, so its energy includes theirs',
    );
  }
  if (!idle) return;
  const baseline = shared(idle);
  if (baseline.jobs > 0) {
    energy.flags.push('shared_idle_baseline');
    energy.warnings.push(`${baseline.jobs} other job(s) ran on ${baseline.nodes} during its idle baseline: the baseline, and its net energy, include their work`);
  }
}
