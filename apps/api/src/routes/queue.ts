import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { listQueueClusters, listQueuedRuns } from '@erg/db';
import { livePower } from '@erg/energy';
import { ErrorBody, LIVE_POWER_WINDOW_MS, QueueQuery, QueueView, UNFINISHED_RUN_STATES } from '@erg/spec';
import type { AppDeps } from '../app';
import { access, seesClusterFailures, visibleProjects } from '../access';
import { queueRunView, shownClusterError } from '../views';

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
        const identity = req.identity!;
        const projectIds = visibleProjects(identity);
        const [page, clusters] = await Promise.all([
          listQueuedRuns(deps.db, {
            states: q.state ?? UNFINISHED_RUN_STATES, cluster: q.cluster, campaignId: q.campaign, owner: q.owner, limit: q.limit,
            powerSinceMs: Date.now() - LIVE_POWER_WINDOW_MS, projectIds,
          }),
          listQueueClusters(deps.db, UNFINISHED_RUN_STATES, q.cluster, projectIds),
        ]);
        return {
          clusters: clusters.map((c) => ({
            name: c.name, runCounts: c.runCounts, lastError: shownClusterError(c.lastError, seesClusterFailures(identity, c.projectId)),
            lastContactAt: c.lastContactAt?.toISOString() ?? null,
          })),
          runs: page.runs.map((r) =>
            queueRunView(r, livePower(r.power)?.w ?? null, r.clusterProjectId !== null && seesClusterFailures(identity, r.clusterProjectId)),
          ),
          total: page.total,
          truncated: page.total > page.runs.length,
        };
      },
    );
  };
