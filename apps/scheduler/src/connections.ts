import type { Cluster } from '@erg/db';
import { ConnectionPool, SlurmClient, type ClusterConnection } from '@erg/slurm';

export interface ClusterLink {
  connection: ClusterConnection;
  slurm: SlurmClient;
}

/** The scheduler's pooled connection to each cluster, with a SlurmClient over it. */
export class ClusterLinks {
  private readonly pool: ConnectionPool;

  constructor(maxSessions: number) {
    this.pool = new ConnectionPool(maxSessions);
  }

  get(cluster: Cluster): ClusterLink {
    const connection = this.pool.get(cluster);
    return { connection, slurm: new SlurmClient(connection) };
  }

  closeAll(): Promise<void> {
    return this.pool.closeAll();
  }
}
