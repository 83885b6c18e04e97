import { openClusterKey, type Cluster } from '@erg/db';
import { redactSecrets, type SecretBox } from '@erg/secrets';
import { ConnectionPool } from '@erg/slurm';

export interface Logs {
  stdout: string;
  stderr: string;
  truncated: boolean;
}

/**
 * Reads run files from clusters for the logs endpoint, over the API's own pooled connections
 * (the scheduler has its own); at most 2 channels each, leaving sshd's sessions to the scheduler.
 * The cluster's private key is opened here, for the connection only.
 */
export class ClusterFiles {
  private readonly pool = new ConnectionPool(2);

  constructor(private readonly secrets: SecretBox) {}

  async readLogs(cluster: Cluster, runDir: string, tailBytes: number): Promise<Logs> {
    // Trust on first use is the scheduler's to record; the API never trusts a key blindly.
    if (cluster.hostKeySha256 === null) throw new HostKeyUnknownError(cluster.name);
    const connection = this.pool.get({ ...cluster, privateKey: openClusterKey(this.secrets, cluster) });
    const [stdout, stderr] = await Promise.all([
      connection.readFile(`${runDir}/stdout.log`, { maxBytes: tailBytes, fromEnd: true }),
      connection.readFile(`${runDir}/stderr.log`, { maxBytes: tailBytes, fromEnd: true }),
    ]);
    // Redacted like the tails the scheduler stores, so a job that prints a token shows it nowhere.
    return {
      stdout: redactSecrets(stdout?.text ?? ''),
      stderr: redactSecrets(stderr?.text ?? ''),
      truncated: (stdout?.truncated ?? false) || (stderr?.truncated ?? false),
    };
  }

  close(): Promise<void> {
    return this.pool.closeAll();
  }
}

/** A trust-on-first-use cluster the scheduler has not reached yet: its host key is not known. */
export class HostKeyUnknownError extends Error {
  readonly code = 'ERG_HOST_KEY_UNKNOWN';
  constructor(cluster: string) {
    super(`the host key of cluster "${cluster}" is not known yet (trust on first use: the scheduler records it on its first connection)`);
  }
}
