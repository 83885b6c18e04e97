import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ErrorBody, IdParams, RunCancelled, RunFinish, RunLogs, RunView } from '@erg/spec';
import type { AppDeps } from '../app';
import { access, seesClusterFailures } from '../access';
import { BODY_LIMITS } from '../body-limits';
import { runView } from '../views';
import { cancelRun, finishRunByHand, openRunLogs, runWithNodes } from '../services/runs';

/** The most of each log one request may ask for. */
const MAX_TAIL_BYTES = 16 * 1024 * 1024;

export const runRoutes =
  (deps: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    app.get('/runs/:id', { config: access.run('campaign.read'), schema: { tags: ['runs'], params: IdParams, response: { 200: RunView, 404: ErrorBody } } }, async (req) => {
      const { run, nodes } = await runWithNodes(deps.db, req.params.id);
      return runView(run, run.cluster, nodes, run.cluster !== null && seesClusterFailures(req.identity!, run.cluster.projectId));
    });

    app.post(
      '/runs/:id/cancel',
      {
        config: access.run('campaign.cancel', { ownerMay: 'researcher' }),
        bodyLimit: BODY_LIMITS.action,
        schema: {
          tags: ['runs'],
          description:
            'Cancels one run; the rest of its campaign goes on. A pending run ends at once; the Slurm job of a run that has one is ' +
            'cancelled by the scheduler on its next cycle — for a task of an array job, that task alone (`scancel <array>_<task>`). ' +
            'Idempotent: a run that already ended is left as it is (`outcome: ended`).',
          params: IdParams,
          response: { 202: RunCancelled, 404: ErrorBody },
        },
      },
      async (req, reply) => reply.status(202).send(await cancelRun(deps, req.params.id, req.log)),
    );

    app.post(
      '/runs/:id/finish',
      {
        config: access.run('run.finish'),
        bodyLimit: BODY_LIMITS.action,
        schema: {
          tags: ['runs'],
          description:
            'Import mode: closes a run of an `execution: import` campaign with the window its measurement covered, and answers 202 with the run. ' +
            'Its energy is computed afterwards by the scheduler from the telemetry posted to the run, over [startedAt, endedAt]: ' +
            'GET /v1/runs/{id}/energy answers 409 (`being computed`) until then, usually within a second.',
          params: IdParams,
          body: RunFinish,
          response: { 202: RunView, 404: ErrorBody, 409: ErrorBody },
        },
      },
      async (req, reply) => {
        const { run, nodes } = await finishRunByHand(deps, req.params.id, {
          startedAt: new Date(req.body.startedAt), endedAt: new Date(req.body.endedAt), exitCode: req.body.exitCode ?? null, metrics: req.body.metrics ?? {},
        }, req.log);
        // An import run has no cluster, so no cluster failure to show.
        return reply.status(202).send(runView(run, null, nodes, false));
      },
    );

    app.get(
      '/runs/:id/logs',
      {
        config: access.run('campaign.read'),
        schema: {
          tags: ['runs'],
          description:
            "The run's stdout and stderr, read from its directory on the cluster (the last `tailBytes` of each), streamed and redacted. " +
            'At most ERG_LOG_READS_PER_TOKEN reads per token and ERG_LOG_READS_PER_CLUSTER per cluster at once (429 beyond); ' +
            '409 when the job left something other than a regular file where a log belongs.',
          params: IdParams,
          querystring: z.object({ tailBytes: z.coerce.number().int().min(1).max(MAX_TAIL_BYTES).default(256 * 1024) }),
          response: { 200: RunLogs, 404: ErrorBody, 409: ErrorBody, 429: ErrorBody, 503: ErrorBody },
        },
      },
      async (req, reply) => {
        const { ERG_LOG_READS_PER_TOKEN: perToken, ERG_LOG_READS_PER_CLUSTER: perCluster, ERG_LOG_READ_TIMEOUT_MS: timeoutMs } = deps.config;
        const holder = req.identity?.id ?? req.tokenName ?? 'anonymous';
        const logs = await openRunLogs(deps, req.params.id, { holder, tailBytes: req.query.tailBytes }, { perToken, perCluster, timeoutMs });
        if (logs.source === 'stored') return logs.body;
        // A stream of RunLogs' JSON, sent as it comes (the schema's serializer is not applied to streams).
        return reply.type('application/json; charset=utf-8').send(logs.body as never);
      },
    );
  };
