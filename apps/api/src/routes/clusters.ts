import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  carbonIntensitySummaries, ClusterExistsError, createCluster, findClusterByName, listCarbonIntensity, listClusters, openClusterCredentials, putCarbonIntensity,
  updateClusterCredentials, upsertCluster, type ClusterRecord, type Database,
} from '@erg/db';
import {
  CarbonIntensityPut, CarbonIntensityQuery, CarbonIntensityView, CarbonIntensityWritten, carbonIntensityIssues, carbonPointMs, ClusterCreate, clusterBodyIssues,
  ClusterCredentials, ClusterList, ClusterView, ErrorBody, MAX_CARBON_POINTS_PER_CLUSTER, MAX_CARBON_POINTS_PER_READ, MAX_CARBON_POINTS_PER_REQUEST, NameParams, ProjectQuery,
  type JumpHostCreate, type SpecIssue,
} from '@erg/spec';
import type { AppDeps } from '../app';
import { access, chooseProject, isVisible, requireRole, visibleProjects } from '../access';
import { errors } from '../errors';
import { BODY_LIMITS } from '../body-limits';
import { auditCreated } from '../audit';
import { carbonSeriesView, clusterView } from '../views';
import { certificateWarningPolicy, checkedCredentials, checkedRotation } from '../cluster-credentials';
import { wakeScheduler } from '../wake-scheduler';

/** Cluster names are unique across erg: creating one tells the caller whether a name is taken, and nothing more. */
function clusterNameTaken(name: string) {
  return errors.conflict(`${new ClusterExistsError(name).message}; choose another name`);
}

/**
 * What the schema cannot check of a cluster body: fields that relate, whether the private keys
 * are ones the scheduler's SSH client can use, and whether each certificate is a current user
 * certificate of its key (cluster-credentials.ts). Returns the credentials as they are to be
 * stored (PKCS#8 keys rewritten into a format the SSH client reads); throws a 400 naming every
 * field at fault.
 */
function checkedBody(body: Parameters<typeof clusterBodyIssues>[0] & { privateKey: string; certificate?: string | undefined; jumpHosts: JumpHostCreate[] }) {
  const issues: SpecIssue[] = clusterBodyIssues(body);
  const credentials = checkedCredentials(body);
  issues.push(...credentials.issues);
  if (issues.length > 0) throw errors.validation('request body', issues);
  return { privateKey: credentials.privateKey, certificate: credentials.certificate, jumpHosts: credentials.jumpHosts };
}

/** Clusters as the API shows them, with their intensity series in short (one query for all). */
async function clusterViews(db: Database, clusters: readonly ClusterRecord[], policy: ReturnType<typeof certificateWarningPolicy>) {
  const series = await carbonIntensitySummaries(db, clusters.map((c) => c.id));
  return clusters.map((c) => clusterView(c, series.get(c.id)!, policy));
}

export const clusterRoutes =
  (deps: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const policy = certificateWarningPolicy(deps.config);
    const viewOf = async (c: ClusterRecord) => (await clusterViews(deps.db, [c], policy))[0]!;
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
        const { user, ...fields } = req.body;
        // Who may, before the key is parsed.
        const projectId = await chooseProject(deps.db, req.identity!, req.query.project, 'maintainer');
        const rest = { ...fields, ...checkedBody(req.body) };
        try {
          const cluster = await createCluster(deps.db, { ...rest, username: user, projectId }, deps.secrets);
          auditCreated(req, cluster.name);
          // A scheduler reaches it now, to find out what it can do (the node helper: power states).
          await wakeScheduler(deps, cluster.id, 'cluster registered', req.log);
          return reply.status(201).send(await viewOf(cluster));
        } catch (err) {
          if (err instanceof ClusterExistsError) throw clusterNameTaken(req.body.name);
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
      async (req) => {
        const { user, ...fields } = req.body;
        const identity = req.identity!;
        const name = req.params.name;
        // Who may, before the key is parsed; then the cluster is replaced in its project or created.
        const write = async (projectId: string, how: 'replace' | 'create') => {
          const cluster = { ...fields, ...checkedBody(req.body), name, username: user, projectId };
          const stored = how === 'replace' ? await upsertCluster(deps.db, cluster, deps.secrets) : await createCluster(deps.db, cluster, deps.secrets);
          // New, or its login or helper changed: a scheduler probes it now (see POST).
          if (stored.capabilities === null) await wakeScheduler(deps, stored.id, 'cluster registered', req.log);
          return viewOf(stored);
        };
        const replace = (projectId: string) => {
          requireRole(identity, projectId, 'maintainer', { kind: 'cluster', name });
          return write(projectId, 'replace');
        };
        const existing = await findClusterByName(deps.db, name);
        if (existing && isVisible(identity, existing.projectId)) return replace(existing.projectId);
        // A free name, or one taken in a project the caller cannot see: both take the path of a new
        // cluster, so the caller learns no more than POST /v1/clusters would tell them.
        const projectId = await chooseProject(deps.db, identity, req.query.project, 'maintainer');
        if (existing) throw clusterNameTaken(name);
        try {
          return await write(projectId, 'create');
        } catch (err) {
          if (!(err instanceof ClusterExistsError)) throw err;
          // Created by a concurrent request since we looked: replace it if it is the caller's to replace.
          const now = await findClusterByName(deps.db, name);
          if (now && isVisible(identity, now.projectId)) return replace(now.projectId);
          throw clusterNameTaken(name);
        }
      },
    );

    app.get(
      '/clusters',
      { config: access.listing('cluster.read'), schema: { tags: ['clusters'], description: 'The clusters of your projects.', response: { 200: ClusterList } } },
      async (req) => ({ items: await clusterViews(deps.db, await listClusters(deps.db, visibleProjects(req.identity!)), policy) }),
    );

    app.get(
      '/clusters/:name',
      { config: access.cluster('cluster.read'), schema: { tags: ['clusters'], params: NameParams, response: { 200: ClusterView, 404: ErrorBody } } },
      async (req) => {
        const cluster = await findClusterByName(deps.db, req.params.name);
        if (!cluster) throw errors.notFound('cluster', req.params.name);
        return viewOf(cluster);
      },
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
      async (req) => {
        const cluster = await findClusterByName(deps.db, req.params.name);
        if (!cluster) throw errors.notFound('cluster', req.params.name);
        // What is kept is checked with what is given: a new key needs a certificate of its own.
        let stored: { privateKey: string; certificate: string | null };
        try {
          stored = openClusterCredentials(deps.secrets, cluster);
        } catch (err) {
          // A stored key this API cannot open (ERG_SECRET_*) is no obstacle to replacing it.
          if (req.body.privateKey === undefined) throw err;
          stored = { privateKey: req.body.privateKey, certificate: cluster.certificate };
        }
        const { change, issues } = checkedRotation(req.body, stored);
        if (issues.length > 0) throw errors.validation('request body', issues);
        const updated = await updateClusterCredentials(deps.db, cluster.id, change, deps.secrets);
        if (!updated) throw errors.notFound('cluster', req.params.name);
        req.log.info({ cluster: cluster.name, credentialsVersion: updated.credentialsVersion, changed: Object.keys(change) }, 'cluster credentials rotated');
        // Runs waiting for the cluster (an expired certificate) go now, not at the next tick.
        await wakeScheduler(deps, updated.id, 'credentials rotated', req.log);
        return viewOf(updated);
      },
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
      async (req) => {
        const cluster = await findClusterByName(deps.db, req.params.name);
        if (!cluster) throw errors.notFound('cluster', req.params.name);
        const issues = carbonIntensityIssues(req.body.points);
        if (issues.length > 0) throw errors.validation('request body', issues);
        // The schema checked every time, so each converts.
        const points = req.body.points.map((p) => ({ tMs: (carbonPointMs(p.t) as { ms: number }).ms, gCO2ePerKWh: p.gCO2ePerKWh }));
        const written = await putCarbonIntensity(deps.db, cluster.id, points, { replace: req.body.replace, maxPoints: MAX_CARBON_POINTS_PER_CLUSTER });
        if (!written.ok) {
          throw errors.validation('request body', [{
            path: 'points', code: 'too_big',
            message: `the cluster's series would hold ${written.wouldHold} points, more than ${MAX_CARBON_POINTS_PER_CLUSTER}: send the points to keep with replace: true (older ones are dropped)`,
          }]);
        }
        req.log.info({ cluster: cluster.name, stored: points.length, replaced: written.replaced, points: written.series.points }, 'carbon intensity stored');
        return { cluster: cluster.name, stored: points.length, replaced: written.replaced, series: carbonSeriesView(written.series) };
      },
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
      async (req) => {
        const cluster = await findClusterByName(deps.db, req.params.name);
        if (!cluster) throw errors.notFound('cluster', req.params.name);
        const range = { fromMs: req.query.from === undefined ? undefined : Date.parse(req.query.from), toMs: req.query.to === undefined ? undefined : Date.parse(req.query.to) };
        const [rows, series] = await Promise.all([
          listCarbonIntensity(deps.db, cluster.id, { ...range, limit: MAX_CARBON_POINTS_PER_READ + 1 }),
          carbonIntensitySummaries(deps.db, [cluster.id]),
        ]);
        return {
          cluster: cluster.name,
          series: carbonSeriesView(series.get(cluster.id)!),
          points: rows.slice(0, MAX_CARBON_POINTS_PER_READ).map((r) => ({ t: new Date(r.tMs).toISOString(), gCO2ePerKWh: r.gCO2ePerKWh })),
          truncated: rows.length > MAX_CARBON_POINTS_PER_READ,
        };
      },
    );
  };
