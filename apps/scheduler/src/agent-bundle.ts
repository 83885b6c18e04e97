import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { AGENT_BUNDLE_PATH, MARK_TOOL_FILES } from '@erg/agent';
import type { ClusterRecord } from '@erg/db';
import { DEFAULT_RUN_UMASK, maskedMode, runtimeDirOf } from '@erg/spec';
import type { ClusterLink } from './connections';
import { RuntimeStager, type StagedRuntime } from './runtime-stager';

/** Where a cluster's jobs find the agent and the phase-mark writers. */
export interface StagedAgent {
  /** The agent bundle, run by the cluster's agentCommand. */
  bundle: string;
  /** The mark writers' folder: `bin/erg-mark` goes on the job's PATH, `python/` on its PYTHONPATH. */
  markTools: string;
  /** erg's own Node.js and koffi, when the probe chose them (capabilities.agentRuntime); null: the cluster's agentCommand. */
  runtime: StagedRuntime | null;
}

/**
 * The telemetry agent as one self-contained file, and the phase-mark writers a workload calls
 * (`erg-mark`, the `erg` Python module), staged once per cluster work dir under names that carry
 * their content hash: a new erg version stages new files, running jobs keep theirs.
 */
export class AgentBundle {
  private readonly content: string;
  private readonly hash: string;
  private readonly tools: { relPath: string; content: string; mode: number }[];
  private readonly toolsHash: string;
  private readonly staged = new Set<string>();
  /** The vendored runtime; null when it is not vendored here (`runtimeProblem` says why): clusters that need it cannot run agents. */
  readonly runtime: RuntimeStager | null;
  readonly runtimeProblem: string | null;

  /**
   * `umask`: the site's (ERG_RUN_UMASK), applied to what is staged as to run directories: by
   * default the folder and files are the cluster user's alone (0700, 0600; erg-mark 0700).
   */
  constructor(
    private readonly umask: number = DEFAULT_RUN_UMASK,
    path: string = AGENT_BUNDLE_PATH,
  ) {
    this.content = readFileSync(path, 'utf8');
    this.hash = createHash('sha256').update(this.content).digest('hex').slice(0, 12);
    this.tools = MARK_TOOL_FILES.map((f) => ({ relPath: f.relPath, content: readFileSync(f.source, 'utf8'), mode: f.mode }));
    const toolsDigest = createHash('sha256');
    for (const t of this.tools) toolsDigest.update(`${t.relPath}\u0000${t.mode}\u0000${t.content}\u0000`);
    this.toolsHash = toolsDigest.digest('hex').slice(0, 12);
    let runtime: RuntimeStager | null = null;
    let problem: string | null = null;
    try {
      runtime = new RuntimeStager(umask);
    } catch (err) {
      problem = (err as Error).message;
    }
    this.runtime = runtime;
    this.runtimeProblem = problem;
  }

  remotePath(cluster: ClusterRecord): string {
    return `${cluster.workDir}/.erg-agent/erg-agent-${this.hash}.js`;
  }

  markToolsPath(cluster: ClusterRecord): string {
    return `${cluster.workDir}/.erg-agent/marks-${this.toolsHash}`;
  }

  /**
   * Uploads the bundle and the mark writers unless this process already did for this cluster and
   * work dir, and erg's runtime where the probe chose it (RuntimeStager: once per runtime folder).
   */
  async ensureStaged(cluster: ClusterRecord, link: ClusterLink): Promise<StagedAgent> {
    const choice = cluster.capabilities?.agentRuntime;
    let runtime: StagedRuntime | null = null;
    if (choice?.use === 'staged' && choice.platform !== null) {
      if (!this.runtime) throw new Error(`cluster "${cluster.name}" needs erg's staged agent runtime, which this scheduler lacks: ${this.runtimeProblem}`);
      runtime = await this.runtime.ensureStaged(cluster.id, link, runtimeDirOf(cluster), choice.platform);
    }
    const staged = { bundle: this.remotePath(cluster), markTools: this.markToolsPath(cluster), runtime };
    const key = `${cluster.id}|${staged.bundle}|${staged.markTools}`;
    if (!this.staged.has(key)) {
      const files = [
        { name: `erg-agent-${this.hash}.js`, content: this.content, mode: 0o644 },
        ...this.tools.map((t) => ({ name: `marks-${this.toolsHash}/${t.relPath}`, content: t.content, mode: t.mode })),
      ];
      await link.connection.writeFiles(`${cluster.workDir}/.erg-agent`, files.map((f) => ({ ...f, mode: maskedMode(f.mode, this.umask) })), {
        dirMode: maskedMode(0o777, this.umask),
      });
      this.staged.add(key);
    }
    return staged;
  }
}
