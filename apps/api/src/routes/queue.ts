import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { listQueueClusters, listQueuedRuns } from '@erg/db';
import { livePower } from '@erg/energy';
import { ErrorBody, LIVE_POWER_WINDOW_MS, QueueQuery, QueueView, UNFINISHED_RUN_STATES } from '@erg/spec';
import type { AppDeps } from '../app';
import { access, visibleProjects } from '../access';
import { queueRunView } from '../views';

export const queueRoutes =
  (deps: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    app.get(
      '/queue',
      {
        config: access.listing('campaign.read'),
        schema: {
          tags: ['queue'],
          description:
            'What is queued and running across all clusters and campaigns: every unfinished run (running first, then queued and ' +
            'submitting, then pending; oldest first within a state) with its live power, and per cluster the runs of its unfinished campaigns by state.',
          querystring: QueueQuery,
          response: { 200: QueueView, 400: ErrorBody },
        },
      },
      async (req) => {
        const q = req.query;
        const projectIds = visibleProjects(req.identity!);
        const [page, clusters] = await Promise.all([
          listQueuedRuns(deps.db, {
            states: q.state ?? UNFINISHED_RUN_STATES, cluster: q.cluster, campaignId: q.campaign, owner: q.owner, limit: q.limit,
            powerSinceMs: Date.now() - LIVE_POWER_WINDOW_MS, projectIds,
          }),
          listQueueClusters(deps.db, UNFINISHED_RUN_STATES, q.cluster, projectIds),
        ]);
        return {
          clusters: clusters.map((c) => ({ name: c.name, runCounts: c.runCounts, lastError: c.lastError, lastContactAt: c.lastContactAt?.toISOString() ?? null })),
          runs: page.runs.map((r) => queueRunView(r, livePower(r.power)?.w ?? null)),
          total: page.total,
          truncated: page.total > page.runs.length,
        };
      },
    );
  };
