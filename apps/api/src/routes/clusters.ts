import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  CarbonIntensityPut, CarbonIntensityQuery, CarbonIntensityView, CarbonIntensityWritten, ClusterCreate, ClusterCredentials, ClusterList, ClusterNodeReport, ClusterView, ErrorBody,
  MAX_CARBON_POINTS_PER_CLUSTER, MAX_CARBON_POINTS_PER_READ, MAX_CARBON_POINTS_PER_REQUEST, NameParams, NodeDoctorReport, ProjectQuery,
} from '@erg/spec';
import type { ClusterRecord, TokenIdentity } from '@erg/db';
import type { AppDeps } from '../app';
import { access } from '../access';
import { BODY_LIMITS } from '../body-limits';
import { auditCreated } from '../audit';
import { certificateWarningPolicy } from '../cluster-credentials';
import {
  clusterNamed, clusterViews, listVisibleClusters, putCluster, readCarbonIntensity, registerCluster, rotateClusterCredentials, setClusterActive, storeCarbonIntensity, storeNodeReport,
} from '../services/clusters';

export const clusterRoutes =
  (deps: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const policy = certificateWarningPolicy(deps.config);
    const viewOf = async (c: ClusterRecord, identity: TokenIdentity) => (await clusterViews(deps.db, [c], policy, identity))[0]!;
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
        const cluster = await registerCluster(deps, req.identity!, { project: req.query.project, body: req.body }, req.log);
        auditCreated(req, cluster.name);
        return reply.status(201).send(await viewOf(cluster, req.identity!));
      },
    );

    app.put(
      '/clusters/:name',
      {
        schema: {
          tags: ['clusters'],
          description:
            'Create or replace a cluster (idempotent). The name comes from the path; the body has every other field of POST /v1/clusters. ' +
            'A new cluster goes to `?project=` (as for POST); an existing one stays in its project. A name taken by a cluster you cannot ' +
            'see answers exactly as POST does (409 for those who may register clusters, else the refusal a free name gets).',
          params: NameParams,
          querystring: ProjectQuery,
          body: ClusterCreate.omit({ name: true }),
          response: { 200: ClusterView, 400: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody },
        },
        // The handler picks the project: the cluster's own when the caller can see it, else the one a new cluster would go to.
        config: access.create('cluster.manage'),
        bodyLimit: BODY_LIMITS.cluster,
      },
      async (req) => viewOf(await putCluster(deps, req.identity!, { name: req.params.name, project: req.query.project, body: req.body }, req.log), req.identity!),
    );

    app.get(
      '/clusters',
      { config: access.listing('cluster.read'), schema: { tags: ['clusters'], description: 'The clusters of your projects.', response: { 200: ClusterList } } },
      async (req) => ({ items: await clusterViews(deps.db, await listVisibleClusters(deps.db, req.identity!), policy, req.identity!) }),
    );

    app.get(
      '/clusters/:name',
      { config: access.cluster('cluster.read'), schema: { tags: ['clusters'], params: NameParams, response: { 200: ClusterView, 404: ErrorBody } } },
      async (req) => viewOf(await clusterNamed(deps.db, req.params.name), req.identity!),
    );

    app.put(
      '/clusters/:name/credentials',
      {
        config: access.cluster('cluster.manage'),
        bodyLimit: BODY_LIMITS.cluster,
        schema: {
          tags: ['clusters'],
          description:
            'Rotate what erg logs in to the cluster with — the private key, its OpenSSH certificate, the jump hosts — without downtime: ' +
            'fields left out are kept; the scheduler uses the new credentials for its next connection while commands in flight finish on the old one. ' +
            'A certificate (given, or kept) must be a current user certificate of the key (given, or kept).',
          params: NameParams,
          body: ClusterCredentials,
          response: { 200: ClusterView, 400: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        },
      },
      async (req) => viewOf(await rotateClusterCredentials(deps, req.params.name, req.body, req.log), req.identity!),
    );

    app.post(
      '/clusters/:name/deactivate',
      {
        config: access.cluster('cluster.manage'),
        schema: {
          tags: ['clusters'],
          description:
            'Retires a cluster without deleting it: its campaigns and runs stay readable, but no new campaign may name it (409 ERG_DEACTIVATED) and its ' +
            'suites cannot start runs. Its pending runs are held (not submitted, not cancelled: reactivation resumes them; cancel their campaigns to end them); ' +
            'jobs already in Slurm are followed to their end. Idempotent.',
          params: NameParams,
          response: { 200: ClusterView, 403: ErrorBody, 404: ErrorBody },
        },
      },
      async (req) => viewOf(await setClusterActive(deps, req.params.name, false, req.log), req.identity!),
    );

    app.post(
      '/clusters/:name/reactivate',
      {
        config: access.cluster('cluster.manage'),
        schema: {
          tags: ['clusters'],
          description: 'Undoes deactivation: new campaigns may name the cluster again and its held runs are submitted. Idempotent.',
          params: NameParams,
          response: { 200: ClusterView, 403: ErrorBody, 404: ErrorBody },
        },
      },
      async (req) => viewOf(await setClusterActive(deps, req.params.name, true, req.log), req.identity!),
    );

    app.put(
      '/clusters/:name/carbon-intensity',
      {
        config: access.cluster('cluster.manage'),
        bodyLimit: BODY_LIMITS.carbonIntensity,
        schema: {
          tags: ['clusters'],
          description:
            `Store the grid's carbon intensity over time for the cluster: at most ${MAX_CARBON_POINTS_PER_REQUEST} points a request, ` +
            `${MAX_CARBON_POINTS_PER_CLUSTER} per cluster. Each value holds from its time until the next point's (the last one for as long as the step before it). ` +
            'The points replace every stored point from the first given time to the last given one, and the rest are kept (so a series can be sent in pieces, ' +
            'and a piece sent again replaces itself); with `replace: true` the series becomes exactly the points given. Runs whose energy is computed from now on use it; ' +
            'figures already computed are not recomputed.',
          params: NameParams,
          body: CarbonIntensityPut,
          response: { 200: CarbonIntensityWritten, 400: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        },
      },
      async (req) => storeCarbonIntensity(deps.db, req.params.name, req.body, req.log),
    );

    app.put(
      '/clusters/:name/node-report',
      {
        config: access.cluster('cluster.manage'),
        bodyLimit: BODY_LIMITS.nodeReport,
        schema: {
          tags: ['clusters'],
          description:
            'Store a first-contact report of one of the cluster\'s nodes — the JSON `erg-agent doctor --json FILE` wrote there (docs/power-helper.md) — ' +
            'with the cluster, replacing the one before. GET /v1/clusters/{name} shows it as `nodeReport`, with the node it was taken on and when.',
          params: NameParams,
          body: NodeDoctorReport,
          response: { 200: ClusterNodeReport, 400: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        },
      },
      async (req) => storeNodeReport(deps.db, req.params.name, req.body, req.log),
    );

    app.get(
      '/clusters/:name/carbon-intensity',
      {
        config: access.cluster('cluster.read'),
        schema: {
          tags: ['clusters'],
          description: `The cluster's stored carbon intensity points from \`from\` to \`to\` (inclusive; either open), in time order, at most ${MAX_CARBON_POINTS_PER_READ}.`,
          params: NameParams,
          querystring: CarbonIntensityQuery,
          response: { 200: CarbonIntensityView, 400: ErrorBody, 404: ErrorBody },
        },
      },
      async (req) => readCarbonIntensity(deps.db, req.params.name, req.query),
    );
  };
