import type { Cluster } from '@erg/db';
import { ClusterConnection } from '@erg/slurm';

export interface Logs {
  stdout: string;
  stderr: string;
  truncated: boolean;
}

/**
 * Reads run files from clusters for the logs endpoint. One SSH connection per cluster, opened on
 * first use and replaced when the cluster's settings change; the scheduler has its own.
 */
export class ClusterFiles {
  private readonly connections = new Map<string, { version: string; connection: ClusterConnection }>();

  private connectionFor(cluster: Cluster): ClusterConnection {
    // Rebuild the connection only when what it connects with changes (not on every row update).
    const version = [cluster.host, cluster.port, cluster.username, cluster.privateKey, cluster.hostKeySha256].join('\n');
    const existing = this.connections.get(cluster.id);
    if (existing && existing.version === version) return existing.connection;
    void existing?.connection.close();
    const connection = new ClusterConnection({
      host: cluster.host,
      port: cluster.port,
      username: cluster.username,
      privateKey: cluster.privateKey,
      hostKeySha256: cluster.hostKeySha256,
      // Leave most of sshd's 10 sessions to the scheduler.
      maxSessions: 2,
    });
    this.connections.set(cluster.id, { version, connection });
    return connection;
  }

  async readLogs(cluster: Cluster, runDir: string, tailBytes: number): Promise<Logs> {
    const connection = this.connectionFor(cluster);
    const [stdout, stderr] = await Promise.all([
      connection.readFile(`${runDir}/stdout.log`, { maxBytes: tailBytes, fromEnd: true }),
      connection.readFile(`${runDir}/stderr.log`, { maxBytes: tailBytes, fromEnd: true }),
    ]);
    return {
      stdout: stdout?.text ?? '',
      stderr: stderr?.text ?? '',
      truncated: (stdout?.truncated ?? false) || (stderr?.truncated ?? false),
    };
  }

  close(): void {
    for (const { connection } of this.connections.values()) void connection.close();
    this.connections.clear();
  }
}
