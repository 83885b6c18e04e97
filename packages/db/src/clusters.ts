import { randomUUID } from 'node:crypto';
import type { SecretBox } from '@erg/secrets';
import { poolOf, prismaOf, type Database } from './client';
import { DEFAULT_POWER_HELPER, ErgError, type ClusterCapabilities, type ClusterCarbon, type ClusterNodeReport, type ClusterPolicy, type ClusterPrice } from '@erg/spec';
import { readClusterPolicy } from './projects';
import { Prisma } from './generated/client';

/** One jump host of a cluster as stored: its key sealed (jumpHostKeyContext); null: the cluster's key and certificate log in there. */
export interface StoredJumpHost {
  host: string;
  port: number;
  user: string;
  privateKey: string | null;
  certificate: string | null;
  hostKeySha256: string;
}

/** One jump host as given (API body shape, key in plaintext). */
export interface NewJumpHost {
  host: string;
  port: number;
  user: string;
  /** Plaintext; stored sealed. Absent: the cluster's key and certificate. */
  privateKey?: string | undefined;
  certificate?: string | undefined;
  hostKeySha256: string;
}

/** A registered cluster as the API shows it and the scheduler reaches it; its private keys as stored (sealed: openClusterCredentials opens them). */
export interface ClusterRecord {
  id: string;
  name: string;
  projectId: string;
  host: string;
  port: number;
  username: string;
  privateKey: string;
  /** null only for a trust-on-first-use cluster the scheduler has not reached yet. */
  hostKeySha256: string | null;
  /** `pinned` or `trust-on-first-use`. */
  hostKeyPolicy: string;
  defaultPartition: string | null;
  workDir: string;
  agentCommand: string;
  /** 'auto' | 'command' | 'staged' (@erg/spec AGENT_RUNTIME_SETTINGS). */
  agentRuntime: string;
  /** Where erg stages its agent runtime; null: <workDir>/.erg/runtime. */
  runtimeDir: string | null;
  agentApiUrl: string | null;
  modelIdleW: number;
  modelMaxW: number;
  maxConcurrentRuns: number | null;
  /** Most runs with a Slurm job in the queue at once (submitting, queued, running); null: no limit. */
  maxQueuedJobs: number | null;
  /** Where the site installed erg's node helper on the cluster. */
  powerHelper: string;
  /** What the scheduler found out when it reached the cluster; null: not yet. */
  capabilities: ClusterCapabilities | null;
  /** The grid's constant carbon intensity and the site's PUE; null: none. */
  carbon: ClusterCarbon | null;
  /** What runs cost; null: no cost figures. */
  price: ClusterPrice | null;
  /** OpenSSH user certificate of privateKey (public, stored as given); null: the plain key. */
  certificate: string | null;
  /** Jump hosts in front of the login node, first hop first. */
  jumpHosts: StoredJumpHost[];
  /** Bumped by every change of the key, certificate or jump hosts. */
  credentialsVersion: number;
  /** When they last changed after registration; null: never. */
  credentialsUpdatedAt: Date | null;
  lastError: string | null;
  lastContactAt: Date | null;
  createdAt: Date;
  /** Set while the cluster is deactivated (deactivation.ts): nothing new is submitted to it. */
  deactivatedAt: Date | null;
  /**
   * Its project's cluster policy, read with it: which internal hosts its first hop may be. Every
   * connection checks the addresses it resolves against the policy as it is now.
   */
  clusterPolicy: ClusterPolicy;
}

const CLUSTER_COLUMNS = {
  id: true, name: true, projectId: true, host: true, port: true, username: true, privateKey: true, hostKeySha256: true, hostKeyPolicy: true,
  defaultPartition: true, workDir: true, agentCommand: true, agentRuntime: true, runtimeDir: true, agentApiUrl: true, modelIdleW: true, modelMaxW: true, maxConcurrentRuns: true, maxQueuedJobs: true,
  powerHelper: true, capabilities: true, lastError: true, lastContactAt: true, createdAt: true,
  certificate: true, jumpHosts: true, credentialsVersion: true, credentialsUpdatedAt: true, carbon: true, price: true, deactivatedAt: true,
  project: { select: { clusterPolicy: true } },
} as const;

export interface NewCluster {
  name: string;
  /** The project that owns the cluster and its credentials. */
  projectId: string;
  host: string;
  port: number;
  username: string;
  /** Plaintext; stored sealed. */
  privateKey: string;
  /** Required with the `pinned` policy; with `trust-on-first-use`, absent until the first connection records it. */
  hostKeySha256?: string | null | undefined;
  hostKeyPolicy?: 'pinned' | 'trust-on-first-use' | undefined;
  defaultPartition?: string | undefined;
  workDir: string;
  agentCommand?: string | undefined;
  agentRuntime?: 'auto' | 'command' | 'staged' | undefined;
  runtimeDir?: string | null | undefined;
  agentApiUrl?: string | null | undefined;
  modelIdleW?: number | undefined;
  modelMaxW?: number | undefined;
  /** Most active runs at once on the cluster (enforced by claimRunsForSubmission); null: no limit. */
  maxConcurrentRuns?: number | null | undefined;
  /** Most runs with a Slurm job in the cluster's queue at once (enforced by claimRunsForSubmission); null: no limit. */
  maxQueuedJobs?: number | null | undefined;
  /** Where the node helper is installed; default /usr/local/sbin/erg-power-helper. */
  powerHelper?: string | undefined;
  /** OpenSSH user certificate of privateKey; absent or null: none. */
  certificate?: string | null | undefined;
  /** Default: none. */
  jumpHosts?: readonly NewJumpHost[] | undefined;
  /** Constant grid intensity and PUE; absent or null: none. */
  carbon?: ClusterCarbon | null | undefined;
  /** Absent or null: none. */
  price?: ClusterPrice | null | undefined;
}

/**
 * The sealed-key context of the cluster's private key (clusters.private_key). The context names the
 * row, so a sealed value copied to another row does not open; ids never change, names could be
 * reused after a delete.
 */
export const clusterKeyContext = (clusterId: string): string => `cluster:${clusterId}:private_key`;

/** The sealed-key context of a jump host's key: names the row and the hop (keys are sealed again whenever the chain changes). */
export const jumpHostKeyContext = (clusterId: string, index: number): string => `cluster:${clusterId}:jump_host:${index}:private_key`;

function sealJumpHosts(jumpHosts: readonly NewJumpHost[], clusterId: string, secrets: SecretBox): StoredJumpHost[] {
  return jumpHosts.map((j, i) => ({
    host: j.host,
    port: j.port,
    user: j.user,
    privateKey: j.privateKey === undefined ? null : secrets.seal(j.privateKey, jumpHostKeyContext(clusterId, i)),
    certificate: j.certificate ?? null,
    hostKeySha256: j.hostKeySha256,
  }));
}

export class ClusterExistsError extends ErgError<'ERG_CLUSTER_EXISTS'> {
  constructor(name: string) {
    super('ERG_CLUSTER_EXISTS', `a cluster named "${name}" already exists`);
  }
}

/** The row's data with the private key sealed for the row `id` (the context names the row). */
function clusterData(input: NewCluster, id: string, secrets: SecretBox) {
  return {
    ...input,
    privateKey: secrets.seal(input.privateKey, clusterKeyContext(id)),
    certificate: input.certificate ?? null,
    jumpHosts: sealJumpHosts(input.jumpHosts ?? [], id, secrets) as unknown as Prisma.InputJsonValue,
    hostKeySha256: input.hostKeySha256 ?? null,
    defaultPartition: input.defaultPartition ?? null,
    carbon: jsonOrNull(input.carbon),
    price: jsonOrNull(input.price),
  };
}

/** A JSON column's value: SQL NULL for none (Prisma's DbNull), not the JSON null. */
function jsonOrNull(value: object | null | undefined): Prisma.InputJsonValue | typeof Prisma.DbNull {
  return value == null ? Prisma.DbNull : (value as Prisma.InputJsonValue);
}

/**
 * The row as erg's record: capabilities are stored by recordClusterCapabilities in
 * ClusterCapabilities' shape, jump hosts by this module in StoredJumpHost's, carbon and price as
 * the API validated them (ClusterCarbon, ClusterPrice).
 */
function recordOf<R extends { capabilities: unknown; jumpHosts: unknown; carbon: unknown; price: unknown; project: { clusterPolicy: unknown } }>(
  row: R,
): Omit<R, 'capabilities' | 'jumpHosts' | 'carbon' | 'price' | 'project'> & {
  capabilities: ClusterCapabilities | null; jumpHosts: StoredJumpHost[]; carbon: ClusterCarbon | null; price: ClusterPrice | null; clusterPolicy: ClusterPolicy;
} {
  // The project's columns come with the row (one query); only its cluster policy is the record's.
  const { project, ...rest } = row;
  return {
    ...(rest as unknown as Omit<R, 'capabilities' | 'jumpHosts' | 'carbon' | 'price' | 'project'>), capabilities: (row.capabilities ?? null) as ClusterCapabilities | null, jumpHosts: jumpHostsOf(row.jumpHosts),
    carbon: (row.carbon ?? null) as ClusterCarbon | null, price: (row.price ?? null) as ClusterPrice | null, clusterPolicy: readClusterPolicy(project.clusterPolicy),
  };
}

function jumpHostsOf(json: unknown): StoredJumpHost[] {
  return Array.isArray(json) ? (json as StoredJumpHost[]) : [];
}

/**
 * Whether `input` logs in as `existing` does (same key, certificate and jump hosts), so that
 * re-applying the same registration (the quickstart does) does not bump credentialsVersion and
 * make every scheduler reconnect. Keys that cannot be opened count as changed.
 */
function sameCredentials(existing: Pick<ClusterRecord, 'id' | 'privateKey' | 'certificate' | 'jumpHosts'>, input: NewCluster, secrets: SecretBox): boolean {
  try {
    const open = openClusterCredentials(secrets, existing);
    const given = input.jumpHosts ?? [];
    return (
      open.privateKey === input.privateKey &&
      existing.certificate === (input.certificate ?? null) &&
      existing.jumpHosts.length === given.length &&
      existing.jumpHosts.every((j, i) => {
        const g = given[i]!;
        const key = j.privateKey === null ? null : secrets.openStored(j.privateKey, jumpHostKeyContext(existing.id, i));
        return j.host === g.host && j.port === g.port && j.user === g.user && j.hostKeySha256 === g.hostKeySha256 &&
          key === (g.privateKey ?? null) && j.certificate === (g.certificate ?? null);
      })
    );
  } catch {
    return false;
  }
}

export async function createCluster(db: Database, input: NewCluster, secrets: SecretBox): Promise<ClusterRecord> {
  // The id is chosen here, not by Postgres: the sealed key's context names it.
  const id = randomUUID();
  try {
    return recordOf(await prismaOf(db).cluster.create({ data: { ...clusterData(input, id, secrets), id }, select: CLUSTER_COLUMNS }));
  } catch (err) {
    if ((err as { code?: string }).code === 'P2002') throw new ClusterExistsError(input.name);
    throw err;
  }
}

/**
 * Replaces a cluster's connection settings (used by the quickstart to re-register `local`).
 * A body without a fingerprint (trust-on-first-use) keeps the one already recorded for the same
 * host and port: re-applying the same settings must not open a new window of blind trust.
 */
export async function upsertCluster(db: Database, input: NewCluster, secrets: SecretBox): Promise<ClusterRecord> {
  for (let attempt = 0; ; attempt++) {
    const existing = await prismaOf(db).cluster.findUnique({
      where: { name: input.name },
      select: {
        id: true, host: true, port: true, username: true, powerHelper: true, agentCommand: true, agentRuntime: true, hostKeySha256: true, privateKey: true, certificate: true, jumpHosts: true,
      },
    });
    if (!existing) {
      try {
        return await createCluster(db, input, secrets);
      } catch (err) {
        // Created by a concurrent PUT of the same name since we looked: replace that one.
        if (err instanceof ClusterExistsError && attempt === 0) continue;
        throw err;
      }
    }
    const keep = input.hostKeySha256 == null && existing.host === input.host && existing.port === input.port;
    const data = clusterData(input, existing.id, secrets);
    // What erg found out about the cluster holds while it is the same login, the same helper and
    // the same agent runtime settings; otherwise the scheduler probes again (null: unknown until then).
    const sameMachine = existing.host === input.host && existing.port === input.port && existing.username === input.username &&
      existing.powerHelper === (input.powerHelper ?? DEFAULT_POWER_HELPER) &&
      existing.agentCommand === (input.agentCommand ?? 'node') && existing.agentRuntime === (input.agentRuntime ?? 'auto');
    const rotated = !sameCredentials({ ...existing, jumpHosts: jumpHostsOf(existing.jumpHosts) }, input, secrets);
    return recordOf(await prismaOf(db).cluster.update({
      where: { id: existing.id },
      data: {
        ...data, hostKeySha256: keep ? existing.hostKeySha256 : data.hostKeySha256, lastError: null, ...(sameMachine ? {} : { capabilities: Prisma.DbNull }),
        ...(rotated ? { credentialsVersion: { increment: 1 }, credentialsUpdatedAt: new Date() } : {}),
      },
      select: CLUSTER_COLUMNS,
    }));
  }
}

/** Clusters of these projects (every cluster when `projectIds` is null or absent). */
export async function listClusters(db: Database, projectIds: string[] | null = null): Promise<ClusterRecord[]> {
  const rows = await prismaOf(db).cluster.findMany({ where: projectIds === null ? {} : { projectId: { in: projectIds } }, select: CLUSTER_COLUMNS, orderBy: { name: 'asc' } });
  return rows.map(recordOf);
}

export async function findClusterByName(db: Database, name: string): Promise<ClusterRecord | null> {
  const row = await prismaOf(db).cluster.findUnique({ where: { name }, select: CLUSTER_COLUMNS });
  return row ? recordOf(row) : null;
}

export async function findClusterById(db: Database, id: string): Promise<ClusterRecord | null> {
  const row = await prismaOf(db).cluster.findUnique({ where: { id }, select: CLUSTER_COLUMNS });
  return row ? recordOf(row) : null;
}

/** What PUT /v1/clusters/:name/credentials changes: only the fields given (certificate null: none from now on). */
export interface CredentialsChange {
  /** Plaintext; stored sealed. */
  privateKey?: string | undefined;
  certificate?: string | null | undefined;
  /** Replaces the whole chain. */
  jumpHosts?: readonly NewJumpHost[] | undefined;
}

/**
 * Rotates a cluster's credentials: seals what is given, keeps the rest, bumps credentialsVersion
 * (connection pools then swap to the new credentials, letting sessions in flight finish) and
 * clears the last SSH failure, which the new credentials may not have. Null when there is no
 * such cluster.
 */
export async function updateClusterCredentials(db: Database, clusterId: string, change: CredentialsChange, secrets: SecretBox): Promise<ClusterRecord | null> {
  try {
    return recordOf(await prismaOf(db).cluster.update({
      where: { id: clusterId },
      data: {
        ...(change.privateKey === undefined ? {} : { privateKey: secrets.seal(change.privateKey, clusterKeyContext(clusterId)) }),
        ...(change.certificate === undefined ? {} : { certificate: change.certificate }),
        ...(change.jumpHosts === undefined ? {} : { jumpHosts: sealJumpHosts(change.jumpHosts, clusterId, secrets) as unknown as Prisma.InputJsonValue }),
        credentialsVersion: { increment: 1 },
        credentialsUpdatedAt: new Date(),
        lastError: null,
      },
      select: CLUSTER_COLUMNS,
    }));
  } catch (err) {
    if ((err as { code?: string }).code === 'P2025') return null;
    throw err;
  }
}

/** A cluster's credentials opened, for the SSH connection that needs them (and nothing else); fits @erg/slurm's ClusterEndpoint. */
export interface OpenedClusterCredentials {
  privateKey: string;
  certificate: string | null;
  /** Each jump host with its key opened; one without its own key gets the cluster's key and certificate. */
  jumpHosts: { host: string; port: number; user: string; privateKey: string; certificate: string | null; hostKeySha256: string }[];
}

/** The cluster's SSH private key in plaintext, for the connection that needs it (and nothing else). */
export function openClusterKey(secrets: SecretBox, cluster: Pick<ClusterRecord, 'id' | 'privateKey'>): string {
  return secrets.openStored(cluster.privateKey, clusterKeyContext(cluster.id));
}

/** Opens the cluster's sealed keys (its own and its jump hosts'). Throws the secret box's error when one does not open. */
export function openClusterCredentials(secrets: SecretBox, cluster: Pick<ClusterRecord, 'id' | 'privateKey' | 'certificate' | 'jumpHosts'>): OpenedClusterCredentials {
  const privateKey = openClusterKey(secrets, cluster);
  return {
    privateKey,
    certificate: cluster.certificate,
    jumpHosts: cluster.jumpHosts.map((j, i) => ({
      host: j.host,
      port: j.port,
      user: j.user,
      hostKeySha256: j.hostKeySha256,
      ...(j.privateKey === null
        ? { privateKey, certificate: cluster.certificate }
        : { privateKey: secrets.openStored(j.privateKey, jumpHostKeyContext(cluster.id, i)), certificate: j.certificate }),
    })),
  };
}

/** Every cluster's certificates (its own and its jump hosts'), for /metrics: no secret read. */
export async function listClusterCertificates(db: Database): Promise<{ id: string; name: string; certificate: string | null; jumpHosts: { certificate: string | null }[] }[]> {
  const rows = await prismaOf(db).cluster.findMany({ select: { id: true, name: true, certificate: true, jumpHosts: true }, orderBy: { name: 'asc' } });
  return rows.map((r) => {
    const jumps = jumpHostsOf(r.jumpHosts);
    // A jump host without its own key logs in with the cluster's certificate.
    return { id: r.id, name: r.name, certificate: r.certificate, jumpHosts: jumps.map((j) => ({ certificate: j.privateKey === null ? r.certificate : j.certificate })) };
  });
}

/**
 * Seals every jump host key again with `reseal` (a secret-box key rotation: see sealStoredSecrets);
 * returns how many keys were rewritten and the contexts that did not open.
 */
export async function resealJumpHostKeys(
  db: Database,
  needsSealing: (stored: string) => boolean,
  reseal: (stored: string, context: string) => string | null,
): Promise<number> {
  let rewritten = 0;
  const rows = await poolOf(db).query<{ id: string; jump_hosts: StoredJumpHost[] }>(`SELECT id, jump_hosts FROM clusters WHERE jsonb_array_length(jump_hosts) > 0`);
  for (const row of rows.rows) {
    let changed = 0;
    const next = row.jump_hosts.map((j, i) => {
      if (j.privateKey === null || !needsSealing(j.privateKey)) return j;
      const sealed = reseal(j.privateKey, jumpHostKeyContext(row.id, i));
      if (sealed === null) return j;
      changed++;
      return { ...j, privateKey: sealed };
    });
    if (changed === 0) continue;
    // Only if the chain is still what was read: one rotated meanwhile was sealed by its writer.
    const done = await poolOf(db).query(`UPDATE clusters SET jump_hosts = $2::jsonb, updated_at = now() WHERE id = $1 AND jump_hosts = $3::jsonb`, [
      row.id, JSON.stringify(next), JSON.stringify(row.jump_hosts),
    ]);
    if (done.rowCount === 1) rewritten += changed;
  }
  return rewritten;
}

/** Records what the scheduler's probe of the cluster found (Slurm version, the node helper). */
export async function recordClusterCapabilities(db: Database, clusterId: string, capabilities: ClusterCapabilities): Promise<void> {
  await poolOf(db).query('UPDATE clusters SET capabilities = $2::jsonb, updated_at = now() WHERE id = $1', [clusterId, JSON.stringify(capabilities)]);
}

/** Records the outcome of the scheduler's latest attempt to reach the cluster. */
export async function recordClusterContact(db: Database, clusterId: string, error: string | null): Promise<void> {
  await prismaOf(db).cluster.update({
    where: { id: clusterId },
    data: error === null ? { lastError: null, lastContactAt: new Date() } : { lastError: error },
  });
}

/**
 * Trust on first use: records the fingerprint the first successful connection saw. Only a
 * trust-on-first-use cluster without one changes; false when another writer was first (the
 * connection's own pin then refuses any other key).
 */
export async function recordLearnedHostKey(db: Database, clusterId: string, hostKeySha256: string): Promise<boolean> {
  const result = await poolOf(db).query(
    `UPDATE clusters SET host_key_sha256 = $2, updated_at = now()
     WHERE id = $1 AND host_key_sha256 IS NULL AND host_key_policy = 'trust-on-first-use'`,
    [clusterId, hostKeySha256],
  );
  return result.rowCount === 1;
}

/**
 * Stores the cluster's latest node report (`erg-agent doctor --json`, validated by the API as
 * @erg/spec ClusterNodeReport), replacing the one before. A column of its own: the probe rewrites
 * `capabilities` every few minutes.
 */
export async function recordClusterNodeReport(db: Database, clusterId: string, report: ClusterNodeReport): Promise<void> {
  await poolOf(db).query('UPDATE clusters SET node_report = $2::jsonb, updated_at = now() WHERE id = $1', [clusterId, JSON.stringify(report)]);
}

/** The stored node reports of these clusters (absent: none uploaded); read only for views, not with every ClusterRecord. */
export async function readClusterNodeReports(db: Database, clusterIds: readonly string[]): Promise<Map<string, ClusterNodeReport>> {
  if (clusterIds.length === 0) return new Map();
  const { rows } = await poolOf(db).query<{ id: string; node_report: ClusterNodeReport }>(
    'SELECT id, node_report FROM clusters WHERE id = ANY($1::uuid[]) AND node_report IS NOT NULL', [clusterIds],
  );
  return new Map(rows.map((r) => [r.id, r.node_report]));
}
