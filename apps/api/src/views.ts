import type {
  ApiTokenRecord, CampaignCluster, CarbonIntensitySummary, ClusterRecord, ProjectRecord, QueueRunRow, Role, RunDetail, RunNodeRecord, RunSummaryRecord, TokenIdentity, UserRecord,
} from '@erg/db';
import { agentRuntimeSettingOf, runtimeDirOf, type ClusterNodeReport, type UnfinishedRunState } from '@erg/spec';
import type { CertificateWarningPolicy } from '@erg/slurm';
import { credentialsView } from './cluster-credentials';

/** Database rows → API bodies. Secrets (the private key) have no way out of here. */

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

const msIso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** A cluster's stored intensity series in short, as the API shows it. */
export function carbonSeriesView(s: CarbonIntensitySummary) {
  return { points: s.points, from: msIso(s.fromMs), to: msIso(s.toMs) };
}

/**
 * What a caller who may not read a cluster's failures (access.ts seesClusterFailures: viewers,
 * researchers, and evidence bundles, which leave the project) reads in their place.
 */
export const CLUSTER_FAILURE_HIDDEN = 'the cluster cannot be reached; a maintainer can see why';

/** A cluster's last error as the caller may read it: the detail (`detail`: seesClusterFailures), else only that there is one. */
export function shownClusterError(lastError: string | null, detail: boolean): string | null {
  return lastError === null || detail ? lastError : CLUSTER_FAILURE_HIDDEN;
}

/**
 * `series`: its stored intensity series in short; `policy`: the certificate warning window (ApiConfig, see cluster-credentials.ts);
 * `detail`: whether the caller reads its failures' detail (seesClusterFailures).
 */
export function clusterView(c: ClusterRecord, series: CarbonIntensitySummary, nodeReport: ClusterNodeReport | null, policy: CertificateWarningPolicy | undefined, detail: boolean) {
  return {
    id: c.id,
    name: c.name,
    host: c.host,
    port: c.port,
    user: c.username,
    hostKeySha256: c.hostKeySha256,
    hostKeyPolicy: c.hostKeyPolicy === 'trust-on-first-use' ? ('trust-on-first-use' as const) : ('pinned' as const),
    defaultPartition: c.defaultPartition,
    workDir: c.workDir,
    agentCommand: c.agentCommand,
    agentRuntime: agentRuntimeSettingOf(c.agentRuntime),
    runtimeDir: runtimeDirOf(c),
    agentApiUrl: c.agentApiUrl,
    modelIdleW: c.modelIdleW,
    modelMaxW: c.modelMaxW,
    maxConcurrentRuns: c.maxConcurrentRuns,
    maxQueuedJobs: c.maxQueuedJobs,
    powerHelper: c.powerHelper,
    carbon: c.carbon && { gCO2ePerKWh: c.carbon.gCO2ePerKWh ?? null, pue: c.carbon.pue },
    carbonIntensity: carbonSeriesView(series),
    price: c.price && { perNodeHour: c.price.perNodeHour ?? null, perKWh: c.price.perKWh ?? null, currency: c.price.currency },
    capabilities: c.capabilities,
    nodeReport,
    lastError: shownClusterError(c.lastError, detail),
    lastContactAt: iso(c.lastContactAt),
    // Certificates, jump hosts (never their keys) and the warnings about them.
    ...credentialsView(c, policy),
    createdAt: c.createdAt.toISOString(),
    deactivatedAt: iso(c.deactivatedAt),
  };
}

/** Shared with the scheduler, which puts the same body in suite webhooks. */
export { campaignSummaryView as campaignView } from '@erg/db';

/** A pending run waits for its cluster; when the cluster is failing, that failure (as the caller may read it) is the reason. */
function effectiveReason(run: { state: string; reason: string | null }, cluster: Pick<CampaignCluster, 'name' | 'lastError'> | null, detail: boolean): string | null {
  if (run.state === 'pending' && cluster?.lastError) return `waiting for cluster "${cluster.name}": ${shownClusterError(cluster.lastError, detail)}`;
  return run.reason;
}

const nsIso = (ns: bigint | null): string | null => (ns === null ? null : new Date(Number(ns / 1_000_000n)).toISOString());

/** The partition a run's job asks for: the spec's, else the cluster's default (null: Slurm's default). */
function partitionOf(spec: unknown, cluster: Pick<CampaignCluster, 'defaultPartition'> | null): string | null {
  const resources = (spec as { resources?: { partition?: unknown } } | null)?.resources;
  return typeof resources?.partition === 'string' ? resources.partition : (cluster?.defaultPartition ?? null);
}

/** `detail`: whether the caller reads the cluster's failures' detail (seesClusterFailures). */
export function runSummaryView(run: RunSummaryRecord, cluster: CampaignCluster | null, detail: boolean) {
  return {
    id: run.id,
    configurationKey: run.configurationKey,
    parameters: run.parameters,
    repetition: run.repetition,
    state: run.state,
    slurmJobId: run.slurmJobId,
    exitCode: run.exitCode,
    reason: effectiveReason(run, cluster, detail),
  };
}

/** `123_4` (a task of array job 123) → its parts; a job of its own has none. */
function arrayTask(slurmJobId: string | null): { arrayJobId: string | null; arrayTaskId: number | null } {
  const m = slurmJobId === null ? null : /^(\d+)_(\d+)$/.exec(slurmJobId);
  return m ? { arrayJobId: m[1]!, arrayTaskId: Number(m[2]) } : { arrayJobId: null, arrayTaskId: null };
}

export function runView(run: RunDetail, cluster: CampaignCluster | null, nodes: readonly RunNodeRecord[], detail: boolean) {
  const timeS =
    run.workloadStartNs !== null && run.workloadEndNs !== null ? Number(run.workloadEndNs - run.workloadStartNs) / 1e9 : null;
  return {
    ...runSummaryView(run, cluster, detail),
    campaignId: run.campaignId,
    campaignName: run.campaign.name,
    ...arrayTask(run.slurmJobId),
    cancelRequestedAt: iso(run.cancelRequestedAt),
    slurmState: run.slurmState,
    signal: run.signal,
    submitAttempts: run.submitAttempts,
    submittedAt: iso(run.submittedAt),
    startedAt: iso(run.startedAt),
    endedAt: iso(run.endedAt),
    timeS,
    workloadStart: nsIso(run.workloadStartNs),
    workloadEnd: nsIso(run.workloadEndNs),
    idleStart: nsIso(run.idleStartNs),
    idleEnd: nsIso(run.idleEndNs),
    cooldown: run.cooldown,
    partition: partitionOf(run.campaign.spec, cluster),
    nodeList: run.nodeList,
    runDir: run.runDir,
    metrics: run.metrics ?? null,
    warnings: run.warnings,
    jobScript: run.jobScript,
    nodes: nodes.map((n) => ({ node: n.node, fingerprintId: n.fingerprintId, fingerprint: n.fingerprint, power: n.power })),
  };
}

/** One row of GET /v1/queue; `powerW` is the run's live power (see livePower in @erg/energy); `detail`: as for runSummaryView. */
export function queueRunView(r: QueueRunRow, powerW: number | null, detail: boolean) {
  return {
    id: r.id,
    campaignId: r.campaignId,
    campaignName: r.campaignName,
    owner: r.owner,
    cluster: r.cluster,
    configurationKey: r.configurationKey,
    parameters: r.parameters,
    repetition: r.repetition,
    state: r.state as UnfinishedRunState,
    slurmJobId: r.slurmJobId,
    partition: r.partition,
    nodes: r.nodes,
    nodeList: r.nodeList,
    createdAt: r.createdAt.toISOString(),
    submittedAt: iso(r.submittedAt),
    startedAt: iso(r.startedAt),
    reason: effectiveReason(r, r.cluster === null ? null : { name: r.cluster, lastError: r.clusterLastError }, detail),
    powerW,
  };
}

/** A project as the caller sees it: with the caller's role there. */
export function projectView(p: ProjectRecord, identity: TokenIdentity) {
  return {
    id: p.id, name: p.name, description: p.description, maxConcurrentRuns: p.maxConcurrentRuns,
    role: identity.isAdmin ? ('admin' as const) : (identity.roles.get(p.id) ?? null), createdAt: p.createdAt.toISOString(), deactivatedAt: iso(p.deactivatedAt),
  };
}

export function userView(u: UserRecord) {
  return { id: u.id, name: u.name, kind: u.kind as 'person' | 'service', isAdmin: u.isAdmin, createdAt: u.createdAt.toISOString(), deactivatedAt: iso(u.deactivatedAt) };
}

/** A token without its secret; `projectNames` names its projects (projectNames in services/access.ts). */
export function tokenView(t: ApiTokenRecord, userName: string, projectNames: Map<string, string>) {
  return {
    id: t.id, name: t.name, prefix: t.prefix, user: userName, expiresAt: iso(t.expiresAt),
    projects: t.projectIds.map((id) => projectNames.get(id) ?? id), role: (t.maxRole as Role | null) ?? null,
    createdAt: t.createdAt.toISOString(), lastUsedAt: iso(t.lastUsedAt), revokedAt: iso(t.revokedAt),
  };
}
