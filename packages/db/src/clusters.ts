import type { Database } from './client';
import type { Cluster } from './generated/client';

export type { Cluster };

export interface NewCluster {
  name: string;
  host: string;
  port: number;
  username: string;
  privateKey: string;
  hostKeySha256: string;
  defaultPartition?: string | undefined;
  workDir: string;
  agentCommand?: string | undefined;
  agentApiUrl?: string | null | undefined;
  modelIdleW?: number | undefined;
  modelMaxW?: number | undefined;
}

export class ClusterExistsError extends Error {
  readonly code = 'ERG_CLUSTER_EXISTS';
  constructor(name: string) {
    super(`a cluster named "${name}" already exists`);
  }
}

export async function createCluster(db: Database, input: NewCluster): Promise<Cluster> {
  try {
    return await db.prisma.cluster.create({ data: { ...input, defaultPartition: input.defaultPartition ?? null } });
  } catch (err) {
    if ((err as { code?: string }).code === 'P2002') throw new ClusterExistsError(input.name);
    throw err;
  }
}

/** Replaces a cluster's connection settings (used by the quickstart to re-register `local`). */
export async function upsertCluster(db: Database, input: NewCluster): Promise<Cluster> {
  const data = { ...input, defaultPartition: input.defaultPartition ?? null };
  return db.prisma.cluster.upsert({ where: { name: input.name }, create: data, update: { ...data, lastError: null } });
}

export function listClusters(db: Database): Promise<Cluster[]> {
  return db.prisma.cluster.findMany({ orderBy: { name: 'asc' } });
}

export function findClusterByName(db: Database, name: string): Promise<Cluster | null> {
  return db.prisma.cluster.findUnique({ where: { name } });
}

export function findClusterById(db: Database, id: string): Promise<Cluster | null> {
  return db.prisma.cluster.findUnique({ where: { id } });
}

/** Records the outcome of the scheduler's latest attempt to reach the cluster. */
export async function recordClusterContact(db: Database, clusterId: string, error: string | null): Promise<void> {
  await db.prisma.cluster.update({
    where: { id: clusterId },
    data: error === null ? { lastError: null, lastContactAt: new Date() } : { lastError: error },
  });
}
