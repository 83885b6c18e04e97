import { ClusterConnection } from './ssh';

/** What identifies a cluster's SSH endpoint and credentials (a row of the clusters table fits). */
export interface ClusterEndpoint {
  id: string;
  host: string;
  port: number;
  username: string;
  /** Plaintext (callers open the stored, sealed value). */
  privateKey: string;
  /** null: trust on first use (see ClusterConnectionOptions.hostKeySha256). */
  hostKeySha256: string | null;
}

/**
 * One ClusterConnection per cluster, shared by every caller in the process. A connection is
 * replaced only when what it connects with changes (host, port, user, key, pinned fingerprint),
 * not on every update of the cluster's row.
 */
export class ConnectionPool {
  private readonly connections = new Map<string, { settings: string; connection: ClusterConnection }>();

  constructor(private readonly maxSessions: number) {}

  get(cluster: ClusterEndpoint): ClusterConnection {
    const settings = JSON.stringify([cluster.host, cluster.port, cluster.username, cluster.privateKey, cluster.hostKeySha256]);
    const existing = this.connections.get(cluster.id);
    if (existing && existing.settings === settings) return existing.connection;
    // A trust-on-first-use connection whose learned fingerprint has since been recorded on the
    // row is the same connection, not a changed setting.
    if (existing && cluster.hostKeySha256 !== null && existing.connection.hostKeySha256 === cluster.hostKeySha256 &&
        existing.settings === JSON.stringify([cluster.host, cluster.port, cluster.username, cluster.privateKey, null])) {
      existing.settings = settings;
      return existing.connection;
    }
    if (existing) void existing.connection.close();
    const connection = new ClusterConnection({
      host: cluster.host,
      port: cluster.port,
      username: cluster.username,
      privateKey: cluster.privateKey,
      hostKeySha256: cluster.hostKeySha256,
      maxSessions: this.maxSessions,
    });
    this.connections.set(cluster.id, { settings, connection });
    return connection;
  }

  async closeAll(): Promise<void> {
    const all = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(all.map(({ connection }) => connection.close()));
  }
}
