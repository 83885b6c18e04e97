import { compileAllowance, hostRefusal } from '@erg/address-policy';
import {
  carbonIntensitySummaries, ClusterExistsError, createCluster, findClusterByName, listCarbonIntensity, listClusters, openClusterCredentials, projectClusterPolicy,
  putCarbonIntensity, readClusterNodeReports, recordClusterNodeReport, setDeactivated, updateClusterCredentials, upsertCluster, type ClusterRecord, type Database, type TokenIdentity,
} from '@erg/db';
import {
  carbonIntensityIssues, carbonPointMs, clusterBodyIssues, MAX_CARBON_POINTS_PER_CLUSTER, MAX_CARBON_POINTS_PER_READ,
  type CarbonIntensityPut, type ClusterCreate, type ClusterNodeReport, type NodeDoctorReport, type ClusterCredentials, type SpecIssue,
} from '@erg/spec';
import type { CertificateWarningPolicy } from '@erg/slurm';
import type { AppDeps } from '../app';
import { chooseProject, isVisible, requireActive, requireRole, seesClusterFailures, visibleProjects } from '../access';
import { errors } from '../errors';
import { carbonSeriesView, clusterView } from '../views';
import { checkedCredentials, checkedRotation } from '../cluster-credentials';
import { wakeScheduler } from '../wake-scheduler';
import type { Log } from './log';

/**
 * Clusters: registering one (POST, or PUT by name), finding one the caller may see, rotating its
 * credentials, and its grid carbon intensity series. Every step checks who may before it parses a
 * key, and wakes a scheduler when the cluster is new or can log in differently (the probe learns
 * what it can do: the node helper, power states).
 */

type ClusterDeps = Pick<AppDeps, 'db' | 'queue' | 'secrets'>;

/** A cluster body as POST /v1/clusters takes it; PUT takes the same without the name (it is in the path). */
type ClusterBody = Omit<ClusterCreate, 'name'>;

/** Cluster names are unique across erg: creating one tells the caller whether a name is taken, and nothing more. */
function clusterNameTaken(name: string) {
  return errors.conflict(`${new ClusterExistsError(name).message}; choose another name`);
}

/**
 * The cluster a spec names, when the caller may see it. One of a project the caller cannot see is
 * "not registered", as one that does not exist; the refusal lists the clusters they can see.
 * `path`: where the name stands in the body (`cluster` of a campaign spec, `campaign.cluster` of a suite).
 */
export async function findVisibleCluster(db: Database, identity: TokenIdentity, name: string, path?: string): Promise<ClusterRecord> {
  const cluster = await findClusterByName(db, name);
  if (cluster && isVisible(identity, cluster.projectId)) return cluster;
  const known = (await listClusters(db, visibleProjects(identity))).map((c) => c.name);
  throw errors.unknownCluster(name, known, path);
}

/** The cluster of that name (who may see it was checked by the route's access rule). */
export async function clusterNamed(db: Database, name: string): Promise<ClusterRecord> {
  const cluster = await findClusterByName(db, name);
  if (!cluster) throw errors.notFound('cluster', name);
  return cluster;
}

/** The clusters of the caller's projects. */
export async function listVisibleClusters(db: Database, identity: TokenIdentity): Promise<ClusterRecord[]> {
  return listClusters(db, visibleProjects(identity));
}

/** Clusters as the API shows them to the caller, with their intensity series in short (one query for all). */
export async function clusterViews(db: Database, clusters: readonly ClusterRecord[], policy: CertificateWarningPolicy, identity: TokenIdentity) {
  const ids = clusters.map((c) => c.id);
  const [series, nodeReports] = await Promise.all([carbonIntensitySummaries(db, ids), readClusterNodeReports(db, ids)]);
  return clusters.map((c) => clusterView(c, series.get(c.id)!, nodeReports.get(c.id) ?? null, policy, seesClusterFailures(identity, c.projectId)));
}

/**
 * Stores a node's `erg-agent doctor --json` report with its cluster (the schema validated it),
 * replacing the one before: the node and when it was taken come from the report itself.
 */
export async function storeNodeReport(db: Database, name: string, report: NodeDoctorReport, log: Log): Promise<ClusterNodeReport> {
  const cluster = await clusterNamed(db, name);
  const stored: ClusterNodeReport = { node: report.node, takenAt: report.time, storedAt: new Date().toISOString(), report };
  await recordClusterNodeReport(db, cluster.id, stored);
  log.info({ cluster: cluster.name, node: report.node, takenAt: report.time, problems: report.problems.length }, 'node report stored');
  return stored;
}

/**
 * What the schema cannot check of a cluster body: fields that relate, whether the private keys
 * are ones the scheduler's SSH client can use, and whether each certificate is a current user
 * certificate of its key (cluster-credentials.ts). Returns the credentials as they are to be
 * stored (PKCS#8 keys rewritten into a format the SSH client reads); throws a 400 naming every
 * field at fault.
 */
export function checkedClusterBody(body: ClusterBody, addressIssues: readonly SpecIssue[] = []) {
  const issues: SpecIssue[] = [...addressIssues, ...clusterBodyIssues(body)];
  const credentials = checkedCredentials(body);
  issues.push(...credentials.issues);
  if (issues.length > 0) throw errors.validation('request body', issues);
  return { privateKey: credentials.privateKey, certificate: credentials.certificate, jumpHosts: credentials.jumpHosts };
}

/**
 * Where a chain's first hop — the login node, or the first jump host: the host erg's scheduler and
 * API connect to themselves — may be, checked before any DNS against the project's cluster policy
 * (@erg/address-policy hostRefusal): a literal address in any spelling (or localhost) inside erg's
 * own network that the policy does not allow is an issue naming the field. Names pass here: they
 * are checked where they are resolved, at every connection (@erg/slurm hop-chain.ts). `chain`:
 * the login host and the jump hosts as they will be; `at`: what the body changed (`jumpHosts`
 * alone for a rotation, where the login host is not in the body).
 */
async function firstHopIssues(
  db: Database, projectId: string, chain: { host: string; jumpHosts: readonly { host: string }[] }, at: 'body' | 'jumpHosts' = 'body',
): Promise<SpecIssue[]> {
  const found = await projectClusterPolicy(db, projectId);
  if (!found) return [];
  const first = chain.jumpHosts[0];
  const host = first?.host ?? chain.host;
  const refused = hostRefusal(compileAllowance(found.policy.allowHosts), host);
  if (!refused) return [];
  const path = first ? 'jumpHosts[0].host' : at === 'body' ? 'host' : 'jumpHosts';
  const where = first
    ? `${refused.address} (the first jump host)`
    : at === 'body' ? `${refused.address} (the login node)` : `the login node ${refused.address}, which erg reaches itself without jump hosts,`;
  return [{
    path, code: 'invalid_value',
    message:
      `${where} is a ${refused.cls} address, inside erg's own network: erg connects there only where an admin allows it in project ` +
      `"${found.project}"'s cluster policy: erg clusters policy --project ${found.project} --allow ${refused.address} ` +
      `(PUT /v1/projects/${found.project}/cluster-policy; docs/security.md)`,
  }];
}

/** The cluster record to store from a body: its checked credentials and first hop, the login user under the database's name. */
async function newCluster(db: Database, body: ClusterBody, name: string, projectId: string) {
  const { user, ...fields } = body;
  return { ...fields, ...checkedClusterBody(body, await firstHopIssues(db, projectId, body)), name, username: user, projectId };
}

/**
 * Registers a new cluster in `?project=` (or the caller's only project where they maintain), then
 * wakes a scheduler to probe it. Who may is decided before the key is parsed; a taken name is a 409.
 */
export async function registerCluster(
  deps: ClusterDeps, identity: TokenIdentity, request: { project: string | undefined; body: ClusterCreate }, log: Log,
): Promise<ClusterRecord> {
  const projectId = await chooseProject(deps.db, identity, request.project, 'maintainer');
  const { name, ...body } = request.body;
  let cluster: ClusterRecord;
  try {
    cluster = await createCluster(deps.db, await newCluster(deps.db, body, name, projectId), deps.secrets);
  } catch (err) {
    if (err instanceof ClusterExistsError) throw clusterNameTaken(name);
    throw err;
  }
  // A scheduler reaches it now, to find out what it can do (the node helper: power states).
  await wakeScheduler(deps, cluster.id, 'cluster registered', log);
  return cluster;
}

/**
 * Creates or replaces the cluster of that name: replaced in its own project when the caller can
 * see it, else created in the project a new cluster goes to. A name taken by a cluster the caller
 * cannot see answers as registerCluster would (409 for those who may register clusters, else the
 * refusal a free name gets), so the caller learns no more than POST /v1/clusters would tell them.
 */
export async function putCluster(
  deps: ClusterDeps, identity: TokenIdentity, request: { name: string; project: string | undefined; body: ClusterBody }, log: Log,
): Promise<ClusterRecord> {
  const { name } = request;
  // Who may, before the key is parsed; then the cluster is replaced in its project or created.
  const write = async (projectId: string, how: 'replace' | 'create') => {
    const cluster = await newCluster(deps.db, request.body, name, projectId);
    const stored = how === 'replace' ? await upsertCluster(deps.db, cluster, deps.secrets) : await createCluster(deps.db, cluster, deps.secrets);
    // New, or its login or helper changed: a scheduler probes it now (see registerCluster).
    if (stored.capabilities === null) await wakeScheduler(deps, stored.id, 'cluster registered', log);
    return stored;
  };
  const replace = async (projectId: string) => {
    requireRole(identity, projectId, 'maintainer', { kind: 'cluster', name });
    await requireActive(deps.db, { projectId });
    return write(projectId, 'replace');
  };
  const existing = await findClusterByName(deps.db, name);
  if (existing && isVisible(identity, existing.projectId)) return replace(existing.projectId);
  // A free name, or one taken in a project the caller cannot see: both take the path of a new cluster.
  const projectId = await chooseProject(deps.db, identity, request.project, 'maintainer');
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
}

/**
 * Deactivates the cluster (no new campaigns on it; its pending runs are held, its jobs in Slurm
 * followed to their end) or reactivates it, then wakes a scheduler, which writes the held runs'
 * reason or submits them. Idempotent.
 */
export async function setClusterActive(deps: ClusterDeps, name: string, active: boolean, log: Log): Promise<ClusterRecord> {
  const at = await setDeactivated(deps.db, 'cluster', name, !active);
  if (at === undefined) throw errors.notFound('cluster', name);
  const cluster = await clusterNamed(deps.db, name);
  log.info({ cluster: name }, active ? 'cluster reactivated' : 'cluster deactivated');
  await wakeScheduler(deps, cluster.id, active ? 'cluster reactivated' : 'cluster deactivated', log);
  return cluster;
}

/**
 * Replaces what erg logs in to the cluster with (fields left out are kept), then wakes a
 * scheduler: runs waiting for the cluster (an expired certificate) go now, not at the next tick.
 * What is kept is checked with what is given: a new key needs a certificate of its own.
 */
export async function rotateClusterCredentials(deps: ClusterDeps, name: string, body: ClusterCredentials, log: Log): Promise<ClusterRecord> {
  const cluster = await clusterNamed(deps.db, name);
  let stored: { privateKey: string; certificate: string | null };
  try {
    stored = openClusterCredentials(deps.secrets, cluster);
  } catch (err) {
    // A stored key this API cannot open (ERG_SECRET_*) is no obstacle to replacing it.
    if (body.privateKey === undefined) throw err;
    stored = { privateKey: body.privateKey, certificate: cluster.certificate };
  }
  const { change, issues } = checkedRotation(body, stored);
  if (body.jumpHosts !== undefined) issues.unshift(...(await firstHopIssues(deps.db, cluster.projectId, { host: cluster.host, jumpHosts: body.jumpHosts }, 'jumpHosts')));
  if (issues.length > 0) throw errors.validation('request body', issues);
  const updated = await updateClusterCredentials(deps.db, cluster.id, change, deps.secrets);
  if (!updated) throw errors.notFound('cluster', name);
  log.info({ cluster: cluster.name, credentialsVersion: updated.credentialsVersion, changed: Object.keys(change) }, 'cluster credentials rotated');
  await wakeScheduler(deps, updated.id, 'credentials rotated', log);
  return updated;
}

/**
 * Stores points of the cluster's carbon intensity series: they replace the stored points from the
 * first given time to the last (or, with `replace`, the whole series), within the cluster's
 * MAX_CARBON_POINTS_PER_CLUSTER.
 */
export async function storeCarbonIntensity(db: Database, name: string, body: CarbonIntensityPut, log: Log) {
  const cluster = await clusterNamed(db, name);
  const issues = carbonIntensityIssues(body.points);
  if (issues.length > 0) throw errors.validation('request body', issues);
  // The schema checked every time, so each converts.
  const points = body.points.map((p) => ({ tMs: (carbonPointMs(p.t) as { ms: number }).ms, gCO2ePerKWh: p.gCO2ePerKWh }));
  const written = await putCarbonIntensity(db, cluster.id, points, { replace: body.replace, maxPoints: MAX_CARBON_POINTS_PER_CLUSTER });
  if (!written.ok) {
    throw errors.validation('request body', [{
      path: 'points', code: 'too_big',
      message: `the cluster's series would hold ${written.wouldHold} points, more than ${MAX_CARBON_POINTS_PER_CLUSTER}: send the points to keep with replace: true (older ones are dropped)`,
    }]);
  }
  log.info({ cluster: cluster.name, stored: points.length, replaced: written.replaced, points: written.series.points }, 'carbon intensity stored');
  return { cluster: cluster.name, stored: points.length, replaced: written.replaced, series: carbonSeriesView(written.series) };
}

/** The cluster's stored intensity points from `from` to `to` (inclusive; either open), at most MAX_CARBON_POINTS_PER_READ. */
export async function readCarbonIntensity(db: Database, name: string, range: { from?: string | undefined; to?: string | undefined }) {
  const cluster = await clusterNamed(db, name);
  const bounds = { fromMs: range.from === undefined ? undefined : Date.parse(range.from), toMs: range.to === undefined ? undefined : Date.parse(range.to) };
  const [rows, series] = await Promise.all([
    listCarbonIntensity(db, cluster.id, { ...bounds, limit: MAX_CARBON_POINTS_PER_READ + 1 }),
    carbonIntensitySummaries(db, [cluster.id]),
  ]);
  return {
    cluster: cluster.name,
    series: carbonSeriesView(series.get(cluster.id)!),
    points: rows.slice(0, MAX_CARBON_POINTS_PER_READ).map((r) => ({ t: new Date(r.tMs).toISOString(), gCO2ePerKWh: r.gCO2ePerKWh })),
    truncated: rows.length > MAX_CARBON_POINTS_PER_READ,
  };
}
