import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { findClusterById, findRunDetail, findRunLogSource, finishImportedRun, listRunNodes, requestRunCancel } from '@erg/db';
import { refreshRunEnergy } from '@erg/results';
import { ErrorBody, IdParams, RunCancelled, RunLogs, RunView } from '@erg/spec';
import type { AppDeps } from '../app';
import { access } from '../access';
import { errors } from '../errors';
import { BODY_LIMITS } from '../body-limits';
import { runView } from '../views';
import { wakeScheduler } from '../wake-scheduler';
import type { LogsBody } from '../cluster-files';

/** The most of each log one request may ask for. */
const MAX_TAIL_BYTES = 16 * 1024 * 1024;

export const runRoutes =
  (deps: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    async function loadRun(id: string) {
      const run = await findRunDetail(deps.db, id);
      if (!run) throw errors.notFound('run', id);
      return run;
    }

    app.get('/runs/:id', { config: access.run('campaign.read'), schema: { tags: ['runs'], params: IdParams, response: { 200: RunView, 404: ErrorBody } } }, async (req) => {
      const run = await loadRun(req.params.id);
      return runView(run, run.cluster, await listRunNodes(deps.db, run.id));
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
      async (req, reply) => {
        const run = await loadRun(req.params.id);
        const outcome = await requestRunCancel(deps.db, run.id);
        // Its job is the scheduler's to scancel: wake it instead of waiting for its next tick.
        const clusterId = outcome === 'cancelling' ? (await findRunLogSource(deps.db, run.id))?.clusterId : null;
        if (clusterId) await wakeScheduler(deps, clusterId, 'run cancelled', req.log);
        return reply.status(202).send({ id: run.id, outcome });
      },
    );

    app.post(
      '/runs/:id/finish',
      {
        config: access.run('run.finish'),
        bodyLimit: BODY_LIMITS.action,
        schema: {
          tags: ['runs'],
          description:
            'Import mode: closes a run of an `execution: import` campaign with the window its measurement covered. ' +
            'Energy is computed from the telemetry posted to the run, over [startedAt, endedAt].',
          params: IdParams,
          body: z
            .object({
              startedAt: z.iso.datetime({ offset: true, error: 'an ISO 8601 time, e.g. 2026-11-30T10:00:00Z' }),
              endedAt: z.iso.datetime({ offset: true, error: 'an ISO 8601 time, e.g. 2026-11-30T10:05:00Z' }),
              exitCode: z.int().min(0).max(255).optional(),
              metrics: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/), z.number().nullable()).optional(),
            })
            .strict()
            .refine((b) => Date.parse(b.endedAt) > Date.parse(b.startedAt), { error: 'endedAt must be after startedAt', path: ['endedAt'] }),
          response: { 200: RunView, 404: ErrorBody, 409: ErrorBody },
        },
      },
      async (req) => {
        const run = await loadRun(req.params.id);
        if (run.campaign.execution !== 'import') throw errors.conflict(`run ${run.id} belongs to a campaign erg submits to Slurm; only runs of execution: import campaigns are finished by hand`);
        const done = await finishImportedRun(deps.db, {
          runId: run.id, startedAt: new Date(req.body.startedAt), endedAt: new Date(req.body.endedAt),
          exitCode: req.body.exitCode ?? null, metrics: req.body.metrics ?? {},
        });
        if (!done) throw errors.conflict(`run ${run.id} is already ${run.state}`);
        await refreshRunEnergy(deps.db, run.id);
        const updated = await loadRun(run.id);
        return runView(updated, null, await listRunNodes(deps.db, run.id));
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
        const run = await findRunLogSource(deps.db, req.params.id);
        if (!run) throw errors.notFound('run', req.params.id);
        const cluster = run.clusterId === null ? null : await findClusterById(deps.db, run.clusterId);
        const stored = { runId: run.id, source: 'stored' as const, stdout: run.stdoutTail ?? '', stderr: run.stderrTail ?? '', truncated: false };
        if (!cluster || !run.runDir) return stored; // never submitted, or an imported run
        const { ERG_LOG_READS_PER_TOKEN: perToken, ERG_LOG_READS_PER_CLUSTER: perCluster } = deps.config;
        const tokenKey = `token:${req.identity?.id ?? req.tokenName ?? 'anonymous'}`;
        const release = deps.clusterFiles.tryAcquire([{ key: tokenKey, limit: perToken }, { key: `cluster:${cluster.id}`, limit: perCluster }]);
        if (!release) {
          reply.header('Retry-After', 1);
          const tokenFull = deps.clusterFiles.tryAcquire([{ key: tokenKey, limit: perToken }]);
          tokenFull?.();
          throw tokenFull ? errors.logReadsBusy(`cluster "${cluster.name}"`, perCluster) : errors.logReadsBusy('this token', perToken);
        }
        let logs: LogsBody;
        try {
          logs = await deps.clusterFiles.openLogs(cluster, run.id, run.runDir, { tailBytes: req.query.tailBytes, timeoutMs: deps.config.ERG_LOG_READ_TIMEOUT_MS });
        } catch (err) {
          release();
          if (run.finalizedAt) return stored; // the tail kept at the end is still worth showing
          throw errors.clusterUnavailable(cluster.name, (err as Error).message);
        }
        if (logs.status === 'refused') {
          release();
          throw errors.logUnreadable(run.id, logs.message);
        }
        // The place is held until the last byte is sent, or the client goes away.
        logs.body.once('close', release);
        // A stream of RunLogs' JSON, sent as it comes (the schema's serializer is not applied to streams).
        return reply.type('application/json; charset=utf-8').send(logs.body as never);
      },
    );
  };
