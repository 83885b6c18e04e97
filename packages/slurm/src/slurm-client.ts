/**
 * SlurmClient: the Slurm operations erg needs, each one remote command over a shared connection.
 * Controller load is flat in the number of runs: one squeue and at most one sacct per poll, one
 * sbatch loop per batch of submissions, one scancel per batch of cancellations.
 */
import { sacctCommand, scancelCommand, squeueCommand } from './commands';
import { SlurmCommandError } from './errors';
import { parseRaiseFence, raiseFenceCommand, type Fence, type FenceRaise } from './fence';
import { parseSacct, parseSqueue } from './parse';
import { parseProbe, probeCommand, type ClusterProbe } from './probe';
import { stageArchive, stageCommand, type StageEntry } from './stage';
import type { SlurmJob } from './slurm-job';
import { parseSubmitMany, submitManyCommand, type SubmitResult } from './submit-loop';
import type { ExecOptions, ExecResult } from './collected-command';

/** What SlurmClient needs from a connection (ClusterConnection implements it). */
export interface CommandRunner {
  exec(command: string, options?: ExecOptions): Promise<ExecResult>;
}

export interface SlurmClientOptions {
  /** Query this user's jobs; default: the SSH user (`squeue --me`, sacct's default). */
  user?: string;
  /** Deadline of squeue/sacct/scancel (ms). Default 60 000. */
  queryTimeoutMs?: number;
  /** Deadline of one submit loop (ms); sbatch can block while slurmctld is busy. Default 300 000. */
  submitTimeoutMs?: number;
  /** How long raising the fence waits for an older loop's sbatch in flight (ms). Default 60 000. */
  fenceWaitMs?: number;
  /** The umask staged files and submitted jobs get (@erg/spec's run-dir file modes). Default DEFAULT_RUN_UMASK (077). */
  umask?: number;
}

/**
 * Bounds a command on the cluster itself, a little inside the SSH deadline: sshd does not always
 * deliver the kill signal of an abandoned channel, and a channel stays counted against
 * MaxSessions until its command ends. Only for commands that are safe to cut short (queries,
 * scancel) — never for sbatch, where a cut could leave a submitted job reported as failed.
 */
function withRemoteDeadline(command: string, timeoutMs: number): string {
  const seconds = Math.max(1, Math.floor(timeoutMs / 1000) - 2);
  return `timeout -k 2 ${seconds} ${command}`;
}

const REMOTE_TIMEOUT_EXIT = 124;

// scancel's answers for jobs that have already ended: the cancellation's goal is met.
const ALREADY_GONE = /already completing or completed|Invalid job id specified|Job\/step already completing/i;

export class SlurmClient {
  private readonly queryTimeoutMs: number;
  private readonly submitTimeoutMs: number;

  constructor(
    private readonly runner: CommandRunner,
    private readonly options: SlurmClientOptions = {},
  ) {
    this.queryTimeoutMs = options.queryTimeoutMs ?? 60_000;
    this.submitTimeoutMs = options.submitTimeoutMs ?? 300_000;
  }

  /**
   * Submits job scripts (absolute remote paths) in one remote loop; one result per path, in order.
   * `err` means sbatch refused (no job exists); `unknown` means a job may exist. If this call
   * throws, the outcome of every path is unknown unless the error is a connect failure
   * (ClusterUnreachableError, SshAuthError, HostKeyMismatchError), when nothing ran. Before
   * submitting any run again, look it up with findJobsByName.
   */
  async submitMany(scriptPaths: readonly string[], fence: Fence | null): Promise<SubmitResult[]> {
    if (scriptPaths.length === 0) return [];
    const { command, stdin } = submitManyCommand(scriptPaths, fence, this.options.umask);
    const result = await this.runner.exec(command, { stdin, timeoutMs: this.submitTimeoutMs });
    if (result.code !== 0) throw new SlurmCommandError('sbatch loop', result.code, result.stderr);
    return parseSubmitMany(result.stdout, scriptPaths);
  }

  /**
   * Writes `entries` under `baseDir` on the cluster in one command (stage.ts): one round trip
   * and one archive for a whole batch of run directories. Files that exist are replaced. A
   * failure leaves an unknown subset written; staging again writes them all.
   */
  async stage(baseDir: string, entries: readonly StageEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const archive = await stageArchive(entries, this.options.umask);
    const result = await this.runner.exec(stageCommand(baseDir, this.options.umask), { stdin: archive, timeoutMs: this.submitTimeoutMs });
    if (result.code !== 0) throw new SlurmCommandError(`staging ${entries.length} files under ${baseDir}`, result.code, result.stderr);
  }

  /**
   * Raises the cluster's fence to `fence.epoch` (see fence.ts): once this resolves `raised`, no
   * sbatch loop of an older epoch can submit anything more, and every job it did submit is
   * visible to squeue. `raised: false` means a newer epoch is already there: this lease is stale.
   */
  async raiseFence(fence: Fence): Promise<FenceRaise> {
    const waitMs = this.options.fenceWaitMs ?? 60_000;
    const result = await this.runner.exec(raiseFenceCommand(fence, waitMs / 1000), { timeoutMs: waitMs * 2 + 15_000 });
    const parsed = result.code === 0 ? parseRaiseFence(result.stdout) : null;
    if (!parsed) throw new SlurmCommandError('raising the submission fence', result.code, result.stderr || result.stdout);
    return parsed;
  }

  /** All of the user's jobs Slurm's controller still knows (pending, running, recently ended). */
  async squeue(): Promise<SlurmJob[]> {
    const result = await this.query(squeueCommand({ user: this.options.user }));
    if (result.code !== 0) throw new SlurmCommandError('squeue', result.code, result.stderr);
    return parseSqueue(result.stdout);
  }

  /** All of the user's jobs the accounting database has seen active since `since`. */
  async sacct(since: Date): Promise<SlurmJob[]> {
    const result = await this.query(sacctCommand({ since, user: this.options.user }));
    if (result.code !== 0) throw new SlurmCommandError('sacct', result.code, result.stderr);
    return parseSacct(result.stdout);
  }

  /**
   * What the login node says of Slurm's version, of the node helper at `helperPath` and, given the
   * agent's command, of the agent's runtime (probe.ts).
   */
  async probe(helperPath: string, agentCommand?: string): Promise<ClusterProbe> {
    const result = await this.query(probeCommand(helperPath, agentCommand));
    if (result.code !== 0) throw new SlurmCommandError('probing the cluster', result.code, result.stderr);
    return parseProbe(result.stdout, helperPath);
  }

  /** Cancels jobs; jobs that already ended count as cancelled (the call is idempotent). */
  async scancel(jobIds: readonly string[]): Promise<void> {
    if (jobIds.length === 0) return;
    const result = await this.query(scancelCommand(jobIds));
    if (result.code === 0) return;
    const problems = result.stderr
      .split('\n')
      .filter((l) => l.trim() !== '')
      .filter((l) => !ALREADY_GONE.test(l));
    if (problems.length > 0 || result.code === null) throw new SlurmCommandError('scancel', result.code, result.stderr);
  }

  private async query(command: string): Promise<ExecResult> {
    const result = await this.runner.exec(withRemoteDeadline(command, this.queryTimeoutMs), { timeoutMs: this.queryTimeoutMs });
    if (result.code === REMOTE_TIMEOUT_EXIT) {
      return { ...result, stderr: `timed out on the cluster after ~${Math.floor(this.queryTimeoutMs / 1000)} s (slurmctld/slurmdbd busy?) ${result.stderr}` };
    }
    return result;
  }

  /**
   * The jobs carrying each of `names` (erg job names `erg-<runId>`), for the exactly-once check:
   * a run whose name is found was already submitted. Asks squeue first and sacct (since `since`)
   * only for names squeue does not know — two calls at most, whatever the number of names.
   * Names with no job map to an empty array.
   *
   * Why squeue first: for a few seconds around a short job's start/end, slurmdbd (22.05) can
   * report its JobName as `allocation` while its record arrives in parts; squeue's names are
   * always right, and it keeps ended jobs for MinJobAge (300 s by default), well past that window.
   * Match sacct rows to runs by job id wherever the id is known.
   */
  async findJobsByName(names: readonly string[], options: { since?: Date } = {}): Promise<Map<string, SlurmJob[]>> {
    const found = new Map<string, SlurmJob[]>(names.map((n) => [n, []]));
    const add = (job: SlurmJob) => {
      const list = found.get(job.name);
      if (list && !list.some((j) => j.jobId === job.jobId)) list.push(job);
    };
    if (names.length === 0) return found;
    for (const job of await this.squeue()) add(job);
    const missing = [...found.values()].some((jobs) => jobs.length === 0);
    if (missing && options.since) {
      const stillMissing = new Set(names.filter((n) => found.get(n)?.length === 0));
      for (const job of await this.sacct(options.since)) if (stillMissing.has(job.name)) add(job);
    }
    return found;
  }
}
