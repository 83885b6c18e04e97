import { randomUUID } from 'node:crypto';
import type { SecretBox } from '@erg/secrets';
import { poolOf, prismaOf, type Database } from './client';
import { clusterKeyContext } from './secrets';
import { DEFAULT_POWER_HELPER, ErgError, type ClusterCapabilities } from '@erg/spec';
import { Prisma } from './generated/client';

/** A registered cluster as the API shows it and the scheduler reaches it; its private key as stored (sealed: openClusterKey opens it). */
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
  agentApiUrl: string | null;
  modelIdleW: number;
  modelMaxW: number;
  maxConcurrentRuns: number | null;
  /** Where the site installed erg's node helper on the cluster. */
  powerHelper: string;
  /** What the scheduler found out when it reached the cluster; null: not yet. */
  capabilities: ClusterCapabilities | null;
  lastError: string | null;
  lastContactAt: Date | null;
  createdAt: Date;
}

const CLUSTER_COLUMNS = {
  id: true, name: true, projectId: true, host: true, port: true, username: true, privateKey: true, hostKeySha256: true, hostKeyPolicy: true,
  defaultPartition: true, workDir: true, agentCommand: true, agentApiUrl: true, modelIdleW: true, modelMaxW: true, maxConcurrentRuns: true,
  powerHelper: true, capabilities: true, lastError: true, lastContactAt: true, createdAt: true,
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
  agentApiUrl?: string | null | undefined;
  modelIdleW?: number | undefined;
  modelMaxW?: number | undefined;
  /** Most active runs at once on the cluster (enforced by claimRunsForSubmission); null: no limit. */
  maxConcurrentRuns?: number | null | undefined;
  /** Where the node helper is installed; default /usr/local/sbin/erg-power-helper. */
  powerHelper?: string | undefined;
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
    hostKeySha256: input.hostKeySha256 ?? null,
    defaultPartition: input.defaultPartition ?? null,
  };
}

/** The row as erg's record: capabilities are stored by recordClusterCapabilities in ClusterCapabilities' shape. */
function recordOf<R extends { capabilities: unknown }>(row: R): Omit<R, 'capabilities'> & { capabilities: ClusterCapabilities | null } {
  return { ...row, capabilities: (row.capabilities ?? null) as ClusterCapabilities | null };
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
      select: { id: true, host: true, port: true, username: true, powerHelper: true, hostKeySha256: true },
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
    // What erg found out about the cluster holds while it is the same login and the same helper;
    // otherwise the scheduler probes again (null: unknown until then).
    const sameMachine = existing.host === input.host && existing.port === input.port && existing.username === input.username &&
      existing.powerHelper === (input.powerHelper ?? DEFAULT_POWER_HELPER);
    return recordOf(await prismaOf(db).cluster.update({
      where: { id: existing.id },
      data: { ...data, hostKeySha256: keep ? existing.hostKeySha256 : data.hostKeySha256, lastError: null, ...(sameMachine ? {} : { capabilities: Prisma.DbNull }) },
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
