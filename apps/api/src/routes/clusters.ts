import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ClusterExistsError, createCluster, findClusterByName, listClusters, upsertCluster } from '@erg/db';
import { ClusterCreate, ClusterView, ErrorBody, NameParams } from '@erg/spec';
import type { AppDeps } from '../app';
import { errors } from '../errors';
import { clusterView } from '../views';

export const clusterRoutes =
  (deps: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    app.post(
      '/clusters',
      { schema: { tags: ['clusters'], body: ClusterCreate, response: { 201: ClusterView, 400: ErrorBody, 409: ErrorBody } } },
      async (req, reply) => {
        const { user, ...rest } = req.body;
        try {
          const cluster = await createCluster(deps.db, { ...rest, username: user });
          return reply.status(201).send(clusterView(cluster));
        } catch (err) {
          if (err instanceof ClusterExistsError) throw errors.conflict(`${err.message}; choose another name`);
          throw err;
        }
      },
    );

    app.put(
      '/clusters/:name',
      {
        schema: {
          tags: ['clusters'],
          description: 'Create or replace a cluster (idempotent). The name comes from the path; the body has every other field of POST /v1/clusters.',
          params: NameParams,
          body: ClusterCreate.omit({ name: true }),
          response: { 200: ClusterView, 400: ErrorBody },
        },
      },
      async (req) => {
        const { user, ...rest } = req.body;
        return clusterView(await upsertCluster(deps.db, { ...rest, name: req.params.name, username: user }));
      },
    );

    app.get('/clusters', { schema: { tags: ['clusters'], response: { 200: z.object({ items: z.array(ClusterView) }) } } }, async () => ({
      items: (await listClusters(deps.db)).map(clusterView),
    }));

    app.get(
      '/clusters/:name',
      { schema: { tags: ['clusters'], params: NameParams, response: { 200: ClusterView, 404: ErrorBody } } },
      async (req) => {
        const cluster = await findClusterByName(deps.db, req.params.name);
        if (!cluster) throw errors.notFound('cluster', req.params.name);
        return clusterView(cluster);
      },
    );
  };
