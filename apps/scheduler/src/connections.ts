import { openClusterKey, type ClusterRecord } from '@erg/db';
import type { SecretBox } from '@erg/secrets';
import { ConnectionPool, SlurmClient, type ClusterConnection } from '@erg/slurm';

export interface ClusterLink {
  connection: ClusterConnection;
  slurm: SlurmClient;
}

/**
 * The scheduler's pooled connection to each cluster, with a SlurmClient over it. The cluster's
 * private key is opened here, for the connection only; the row passed around stays sealed.
 */
export class ClusterLinks {
  private readonly connections: ConnectionPool;

  constructor(
    maxSessions: number,
    private readonly secrets: SecretBox,
  ) {
    this.connections = new ConnectionPool(maxSessions);
  }

  get(cluster: ClusterRecord): ClusterLink {
    const connection = this.connections.get({ ...cluster, privateKey: openClusterKey(this.secrets, cluster) });
    return { connection, slurm: new SlurmClient(connection) };
  }

  closeAll(): Promise<void> {
    return this.connections.closeAll();
  }
}
