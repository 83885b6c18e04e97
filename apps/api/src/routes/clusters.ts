import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ClusterExistsError, createCluster, findClusterByName, listClusters, upsertCluster } from '@erg/db';
import { ClusterCreate, clusterHostKeyIssue, ClusterView, ErrorBody, NameParams, ProjectQuery } from '@erg/spec';
import type { AppDeps } from '../app';
import { access, chooseProject, visibleProjects } from '../access';
import { errors } from '../errors';
import { BODY_LIMITS } from '../body-limits';
import { auditCreated } from '../audit';
import { clusterView } from '../views';

export const clusterRoutes =
  (deps: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    app.post(
      '/clusters',
      {
        config: access.create('cluster.manage'),
        bodyLimit: BODY_LIMITS.cluster,
        schema: {
          tags: ['clusters'],
          description: 'Register a cluster in a project (`?project=`; default: your only project where you are a maintainer).',
          querystring: ProjectQuery,
          body: ClusterCreate,
          response: { 201: ClusterView, 400: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody },
        },
      },
      async (req, reply) => {
        const { user, ...rest } = req.body;
        const hostKeyIssue = clusterHostKeyIssue(req.body);
        if (hostKeyIssue) throw errors.validation('request body', [hostKeyIssue]);
        const projectId = await chooseProject(deps.db, req.identity!, req.query.project, 'maintainer');
        try {
          const cluster = await createCluster(deps.db, { ...rest, username: user, projectId }, deps.secrets);
          auditCreated(req, cluster.name);
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
          description:
            'Create or replace a cluster (idempotent). The name comes from the path; the body has every other field of POST /v1/clusters. ' +
            'A new cluster goes to `?project=` (as for POST); an existing one stays in its project.',
          params: NameParams,
          querystring: ProjectQuery,
          body: ClusterCreate.omit({ name: true }),
          response: { 200: ClusterView, 400: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        },
        config: access.cluster('cluster.manage'),
        bodyLimit: BODY_LIMITS.cluster,
      },
      async (req) => {
        const { user, ...rest } = req.body;
        const hostKeyIssue = clusterHostKeyIssue(req.body);
        if (hostKeyIssue) throw errors.validation('request body', [hostKeyIssue]);
        // An existing cluster was checked by its rule (maintainer of its project); a new one needs a project.
        const existing = await findClusterByName(deps.db, req.params.name);
        const projectId = existing?.projectId ?? (await chooseProject(deps.db, req.identity!, req.query.project, 'maintainer'));
        return clusterView(await upsertCluster(deps.db, { ...rest, name: req.params.name, username: user, projectId }, deps.secrets));
      },
    );

    app.get(
      '/clusters',
      { config: access.listing('cluster.read'), schema: { tags: ['clusters'], description: 'The clusters of your projects.', response: { 200: z.object({ items: z.array(ClusterView) }) } } },
      async (req) => ({ items: (await listClusters(deps.db, visibleProjects(req.identity!))).map(clusterView) }),
    );

    app.get(
      '/clusters/:name',
      { config: access.cluster('cluster.read'), schema: { tags: ['clusters'], params: NameParams, response: { 200: ClusterView, 404: ErrorBody } } },
      async (req) => {
        const cluster = await findClusterByName(deps.db, req.params.name);
        if (!cluster) throw errors.notFound('cluster', req.params.name);
        return clusterView(cluster);
      },
    );
  };
