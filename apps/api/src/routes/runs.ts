import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ErrorBody, IdParams, RunLogs, RunView } from '@erg/spec';
import type { AppDeps } from '../app';
import { errors } from '../errors';
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

    app.get('/runs/:id', { schema: { tags: ['runs'], params: IdParams, response: { 200: RunView, 404: ErrorBody } } }, async (req) => {
      const run = await loadRun(req.params.id);
      return runView(run, run.campaign.cluster);
    });

    app.get(
      '/runs/:id/logs',
      {
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
