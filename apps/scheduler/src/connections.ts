import { openClusterCredentials, type ClusterRecord } from '@erg/db';
import type { SecretBox } from '@erg/secrets';
import { ConnectionPool, SlurmClient, type ClusterConnection } from '@erg/slurm';

export interface ClusterLink {
  connection: ClusterConnection;
  slurm: SlurmClient;
}

/**
 * The scheduler's pooled connection to each cluster, with a SlurmClient over it. The cluster's
 * private keys (its own, its jump hosts') are opened here, for the connection only; the row
 * passed around stays sealed. A row with a new credentialsVersion (a rotation) reconfigures the
 * pooled connection: commands in flight finish on the old session, the cycle's next ones use the new
 * credentials. An expired certificate fails the connection's next call with CertificateExpiredError
 * before anything is sent; the cycle records it on the cluster, whose runs wait with it as their reason.
 * The project's cluster policy goes with the row: each connect attempt checks the first hop's
 * addresses against it as it is now (a changed policy reconfigures the connection like a rotation).
 */
export class ClusterLinks {
  private readonly connections: ConnectionPool;

  /** `umask`: what staged files and submitted jobs get on every cluster (ERG_RUN_UMASK; @erg/spec's run-dir file modes). */
  constructor(
    maxSessions: number,
    private readonly secrets: SecretBox,
    private readonly umask?: number,
  ) {
    this.connections = new ConnectionPool(maxSessions);
  }

  get(cluster: ClusterRecord): ClusterLink {
    const connection = this.connections.get({ ...cluster, ...openClusterCredentials(this.secrets, cluster), allowHosts: cluster.clusterPolicy.allowHosts });
    return { connection, slurm: new SlurmClient(connection, this.umask === undefined ? {} : { umask: this.umask }) };
  }

  closeAll(): Promise<void> {
    return this.connections.closeAll();
  }
}
