import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { AGENT_BUNDLE_PATH } from '@erg/agent';
import type { ClusterRecord } from '@erg/db';
import type { ClusterLink } from './connections';

/**
 * The telemetry agent as one self-contained file, staged once per cluster work dir under a name
 * that carries its content hash: a new erg version stages a new file, running jobs keep theirs.
 */
export class AgentBundle {
  private readonly content: string;
  private readonly hash: string;
  private readonly staged = new Set<string>();

  constructor(path: string = AGENT_BUNDLE_PATH) {
    this.content = readFileSync(path, 'utf8');
    this.hash = createHash('sha256').update(this.content).digest('hex').slice(0, 12);
  }

  remotePath(cluster: ClusterRecord): string {
    return `${cluster.workDir}/.erg-agent/erg-agent-${this.hash}.js`;
  }

  /** Uploads the bundle unless this process already did for this cluster and work dir. */
  async ensureStaged(cluster: ClusterRecord, link: ClusterLink): Promise<string> {
    const remote = this.remotePath(cluster);
    const key = `${cluster.id}|${remote}`;
    if (!this.staged.has(key)) {
      await link.connection.writeFiles(`${cluster.workDir}/.erg-agent`, [{ name: `erg-agent-${this.hash}.js`, content: this.content, mode: 0o644 }]);
      this.staged.add(key);
    }
    return remote;
  }
}
