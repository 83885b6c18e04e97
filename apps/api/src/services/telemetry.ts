import { findRunIngestTarget, findRunProgress, isEnergyStale, listRunMarksUpTo, readRunSensors, readRunSeries, runMarksSummary, type Database, type RunMarkRecord, type TelemetryWriter } from '@erg/db';
import { lttb, nodeTimeline } from '@erg/energy';
import { runEnergyView } from '@erg/results';
import {
  decodeTelemetryBatch, MAX_PHASE_SEGMENTS, sampleTimeBounds, TERMINAL_RUN_STATES, type PhaseSegment, type RunEnergyView, type RunPhasesView, type RunTelemetry,
} from '@erg/spec';
import type { AppDeps } from '../app';
import { errors } from '../errors';
import { OFFLOAD_ABOVE, telemetryDecodeCost } from '../body-limits';
import { runSized, type Offload } from '../offload';
import type { PowerEvents } from '../power-events';
import { askForEnergyRefresh } from '../wake-scheduler';
import type { Log } from './log';

/**
 * Telemetry: a batch of samples taken in for a run, and what a run's telemetry gives back — its
 * series downsampled for plotting, its energy, and its energy per phase with the bands to draw.
 * The routes (routes/telemetry.ts) read the request, count what came in and write the answer.
 */

type IngestDeps = Pick<AppDeps, 'db' | 'queue'> & { telemetry: TelemetryWriter; offload: Offload; powerEvents: PowerEvents };

/** What ingesting a batch did: TelemetryWriter.write's answer. */
export type IngestResult = Awaited<ReturnType<TelemetryWriter['write']>>;

/**
 * Takes in one batch of a run's samples (its bytes; a large one, or one of many marks, is decoded in a worker thread),
 * within the window of sample times the run accepts, with what its request said of the agent's
 * clock (`clockOffsetMs`, @erg/spec clockReading; null: nothing). A batch with any invalid sample
 * is refused whole (400). A committed batch may move the dashboard's live power; one that arrives
 * after the run was finalized has the scheduler recompute its figures.
 */
export async function ingestBatch(deps: IngestDeps, runId: string, raw: Buffer, log: Log, clockOffsetMs: number | null = null): Promise<IngestResult> {
  const run = await findRunIngestTarget(deps.db, runId);
  if (!run) throw errors.notFound('run', runId);
  // The same window of sample times as the scheduler's spool pull (one rule, in @erg/spec).
  const bounds = sampleTimeBounds({ createdAt: run.createdAt, endedAt: run.endedAt, imported: run.campaign.execution === 'import' });
  // By what decoding it costs, not its bytes alone: a batch of many small marks costs more a byte than one of samples.
  const cost = telemetryDecodeCost(raw, OFFLOAD_ABOVE.telemetry);
  const normalized = await runSized(deps.offload, { kind: 'telemetry', body: raw, bounds }, cost, OFFLOAD_ABOVE.telemetry, 'telemetry batch', () =>
    decodeTelemetryBatch(raw.toString('utf8'), bounds),
  );
  if (!normalized.ok) throw errors.validation('telemetry batch', normalized.issues);
  const result = await deps.telemetry.write(run.id, normalized.batch, clockOffsetMs);
  // The batch is committed: the dashboard's live power may move (throttled per run).
  if (result.accepted > 0) deps.powerEvents.batchCommitted(run.id, run.campaignId);
  // A batch that arrives after the run was finalized changes its figures. The writer marked
  // the run stale in the batch's transaction; the scheduler recomputes it (out of this
  // request: the cost grows with the run's telemetry and marks), asked to right away.
  if (result.accepted > 0 && (TERMINAL_RUN_STATES as readonly string[]).includes(run.state) && run.finalizedAt) {
    await askForEnergyRefresh(deps, log);
  }
  return result;
}

/** Which of a run's series, over which times, and at most how many points each. */
export interface SeriesQuery {
  sensor?: string | undefined;
  node?: string | undefined;
  from?: number | undefined;
  to?: number | undefined;
  maxPoints: number;
}

/** A run's series, downsampled for plotting (LTTB, peaks kept) to at most `maxPoints` each. */
export async function runSeries(db: Database, runId: string, query: SeriesQuery): Promise<RunTelemetry> {
  const run = await findRunProgress(db, runId);
  if (!run) throw errors.notFound('run', runId);
  const { sensor, node, from, to, maxPoints } = query;
  const [series, sensors] = await Promise.all([readRunSeries(db, run.id, { sensor, node, fromMs: from, toMs: to }), readRunSensors(db, run.id)]);
  return {
    runId: run.id,
    series: series.map((s) => {
      const { t, v } = clip(s.t, s.v, from, to);
      const down = lttb(t, v, maxPoints);
      const info = sensors.find((d) => d.node === s.node && d.sensor === s.sensor);
      return { node: s.node, sensor: s.sensor, source: info?.source ?? null, unit: info?.unit ?? null, samples: t.length, t: Array.from(down.t), v: Array.from(down.v) };
    }),
  };
}

/** A finished run's energy figures; 409 while it runs, or when it has no telemetry to compute them from. */
export async function runEnergy(db: Database, runId: string): Promise<RunEnergyView> {
  const run = await findRunProgress(db, runId);
  if (!run) throw errors.notFound('run', runId);
  const view = await runEnergyView(db, run.id);
  if (!view) throw errors.notReady(await whyNoFigures(db, run, 'energy is computed over its workload window once it has ended'));
  return view;
}

/** A finished run's energy per phase and per step, its marks counted, and its window cut by innermost phase per node. */
export async function runPhases(db: Database, runId: string): Promise<RunPhasesView> {
  const run = await findRunProgress(db, runId);
  if (!run) throw errors.notFound('run', runId);
  // Segments come from the first marks only: each mark opens at most one segment, so twice the
  // segments shown (and one more) is enough, however many marks the run has.
  const [view, summary, marks] = await Promise.all([
    runEnergyView(db, run.id), runMarksSummary(db, run.id), listRunMarksUpTo(db, run.id, 2 * MAX_PHASE_SEGMENTS + 1),
  ]);
  if (!view) throw errors.notReady(await whyNoFigures(db, run, 'phases are computed with its energy, over its workload window, once it has ended'));
  const { segments, truncated } = phaseSegments(marks, view.window, marks.length < summary.count);
  return { runId: run.id, computedAt: view.computedAt, window: view.window, marks: summary, phases: view.phases, segments, segmentsTruncated: truncated };
}

/**
 * Why a run has no figures to show: it has not ended (`untilEnded` says when they come), the
 * scheduler has yet to compute them (a run is marked due when it ends), or there is nothing to
 * compute them from.
 */
async function whyNoFigures(db: Database, run: { id: string; state: string; workloadEndNs: bigint | null }, untilEnded: string): Promise<string> {
  if (run.workloadEndNs === null) return `run ${run.id} is ${run.state}: ${untilEnded}`;
  if (await isEnergyStale(db, run.id)) return `run ${run.id}'s energy is being computed by the scheduler (runs are computed after they end); try again in a few seconds`;
  return `run ${run.id} has no telemetry to compute energy from`;
}

/** Each marking node's window cut by innermost phase, in time order, at most MAX_PHASE_SEGMENTS of them. */
function phaseSegments(marks: readonly RunMarkRecord[], window: { startMs: number; endMs: number }, more: boolean): { segments: PhaseSegment[]; truncated: boolean } {
  const byNode = new Map<string, RunMarkRecord[]>();
  for (const m of marks) {
    const own = byNode.get(m.node);
    if (own) own.push(m);
    else byNode.set(m.node, [m]);
  }
  const segments: PhaseSegment[] = [];
  for (const [node, own] of [...byNode].sort(([a], [b]) => a.localeCompare(b))) {
    for (const s of nodeTimeline(node, own, window).segments) {
      if (segments.length === MAX_PHASE_SEGMENTS) return { segments, truncated: true };
      segments.push({ node, phase: s.leaf, open: [...s.open], fromMs: s.fromMs, toMs: s.toMs });
    }
  }
  if (!more) return { segments, truncated: false };
  // Marks left unread: the last node's timeline is only known up to its last mark read.
  const last = marks[marks.length - 1]!;
  return { segments: segments.filter((s) => s.node !== last.node || s.toMs <= last.t), truncated: true };
}

function clip(t: Float64Array, v: Float64Array, from?: number, to?: number): { t: Float64Array; v: Float64Array } {
  let lo = 0;
  let hi = t.length;
  if (from !== undefined) while (lo < hi && t[lo]! < from) lo++;
  if (to !== undefined) while (hi > lo && t[hi - 1]! > to) hi--;
  return { t: t.subarray(lo, hi), v: v.subarray(lo, hi) };
}
