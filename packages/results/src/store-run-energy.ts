import {
  clearEnergyDirty, countRunBatches, deleteRunEnergy, energyDirtyVersion, findRunEnergy, isEnergyStale, listStaleEnergyRuns, findRunEnergyInputs, listNeighbourJobs,
  readCarbonIntensityAround, listFirstRunMarks, listRunMarks, listRunNodes, readRunSensors, readRunSeries, storeRunEnergy, type Database, type RunEnergyContext, type RunEnergyInputs,
} from '@erg/db';
import type { Window } from '@erg/energy';
import type { RunEnergyView } from '@erg/spec';
import { NonFiniteFiguresError, nonFinitePaths } from './finite-figures';
import { figureSpan, MAX_ATTRIBUTED_MARKS, runFiguresOf, type RunFigureInputs, type StoredRunEnergy } from './run-figures';

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
 * read less never replaces one that read more. The figures themselves are runFiguresOf's
 * (run-figures.ts), a pure function of what is read here.
 */
export async function refreshRunEnergy(db: Database, runId: string, options: RefreshOptions = {}): Promise<StoredRunEnergy | null> {
  // Before the inputs: every batch counted here, and every batch the marker's version stands
  // for, is in the series read below.
  const [dirty, batchesSeen] = await Promise.all([energyDirtyVersion(db, runId), countRunBatches(db, runId)]);
  const settled = async () => {
    if (dirty !== null) await clearEnergyDirty(db, runId, dirty);
  };
  const inputs = await readRunFigureInputs(db, runId);
  if (inputs === 'not_found') return null;
  if (inputs === 'no_window' || inputs === 'not_finalized') {
    // A finalized run without a workload window (it failed before its workload ran) has nothing to
    // compute from, now or later; one not finalized yet is computed when it is.
    if (inputs === 'no_window') await settled();
    return null;
  }
  // What the figures depend on beyond the run's own rows, kept beside them as stored (JSON), and
  // the figures computed from exactly that: the evidence bundle writes it, and they recompute.
  const context = JSON.parse(JSON.stringify(runFigureContextOf(inputs))) as RunEnergyContext;
  const result = runFiguresOf({ ...inputs, ...context });
  // Never stored, never answered: a number JSON cannot hold (finite-figures.ts).
  const notFinite = result === null ? [] : nonFinitePaths(result);
  if (notFinite.length > 0) throw new NonFiniteFiguresError(runId, notFinite);
  await options.beforeStore?.();
  if (result === null) {
    await deleteRunEnergy(db, runId, batchesSeen);
  } else {
    await storeRunEnergy(db, runId, { timeS: result.timeS, energyJ: result.energyJ, method: result.method, coverage: result.coverage, result, context }, batchesSeen);
  }
  await settled();
  return result;
}

/** The inputs of a run's figures that are not the run's own rows (RunEnergyContext): what is stored beside them. */
function runFigureContextOf(inputs: RunFigureInputs): RunEnergyContext {
  return { neighbours: inputs.neighbours, cluster: inputs.cluster, carbonIntensity: inputs.carbonIntensity };
}

/**
 * Everything a run's figures are computed from (RunFigureInputs), read from the database: its
 * windows, campaign spec, configuration, metrics, the samples around its windows, the sensors its
 * agents declared, its marks, the jobs that shared its cluster then, its power records and its
 * agents' clock offsets, its cluster's carbon and price settings and intensity series. `not_found`: no such run;
 * `not_finalized`: no window yet; `no_window`: finalized without a workload window.
 * The evidence bundle (export) reads the same inputs with every sample, and with the `context`
 * its stored figures were computed from (findRunEnergyContext) instead of the cluster's as it is now.
 */
export async function readRunFigureInputs(
  db: Database, runId: string, options: { allSamples?: boolean; context?: RunEnergyContext } = {},
): Promise<RunFigureInputs | 'not_found' | 'not_finalized' | 'no_window'> {
  const run = await findRunEnergyInputs(db, runId);
  if (!run) return 'not_found';
  if (run.workloadStartNs === null || run.workloadEndNs === null) return run.finalizedAt !== null ? 'no_window' : 'not_finalized';
  const window = { startMs: nsToMs(run.workloadStartNs), endMs: nsToMs(run.workloadEndNs) };
  const idleWindow = run.idleStartNs !== null && run.idleEndNs !== null ? { startMs: nsToMs(run.idleStartNs), endMs: nsToMs(run.idleEndNs) } : null;
  const span = figureSpan(window, idleWindow);
  const [series, sensors, marks, nodes, context] = await Promise.all([
    // With the samples that bracket the span however far out (runFiguresOf keeps the nearest one
    // each side), or every sample for a bundle.
    options.allSamples ? readRunSeries(db, runId) : readRunSeries(db, runId, { fromMs: span.startMs, toMs: span.endMs, bracket: true }),
    readRunSensors(db, runId),
    // Only the marks the figures use (the first MAX_ATTRIBUTED_MARKS by time) and how many there
    // are: a run of a million marks is not held in memory to use a tenth of them. A bundle has them all.
    options.allSamples ? listRunMarks(db, runId).then((all) => ({ marks: all, total: all.length })) : listFirstRunMarks(db, runId, MAX_ATTRIBUTED_MARKS),
    listRunNodes(db, runId),
    options.context ?? readRunContext(db, runId, run, window, idleWindow),
  ]);
  return {
    window, idleWindow, execution: run.campaign.execution,
    // Typed by @erg/db (readStoredSpec): a spec that no longer parses threw before anything was computed.
    spec: run.campaign.spec,
    configuration: run.configuration, metrics: (run.metrics ?? {}) as Record<string, number | null>, nodeList: run.nodeList, slurmEnergyJ: run.slurmEnergyJ,
    series, sensors, marks: marks.marks, ...(marks.total > marks.marks.length ? { markCount: marks.total } : {}),
    powerRecords: nodes.flatMap((n) => (n.power ? [{ node: n.node, power: n.power }] : [])),
    ...context,
    clocks: nodes.flatMap((n) => (n.clockOffsetMs === null ? [] : [{ node: n.node, offsetMs: n.clockOffsetMs, readings: n.clockReadings }])),
  };
}

/** The run's context as the cluster holds it now: the jobs that shared its nodes, its cluster's settings and carbon-intensity series. */
async function readRunContext(
  db: Database, runId: string, run: RunEnergyInputs, window: Window, idleWindow: Window | null,
): Promise<RunEnergyContext> {
  const [neighbours, carbonIntensity] = await Promise.all([
    // One look at the cluster's jobs over both windows (the baseline comes right before the workload).
    run.nodeList ? listNeighbourJobs(db, runId, Math.min(window.startMs, idleWindow?.startMs ?? window.startMs), window.endMs) : Promise.resolve([]),
    run.cluster ? readCarbonIntensityAround(db, run.cluster.id, window.startMs, window.endMs) : Promise.resolve([]),
  ]);
  return { neighbours, cluster: run.cluster ? { carbon: run.cluster.carbon, price: run.cluster.price } : null, carbonIntensity };
}

/** Most stale runs one call of refreshStaleRunEnergy recomputes: a page (the scheduler asks for pages until one is not full). */
export const STALE_REFRESH_LIMIT = 50;

/** How refreshStaleRunEnergy works through the runs it finds. */
export interface StaleRefreshOptions {
  /** Most runs recomputed by one call (default STALE_REFRESH_LIMIT). */
  limit?: number;
  /** Runs recomputed at once (default 1). */
  concurrency?: number;
  /** How one run is recomputed: refreshRunEnergy on this thread by default; the scheduler hands it to its energy worker. */
  refresh?: (runId: string) => Promise<unknown>;
  onError?: (runId: string, err: unknown) => void;
}

/**
 * Recomputes the finalized runs that owe their figures — an imported run just finished, a batch
 * that came after a run's figures (the API marks them and leaves the recompute to the scheduler,
 * out of its requests), a recompute that crashed — the longest-waiting first. Returns the runs
 * recomputed, in that order. A run whose recompute throws stays marked (tried again next time)
 * and does not stop the others.
 */
export async function refreshStaleRunEnergy(db: Database, options: StaleRefreshOptions = {}): Promise<string[]> {
  const refresh = options.refresh ?? ((runId: string) => refreshRunEnergy(db, runId));
  const runs = await listStaleEnergyRuns(db, options.limit ?? STALE_REFRESH_LIMIT);
  const done = new Set<string>();
  let next = 0;
  const lane = async () => {
    while (next < runs.length) {
      const runId = runs[next++]!;
      try {
        await refresh(runId);
        done.add(runId);
      } catch (err) {
        options.onError?.(runId, err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency ?? 1, runs.length)) }, lane));
  return runs.filter((runId) => done.has(runId));
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
  // Figures stored before counter ranges were bounded may hold null where a number belongs (an
  // Infinity, as JSON wrote it): shown as none — the migration that bounded them marked them
  // stale, and the scheduler recomputes them — rather than failing the answer's schema (a 500).
  if (!headlineFiguresFinite(stored!)) return null;
  const stale = await isEnergyStale(db, runId);
  return {
    runId, computedAt: r.computedAt.toISOString(), stale, ...(r.result as StoredRunEnergy), phases: stored!.phases ?? null, dataMovement: stored!.dataMovement ?? null, carbon: stored!.carbon ?? null, cost: stored!.cost ?? null,
    cooldown: r.cooldown,
  };
}

/** Whether a stored result's run and node figures are finite numbers (JSON wrote an Infinity as null). */
function headlineFiguresFinite(stored: Partial<StoredRunEnergy>): boolean {
  const finite = (x: unknown) => typeof x === 'number' && Number.isFinite(x);
  const run = [stored.timeS, stored.energyJ, stored.edpJs, stored.ed2pJs2, stored.avgPowerW, stored.coverage];
  return run.every(finite) && (stored.nodes ?? []).every((n) => finite(n.energyJ) && finite(n.coverage)) && Object.values(stored.components ?? {}).every(finite);
}
