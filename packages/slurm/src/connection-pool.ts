import { ClusterConnection } from './cluster-connection';
import type { ClusterEndpointOptions } from './connection-options';

/** One jump host of a cluster's endpoint, its key in plaintext. */
export interface JumpHostEndpoint {
  host: string;
  port: number;
  user: string;
  privateKey: string;
  certificate: string | null;
  hostKeySha256: string;
}

/** What identifies a cluster's SSH endpoint and credentials (a row of the clusters table, its secrets opened, fits). */
export interface ClusterEndpoint {
  id: string;
  /** The cluster's name in erg, for messages that say what to run. */
  name?: string;
  host: string;
  port: number;
  username: string;
  /** Plaintext (callers open the stored, sealed value). */
  privateKey: string;
  /** An OpenSSH user certificate of privateKey; null or absent: none. */
  certificate?: string | null;
  /** Jump hosts in front of the login node, first hop first; absent: none. */
  jumpHosts?: readonly JumpHostEndpoint[];
  /** null: trust on first use (see ClusterConnectionOptions.hostKeySha256). */
  hostKeySha256: string | null;
  /** Bumped by every change of the credentials (see @erg/db updateClusterCredentials). */
  credentialsVersion?: number;
  /** Internal hosts the first hop may be (the project's cluster policy; ClusterConnectionOptions.allowHosts); absent: none. */
  allowHosts?: readonly string[];
}

/**
 * One ClusterConnection per cluster, shared by every caller in the process. When what a
 * connection connects with changes (host, port, user, key, certificate, jump hosts, pinned
 * fingerprint — a credentials rotation bumps credentialsVersion — or the hosts its project's
 * cluster policy allows: a narrowed policy ends the live session too), the same connection is
 * reconfigured: operations in flight finish on the old session, new ones get a session with the
 * new settings (ClusterConnection.reconfigure). Nothing is dropped, and no caller holds a stale object.
 */
export class ConnectionPool {
  private readonly connections = new Map<string, { settings: string; connection: ClusterConnection }>();

  constructor(private readonly maxSessions: number) {}

  get(cluster: ClusterEndpoint): ClusterConnection {
    const settings = settingsOf(cluster, cluster.hostKeySha256);
    const existing = this.connections.get(cluster.id);
    if (existing && existing.settings === settings) return existing.connection;
    // A trust-on-first-use connection whose learned fingerprint has since been recorded on the
    // row is the same connection, not a changed setting.
    if (existing && cluster.hostKeySha256 !== null && existing.connection.hostKeySha256 === cluster.hostKeySha256 &&
        existing.settings === settingsOf(cluster, null)) {
      existing.settings = settings;
      return existing.connection;
    }
    if (existing) {
      existing.connection.reconfigure(endpointOptions(cluster));
      existing.settings = settings;
      return existing.connection;
    }
    const connection = new ClusterConnection({ ...endpointOptions(cluster), maxSessions: this.maxSessions });
    this.connections.set(cluster.id, { settings, connection });
    return connection;
  }

  async closeAll(): Promise<void> {
    const all = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(all.map(({ connection }) => connection.close()));
  }
}

function settingsOf(cluster: ClusterEndpoint, hostKeySha256: string | null): string {
  return JSON.stringify([
    cluster.host, cluster.port, cluster.username, cluster.privateKey, hostKeySha256, cluster.certificate ?? null,
    cluster.jumpHosts ?? [], cluster.credentialsVersion ?? 0, cluster.allowHosts ?? [],
  ]);
}

function endpointOptions(cluster: ClusterEndpoint): ClusterEndpointOptions {
  return {
    host: cluster.host,
    port: cluster.port,
    username: cluster.username,
    privateKey: cluster.privateKey,
    certificate: cluster.certificate ?? null,
    jumpHosts: (cluster.jumpHosts ?? []).map((j) => ({
      host: j.host, port: j.port, username: j.user, privateKey: j.privateKey, certificate: j.certificate, hostKeySha256: j.hostKeySha256,
    })),
    hostKeySha256: cluster.hostKeySha256,
    allowHosts: cluster.allowHosts ?? [],
    ...(cluster.name === undefined ? {} : { clusterName: cluster.name }),
  };
}
