import type { Cluster } from '@erg/db';
import { ClusterConnection, SlurmClient } from '@erg/slurm';

export interface ClusterLink {
  connection: ClusterConnection;
  slurm: SlurmClient;
}

/** One pooled SSH connection per cluster, replaced when the cluster's settings change. */
export class ClusterLinks {
  private readonly links = new Map<string, { version: string; link: ClusterLink }>();

  constructor(private readonly maxSessions: number) {}

  get(cluster: Cluster): ClusterLink {
    // Rebuild the connection only when what it connects with changes (not on every row update).
    const version = [cluster.host, cluster.port, cluster.username, cluster.privateKey, cluster.hostKeySha256].join('\n');
    const existing = this.links.get(cluster.id);
    if (existing && existing.version === version) return existing.link;
    if (existing) void existing.link.connection.close();
    const connection = new ClusterConnection({
      host: cluster.host,
      port: cluster.port,
      username: cluster.username,
      privateKey: cluster.privateKey,
      hostKeySha256: cluster.hostKeySha256,
      maxSessions: this.maxSessions,
    });
    const link = { connection, slurm: new SlurmClient(connection) };
    this.links.set(cluster.id, { version, link });
    return link;
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.links.values()].map(({ link }) => link.connection.close()));
    this.links.clear();
  }
}
