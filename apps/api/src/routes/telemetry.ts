import { createGunzip } from 'node:zlib';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { TelemetryWriter } from '@erg/db';
import { clockReading, ErrorBody, IdParams, MAX_PHASE_SEGMENTS, RunEnergyView, RunPhasesView, RunTelemetry, SENT_AT_HEADER, TelemetryAccepted, TelemetryBatch } from '@erg/spec';
import type { AppDeps } from '../app';
import { access } from '../access';
import type { ApiMetrics } from '../metrics';
import { BODY_LIMITS } from '../body-limits';
import type { Offload } from '../offload';
import { validatorCompiler } from '../validation';
import { PowerEvents } from '../power-events';
import { ingestBatch, runEnergy, runPhases, runSeries } from '../services/telemetry';

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
            'Marks are idempotent on (run, node, offset). ' +
            `An agent sends its clock (Unix ms, when it sent the request) in \`${SENT_AT_HEADER}\`: erg keeps the largest sentAt − receivedAt per run and node ` +
            "as the agent's clock offset (the validity gate clock_offset); a malformed header, or one more than a day off, is ignored and never costs the batch.",
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
        // When the request arrived (elapsedTime runs from then), not when its body was parsed: the
        // later the server reads its clock, the more latency the offset estimate carries.
        const clock = clockReading(req.headers[SENT_AT_HEADER], Date.now() - reply.elapsedTime);
        const result = await ingestBatch({ ...deps, powerEvents }, req.params.id, req.body as unknown as Buffer, req.log, clock);
        deps.metrics.telemetryIngest.observe(reply.elapsedTime / 1000);
        deps.metrics.telemetryBatches.inc({ outcome: result.duplicate ? 'duplicate' : 'stored' });
        deps.metrics.telemetrySamples.inc(result.accepted);
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
      async (req) => runSeries(deps.db, req.params.id, req.query),
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
      async (req) => runEnergy(deps.db, req.params.id),
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
      async (req) => runPhases(deps.db, req.params.id),
    );
  };
