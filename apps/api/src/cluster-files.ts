import type { Cluster } from '@erg/db';
import { ConnectionPool } from '@erg/slurm';

export interface Logs {
  stdout: string;
  stderr: string;
  truncated: boolean;
}

/**
 * Reads run files from clusters for the logs endpoint, over the API's own pooled connections
 * (the scheduler has its own); at most 2 channels each, leaving sshd's sessions to the scheduler.
 */
export class ClusterFiles {
  private readonly pool = new ConnectionPool(2);

  async readLogs(cluster: Cluster, runDir: string, tailBytes: number): Promise<Logs> {
    const connection = this.pool.get(cluster);
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

  close(): Promise<void> {
    return this.pool.closeAll();
  }
}
