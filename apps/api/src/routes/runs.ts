import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { finishImportedRun } from '@erg/db';
import { refreshRunEnergy } from '@erg/results';
import { ErrorBody, IdParams, RunLogs, RunView } from '@erg/spec';
import type { AppDeps } from '../app';
import { access } from '../access';
import { errors } from '../errors';
import { BODY_LIMITS } from '../body-limits';
import { runView } from '../views';

export const runRoutes =
  (deps: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    async function loadRun(id: string) {
      const run = await deps.db.prisma.run.findUnique({
        where: { id },
        include: { configuration: true, campaign: { include: { cluster: true } } },
      });
      if (!run) throw errors.notFound('run', id);
      return run;
    }

    app.get('/runs/:id', { config: access.run('campaign.read'), schema: { tags: ['runs'], params: IdParams, response: { 200: RunView, 404: ErrorBody } } }, async (req) => {
      const run = await loadRun(req.params.id);
      return runView(run, run.campaign.cluster);
    });

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
        return runView(updated, null);
      },
    );

    app.get(
      '/runs/:id/logs',
      {
        config: access.run('campaign.read'),
        schema: {
          tags: ['runs'],
          description: "The run's stdout and stderr, read from its directory on the cluster (the last `tailBytes` of each).",
          params: IdParams,
          querystring: z.object({ tailBytes: z.coerce.number().int().min(1).max(16 * 1024 * 1024).default(256 * 1024) }),
          response: { 200: RunLogs, 404: ErrorBody, 503: ErrorBody },
        },
      },
      async (req) => {
        const run = await loadRun(req.params.id);
        const cluster = run.campaign.cluster;
        const stored = { runId: run.id, source: 'stored' as const, stdout: run.stdoutTail ?? '', stderr: run.stderrTail ?? '', truncated: false };
        if (!cluster || !run.runDir) return stored; // never submitted, or an imported run
        try {
          const logs = await deps.clusterFiles.readLogs(cluster, run.runDir, req.query.tailBytes);
          return { runId: run.id, source: 'cluster' as const, ...logs };
        } catch (err) {
          if (run.finalizedAt) return stored; // the tail kept at the end is still worth showing
          throw errors.clusterUnavailable(cluster.name, (err as Error).message);
        }
      },
    );
  };
