import { createGunzip } from 'node:zlib';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { findRunIngestTarget, findRunProgress, listRunMarksUpTo, readRunSensors, readRunSeries, runMarksSummary, type RunMarkRecord, type TelemetryWriter } from '@erg/db';
import { lttb, nodeTimeline } from '@erg/energy';
import { runEnergyView } from '@erg/results';
import {
  decodeTelemetryBatch, ErrorBody, IdParams, MAX_PHASE_SEGMENTS, RunEnergyView, RunPhasesView, RunTelemetry, sampleTimeBounds, TelemetryAccepted, TelemetryBatch, TERMINAL_RUN_STATES,
  type PhaseSegment,
} from '@erg/spec';
import type { AppDeps } from '../app';
import { access } from '../access';
import type { ApiMetrics } from '../metrics';
import { errors } from '../errors';
import { BODY_LIMITS, OFFLOAD_ABOVE } from '../body-limits';
import { runSized, type Offload } from '../offload';
import { validatorCompiler } from '../validation';
import { PowerEvents } from '../power-events';
import { askForEnergyRefresh } from '../wake-scheduler';

/** The body stays bytes until the handler decodes it (decodeTelemetryBatch), inline or in a worker. */
const rawBody = (data: unknown) => ({ value: data });

const TimeParam = z.union([z.coerce.number(), z.iso.datetime()]).transform((v) => (typeof v === 'number' ? v : Date.parse(v)));

export const telemetryRoutes =
  (deps: AppDeps & { telemetry: TelemetryWriter; metrics: ApiMetrics; offload: Offload }): FastifyPluginAsyncZod =>
  async (app) => {
    const powerEvents = new PowerEvents(deps.db, app.log);
    // In this plugin only: batches are kept as bytes, so that a large one is parsed in a worker
    // thread (JSON.parse takes about 8 ms a MiB of the event loop) and a small one right here.
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    app.post(
      '/runs/:id/telemetry',
      {
        config: access.run('telemetry.write'),
        bodyLimit: BODY_LIMITS.telemetry,
        schema: {
          tags: ['telemetry'],
          description:
            'Ingest one batch of samples for a run (agents use the run token; admins may post too). Idempotent on (run, node, seq). ' +
            'Send `Content-Encoding: gzip` to compress. A batch with any invalid sample is refused whole with 400. ' +
            'At most 200,000 samples, 10,000 entries in `samples`, 512 sensors, 10,000 phase marks and 16 MiB (inflated) per batch; no empty columns. ' +
            'Marks are idempotent on (run, node, offset).',
          params: IdParams,
          body: TelemetryBatch,
          response: {
            200: TelemetryAccepted,
            400: ErrorBody, 403: ErrorBody, 404: ErrorBody,
          },
        },
        validatorCompiler: (route) => (route.httpPart === 'body' ? rawBody : validatorCompiler(route as unknown as Parameters<typeof validatorCompiler>[0])),
        // Decompress before the body is parsed; the body limit then applies to the inflated size.
        preParsing: async (req, _reply, payload) => {
          if (req.headers['content-encoding'] !== 'gzip') return payload;
          const inflated = payload.pipe(createGunzip());
          (inflated as unknown as { receivedEncodedLength?: number }).receivedEncodedLength = (payload as unknown as { receivedEncodedLength?: number }).receivedEncodedLength;
          delete req.headers['content-length'];
          return inflated;
        },
        // Invalid batches (schema, sanity checks, too large) are refused whole: count them.
        onError: async (_req, _reply, err) => {
          if ([400, 413].includes((err as { statusCode?: number }).statusCode ?? 0)) deps.metrics.telemetryBatches.inc({ outcome: 'rejected' });
        },
      },
      async (req, reply) => {
        const run = await findRunIngestTarget(deps.db, req.params.id);
        if (!run) throw errors.notFound('run', req.params.id);
        // The same window of sample times as the scheduler's spool pull (one rule, in @erg/spec).
        const bounds = sampleTimeBounds({ createdAt: run.createdAt, endedAt: run.endedAt, imported: run.campaign.execution === 'import' });
        const raw = req.body as unknown as Buffer;
        const normalized = await runSized(deps.offload, { kind: 'telemetry', body: raw, bounds }, raw.length, OFFLOAD_ABOVE.telemetry, 'telemetry batch', () =>
          decodeTelemetryBatch(raw.toString('utf8'), bounds),
        );
        if (!normalized.ok) throw errors.validation('telemetry batch', normalized.issues);
        const result = await deps.telemetry.write(run.id, normalized.batch);
        // The batch is committed: the dashboard's live power may move (throttled per run).
        if (result.accepted > 0) powerEvents.batchCommitted(run.id, run.campaignId);
        deps.metrics.telemetryIngest.observe(reply.elapsedTime / 1000);
        deps.metrics.telemetryBatches.inc({ outcome: result.duplicate ? 'duplicate' : 'stored' });
        deps.metrics.telemetrySamples.inc(result.accepted);
        // A batch that arrives after the run was finalized changes its figures. The writer marked
        // the run stale in the batch's transaction; the scheduler recomputes it (out of this
        // request: the cost grows with the run's telemetry and marks), asked to right away.
        if (result.accepted > 0 && (TERMINAL_RUN_STATES as readonly string[]).includes(run.state) && run.finalizedAt) {
          await askForEnergyRefresh(deps, req.log);
        }
        return result;
      },
    );

    app.get(
      '/runs/:id/telemetry',
      {
        config: access.run('campaign.read'),
        schema: {
          tags: ['telemetry'],
          description: 'A run\'s series, downsampled for plotting (LTTB, peaks kept) to at most `maxPoints` per series.',
          params: IdParams,
          querystring: z.object({
            sensor: z.string().max(64).optional(),
            node: z.string().max(128).optional(),
            from: TimeParam.optional().describe('Unix ms or ISO 8601'),
            to: TimeParam.optional().describe('Unix ms or ISO 8601'),
            maxPoints: z.coerce.number().int().min(3).max(100_000).default(2000),
          }),
          response: {
            200: RunTelemetry,
            404: ErrorBody,
          },
        },
      },
      async (req) => {
        const run = await findRunProgress(deps.db, req.params.id);
        if (!run) throw errors.notFound('run', req.params.id);
        const { sensor, node, from, to, maxPoints } = req.query;
        const [series, sensors] = await Promise.all([
          readRunSeries(deps.db, run.id, { sensor, node, fromMs: from, toMs: to }),
          readRunSensors(deps.db, run.id),
        ]);
        return {
          runId: run.id,
          series: series.map((s) => {
            const { t, v } = clip(s.t, s.v, from, to);
            const down = lttb(t, v, maxPoints);
            const info = sensors.find((d) => d.node === s.node && d.sensor === s.sensor);
            return { node: s.node, sensor: s.sensor, source: info?.source ?? null, unit: info?.unit ?? null, samples: t.length, t: Array.from(down.t), v: Array.from(down.v) };
          }),
        };
      },
    );

    app.get(
      '/runs/:id/energy',
      {
        config: access.run('campaign.read'),
        schema: {
          tags: ['telemetry'],
          description: 'Time, energy, EDP, ED²P, average power, method, coverage and components of a finished run, over its workload window.',
          params: IdParams,
          response: { 200: RunEnergyView, 404: ErrorBody, 409: ErrorBody },
        },
      },
      async (req) => {
        const run = await findRunProgress(deps.db, req.params.id);
        if (!run) throw errors.notFound('run', req.params.id);
        const view = await runEnergyView(deps.db, run.id);
        if (!view) {
          throw errors.notReady(
            run.workloadEndNs === null
              ? `run ${run.id} is ${run.state}: energy is computed over its workload window once it has ended`
              : `run ${run.id} has no telemetry to compute energy from`,
          );
        }
        return view;
      },
    );

    app.get(
      '/runs/:id/phases',
      {
        config: access.run('campaign.read'),
        schema: {
          tags: ['telemetry'],
          description:
            "A finished run's energy per phase and per step (computed with its energy from the marks its workload wrote: erg-mark, `import erg`, " +
            `or the spec's phases regexes), how many marks there were, and its window cut by innermost phase per node (at most ${MAX_PHASE_SEGMENTS} segments) for drawing.`,
          params: IdParams,
          response: { 200: RunPhasesView, 404: ErrorBody, 409: ErrorBody },
        },
      },
      async (req) => {
        const run = await findRunProgress(deps.db, req.params.id);
        if (!run) throw errors.notFound('run', req.params.id);
        // Segments come from the first marks only: each mark opens at most one segment, so twice the
        // segments shown (and one more) is enough, however many marks the run has.
        const [view, summary, marks] = await Promise.all([
          runEnergyView(deps.db, run.id), runMarksSummary(deps.db, run.id), listRunMarksUpTo(deps.db, run.id, 2 * MAX_PHASE_SEGMENTS + 1),
        ]);
        if (!view) {
          throw errors.notReady(
            run.workloadEndNs === null
              ? `run ${run.id} is ${run.state}: phases are computed with its energy, over its workload window, once it has ended`
              : `run ${run.id} has no telemetry to compute energy from`,
          );
        }
        const { segments, truncated } = phaseSegments(marks, view.window, marks.length < summary.count);
        return {
          runId: run.id,
          computedAt: view.computedAt,
          window: view.window,
          marks: summary,
          phases: view.phases,
          segments,
          segmentsTruncated: truncated,
        };
      },
    );
  };

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
