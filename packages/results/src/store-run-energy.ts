import { clearEnergyDirty, countRunBatches, deleteRunEnergy, energyDirtyVersion, findRunEnergy, isEnergyStale, listStaleEnergyRuns, findRunEnergyInputs, listNeighbourJobs, readCarbonIntensityAround, type RunEnergyInputs, listRunMarks, listRunNodes, type RunMarkRecord, readRunSensors, readRunSeries, storeRunEnergy, type Database } from '@erg/db';
import { expandHostlist } from '@erg/slurm';
import { assessPowerState, computeRunDataMovement, computeRunEnergy, computeRunPhases, perUnit, runCarbon, runCost, type NodeTelemetry, type RunEnergy, type RunPhases, type SensorInfo, type Window } from '@erg/energy';
import { expandPower, type PowerRecord, type PowerState, type RunEnergyView, type SlurmEnergy } from '@erg/spec';

/** What is stored per run: the view without the run id and the time it was computed (those are columns), and the run's cooldown (the run's, finalizing stores it). */
type StoredRunEnergy = Omit<RunEnergyView, 'runId' | 'computedAt' | 'stale' | 'cooldown'>;

/** Samples this far outside the window are still read: the edges are interpolated from them. */
const EDGE_MARGIN_MS = 60_000;

const nsToMs = (ns: bigint) => Number(ns) / 1e6;

/** Test seams of refreshRunEnergy. */
export interface RefreshOptions {
  /** Runs after the inputs are read and before the figures are stored (tests interleave two refreshes with it). */
  beforeStore?: () => Promise<void>;
}

/**
 * Computes a finished run's energy figures from its stored telemetry over its workload window
 * (and idle baseline), and stores them. Returns null — and stores nothing — while the run has no
 * workload window or no telemetry. Safe to call again whenever late telemetry arrives, and
 * concurrently: the batches are counted before anything is read, and figures are only stored over
 * figures computed from as many batches or fewer (storeRunEnergy), so an overlapping refresh that
 * read less never replaces one that read more.
 */
export async function refreshRunEnergy(db: Database, runId: string, options: RefreshOptions = {}): Promise<StoredRunEnergy | null> {
  // Before the inputs: every batch counted here, and every batch the marker's version stands
  // for, is in the series read below.
  const [dirty, batchesSeen] = await Promise.all([energyDirtyVersion(db, runId), countRunBatches(db, runId)]);
  const settled = async () => {
    if (dirty !== null) await clearEnergyDirty(db, runId, dirty);
  };
  const run = await findRunEnergyInputs(db, runId);
  if (!run) return null;
  if (run.workloadStartNs === null || run.workloadEndNs === null) {
    // A finalized run without a workload window (it failed before its workload ran) has nothing to
    // compute from, now or later; one not finalized yet is computed when it is.
    if (run.finalizedAt !== null) await settled();
    return null;
  }
  const window = { startMs: nsToMs(run.workloadStartNs), endMs: nsToMs(run.workloadEndNs) };
  const idle = run.idleStartNs !== null && run.idleEndNs !== null ? { startMs: nsToMs(run.idleStartNs), endMs: nsToMs(run.idleEndNs) } : undefined;
  const from = Math.min(window.startMs, idle?.startMs ?? window.startMs) - EDGE_MARGIN_MS;
  const [series, sensors, marks] = await Promise.all([
    // With the samples that bracket the window however far out, so that the figures do not depend
    // on how the samples were split into batches (a slow meter's last sample before the window).
    readRunSeries(db, runId, { fromMs: from, toMs: window.endMs + EDGE_MARGIN_MS, bracket: true }),
    readRunSensors(db, runId),
    listRunMarks(db, runId),
  ]);
  if (series.length === 0) {
    await options.beforeStore?.();
    await deleteRunEnergy(db, runId, batchesSeen);
    await settled();
    return null;
  }
  const fallbackSource = (run.campaign.execution === 'import' ? 'import' : 'unknown') as SensorInfo['source'];
  const described = new Map(sensors.map((d) => [`${d.node}\u0000${d.sensor}`, d]));
  const infoOf = (node: string, sensor: string): SensorInfo => {
    const d = described.get(`${node}\u0000${sensor}`);
    return {
      sensor, source: (d?.source ?? fallbackSource) as SensorInfo['source'], ...(d?.scope ? { scope: d.scope } : {}), ...(d?.wrapAt ? { wrapAt: d.wrapAt } : {}),
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
  for (const d of sensors) if (!sampled.has(`${d.node}\u0000${d.sensor}`)) nodeOf(d.node).sensors.push(infoOf(d.node, d.sensor));
  const energy = computeRunEnergy({ window, nodes: [...nodes.values()], ...(idle ? { idleBaseline: idle } : {}) });
  await flagSharedNodes(db, runId, run.nodeList, window, idle, energy);
  // Typed by @erg/db (readStoredSpec): a spec that no longer parses threw before anything was computed.
  const { spec } = run.campaign;

  // The power state asked for and the one in force (the agents' state sensors, the helper's records).
  const requested: PowerState | null = spec.power ? expandPower(spec.power, run.configuration.key, run.configuration.parameters).state : null;
  const records = new Map<string, PowerRecord>();
  for (const n of await listRunNodes(db, runId)) if (n.power) records.set(n.node, n.power);
  const assessed = assessPowerState({
    window, requested, nodes: [...nodes.values()], records, maxThrottledShare: spec.telemetry.maxThrottledShare,
  });
  if (assessed.power) energy.power = assessed.power;
  energy.flags.push(...assessed.flags);
  energy.warnings.push(...assessed.warnings);

  // Energy per unit of work, for every metric the spec marks as counting work.
  const metrics = (run.metrics ?? {}) as Record<string, number | null>;
  const perUnitOfWork: Record<string, number | null> = {};
  for (const m of spec.metrics) {
    if (m.work) perUnitOfWork[m.name] = perUnit(energy.energyJ, metrics[m.name] ?? null);
  }
  const attributed = attributedMarks(marks);
  const phases = phasesOf(window, [...nodes.values()], attributed, marks.length);
  const result: StoredRunEnergy = {
    ...energy, energyPerUnit: perUnitOfWork, window, idleWindow: idle ?? null, slurmEnergy: slurmEnergyBeside(run.slurmEnergyJ, energy.energyJ),
    phases,
    dataMovement: computeRunDataMovement({ window, nodes: [...nodes.values()], energyJ: energy.energyJ, marks: attributed, phases }),
    ...(await carbonAndCost(db, run.cluster, run.nodeList, window, energy)),
  };
  await options.beforeStore?.();
  await storeRunEnergy(db, runId, { timeS: energy.timeS, energyJ: energy.energyJ, method: energy.method, coverage: energy.coverage, result }, batchesSeen);
  await settled();
  return result;
}

/** Most stale runs one call of refreshStaleRunEnergy recomputes: a tick's share, the rest wait for the next. */
export const STALE_REFRESH_LIMIT = 50;

/**
 * Recomputes the finalized runs whose telemetry changed after their figures were computed (late
 * batches: the API stores them and leaves the recompute here, out of its requests; a recompute
 * that crashed), the longest-waiting first, one after another. Returns the runs recomputed. A run
 * whose recompute throws stays marked (tried again next time) and does not stop the others.
 */
export async function refreshStaleRunEnergy(db: Database, options: { limit?: number; onError?: (runId: string, err: unknown) => void } = {}): Promise<string[]> {
  const done: string[] = [];
  for (const runId of await listStaleEnergyRuns(db, options.limit ?? STALE_REFRESH_LIMIT)) {
    try {
      await refreshRunEnergy(db, runId);
      done.push(runId);
    } catch (err) {
      options.onError?.(runId, err);
    }
  }
  return done;
}

/**
 * The marks energy per phase and bytes per phase are computed from: all of them, or under a
 * budget the first MAX_ATTRIBUTED_MARKS by time — the attribution's cost grows with the marks
 * (about 10 ms per 1,000 here): a recompute runs in the scheduler (an import's finish request computes its first).
 */
function attributedMarks(marks: RunMarkRecord[]): RunMarkRecord[] {
  return marks.length <= MAX_ATTRIBUTED_MARKS ? marks : [...marks].sort((a, b) => a.t - b.t).slice(0, MAX_ATTRIBUTED_MARKS);
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

/** Most marks of one run its phases are computed from (all nodes together). */
export const MAX_ATTRIBUTED_MARKS = 100_000;

/**
 * The run's carbon and cost, with its cluster's settings and intensity series as they are now:
 * the figures say what they were computed with, and a later change of the settings recomputes
 * nothing (only a refresh of the run's energy does, with the settings then). Null each where the
 * cluster has nothing to compute it from.
 */
async function carbonAndCost(
  db: Database, cluster: RunEnergyInputs['cluster'], nodeList: string | null, window: Window, energy: RunEnergy,
): Promise<Pick<StoredRunEnergy, 'carbon' | 'cost'>> {
  if (!cluster) return { carbon: null, cost: null };
  // The PUE is the site's: it scales the energy drawn for the price per kWh too.
  const pue = cluster.carbon?.pue ?? 1;
  const series = await readCarbonIntensityAround(db, cluster.id, window.startMs, window.endMs);
  const carbon = runCarbon({ energyJ: energy.energyJ, window, pue, constant: cluster.carbon?.gCO2ePerKWh ?? null, series });
  // The nodes billed are the job's (Slurm's node list); an import has none, so those that sent telemetry.
  const listed = nodeList ? (expandHostlist(nodeList)?.length ?? 0) : 0;
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
async function flagSharedNodes(db: Database, runId: string, nodeList: string | null, window: Window, idle: Window | undefined, energy: RunEnergy): Promise<void> {
  const mine = new Set(nodeList ? (expandHostlist(nodeList) ?? []) : []);
  if (mine.size === 0) return;
  // One look at the cluster's jobs over both windows (the baseline comes right before the workload).
  const neighbours = (await listNeighbourJobs(db, runId, Math.min(window.startMs, idle?.startMs ?? window.startMs), window.endMs))
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

/** The stored figures of a run, as GET /v1/runs/:id/energy shows them; null when none exist. */
export async function runEnergyView(db: Database, runId: string): Promise<RunEnergyView | null> {
  const r = await findRunEnergy(db, runId);
  // Only refreshRunEnergy writes these records, so the stored JSON has its type; the API's
  // response schema checks it again on the way out.
  // Results stored before phases existed have no member: none were computed, as for a run without marks.
  // Those stored before carbon and cost existed have neither: none were computed, as for a cluster without settings.
  // Those stored before data movement existed have none: as for a node without data-movement sensors.
  const stored = r?.result as Partial<StoredRunEnergy> | undefined;
  if (!r) return null;
  const stale = await isEnergyStale(db, runId);
  return {
    runId, computedAt: r.computedAt.toISOString(), stale, ...(r.result as StoredRunEnergy), phases: stored!.phases ?? null, dataMovement: stored!.dataMovement ?? null, carbon: stored!.carbon ?? null, cost: stored!.cost ?? null,
    cooldown: r.cooldown,
  };
}
