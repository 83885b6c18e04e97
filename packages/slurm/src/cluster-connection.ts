/**
 * ClusterConnection: erg's one SSH connection to one cluster's login node, shared by every caller
 * (exec for Slurm commands, one long-lived SFTP channel for staging files and reading results).
 * It is a facade: each concern has its own file, and this class only composes them.
 *
 * - connection-options.ts: the options, their defaults, what `reconfigure` may change.
 * - session-manager.ts: connection and reconnect — the live session, backoff after failed
 *   attempts, retiring sessions on reconfigure or an expired certificate, `state`/`lastError`.
 * - hop-chain.ts: jump hosts and certificates — the chain of SSH connections one attempt walks,
 *   host key pinning (trust on first use for the login node only), failure classification.
 * - session.ts: one live session — channel permits under sshd's MaxSessions, operations in flight.
 * - exec-channel.ts, collected-command.ts, streamed-command.ts: exec with deadlines (collected
 *   whole, or stdout streamed under flow control).
 * - sftp-channel.ts: the session's one SFTP channel, a deadline per request.
 *
 * Glossary
 * - session: one live ssh2 Client plus what hangs off it (channel permits, the SFTP channel, the
 *   operations in flight). A lost connection ends its session; the next call opens a new one.
 * - channel: one SSH channel (an exec or the SFTP subsystem). sshd counts them against
 *   MaxSessions (10 by default) and refuses the eleventh, so every channel holds a permit of the
 *   session's semaphore (`maxSessions`, default 8) from open request until the channel's close.
 *
 * Failure model (details in session-manager.ts and hop-chain.ts)
 * - Connect failures are classified: host key mismatch (HostKeyMismatchError, never retried
 *   silently), authentication (SshAuthError), everything else (ClusterUnreachableError).
 * - After a failed connect attempt, further attempts wait an exponential backoff
 *   (SSH_RECONNECT_BACKOFF); calls made during the wait fail at once with the last error.
 * - When an established connection drops, every operation in flight and every caller waiting
 *   for a channel fails with ConnectionLostError (retryable); the next call reconnects at once.
 * - `reconfigure` swaps the credentials (or the whole endpoint) without downtime.
 */
import type { ClientChannel } from 'ssh2';
import { collectOutput, type ExecOptions, type ExecResult } from './collected-command';
import type { ChannelStats, ClusterConnectionOptions, ClusterEndpointOptions, ConnectionState } from './connection-options';
import type { ErgSlurmError } from './errors';
import { openCommand } from './exec-channel';
import type { RenderedFile } from './render';
import { ChannelCounters } from './session';
import { SessionManager } from './session-manager';
import { checkWriteTargets, SftpChannel, type ReadFileOptions, type ReadFileResult } from './sftp-channel';
import { StreamedCommand, type ExecStream, type ExecStreamOptions } from './streamed-command';

/** One shared, lazily connected, self-healing SSH connection to a cluster. */
export class ClusterConnection {
  private readonly counters = new ChannelCounters();
  private readonly sessions: SessionManager;

  constructor(options: ClusterConnectionOptions) {
    this.sessions = new SessionManager(options, this.counters);
  }

  /** The login node, `host:port`, as messages name it. */
  get hostPort(): string {
    return this.sessions.hostPort;
  }

  /**
   * Replaces where and how the connection connects (new credentials, a rotated certificate,
   * another login node, a changed allowance) without dropping anything: the live session is
   * retired — what runs on it finishes, and it closes after its last operation — and the next
   * operation connects with the new settings, at once (a backoff of the old settings does not delay
   * it). The endpoint is whole: `allowHosts` left out is none (public addresses only).
   */
  reconfigure(endpoint: ClusterEndpointOptions): void {
    this.sessions.reconfigure(endpoint);
  }

  /** The pinned fingerprint: configured, or learned by the first successful connection (trust on first use); null before that. */
  get hostKeySha256(): string | null {
    return this.sessions.hostKeySha256;
  }

  get state(): ConnectionState {
    return this.sessions.state;
  }

  /** The last connect failure or connection loss; null once a connection succeeds. */
  get lastError(): ErgSlurmError | null {
    return this.sessions.lastError;
  }

  /** When the next connect attempt may start (epoch ms); 0 when not backing off. */
  get nextAttemptAt(): number {
    return this.sessions.nextAttemptAt;
  }

  /** Channels open now, the most ever open at once, and callers waiting for a channel. */
  get channelStats(): ChannelStats {
    const c = this.counters;
    return { open: c.open, maxOpen: c.maxOpen, waiting: this.sessions.waitingForChannel, reopened: c.reopened };
  }

  /** Runs `command` through the login shell and collects its output. A non-zero exit is a result, not an error. */
  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const o = this.sessions.options;
    const timeoutMs = options.timeoutMs ?? o.execTimeoutMs;
    const maxOutputBytes = options.maxOutputBytes ?? o.maxOutputBytes;
    return this.sessions.use(async (session) => {
      const channel = await openCommand(session, command, this.sessions.options.channelOpenRetries, this.counters);
      return collectOutput(session, channel, command, { timeoutMs, maxOutputBytes, stdin: options.stdin });
    });
  }

  /**
   * Runs `command` through the login shell and hands its stdout over as a stream, for output of
   * any size (job logs). The channel's permit is held until the channel closes. stderr is always
   * drained (it shares the channel's window with stdout) and its first part kept for `done`.
   */
  async execStream(command: string, options: ExecStreamOptions = {}): Promise<ExecStream> {
    const timeoutMs = options.timeoutMs ?? this.sessions.options.execTimeoutMs;
    const maxStderrBytes = options.maxStderrBytes ?? 64 * 1024;
    // The stream uses the session until it settles, not until this call returns.
    const session = await this.sessions.enter();
    let channel: ClientChannel;
    try {
      channel = await openCommand(session, command, this.sessions.options.channelOpenRetries, this.counters);
    } catch (err) {
      this.sessions.leave(session);
      throw err;
    }
    return new StreamedCommand(session, channel, command, timeoutMs, maxStderrBytes, () => this.sessions.leave(session));
  }

  /**
   * Creates `dir` (and parents, with `options.dirMode` when given) and writes every file into it
   * with its mode, all writes in flight at once over the connection's one SFTP channel. Existing
   * files are overwritten.
   */
  async writeFiles(dir: string, files: readonly RenderedFile[], options: { dirMode?: number } = {}): Promise<void> {
    checkWriteTargets(this.hostPort, dir, files);
    await this.sessions.use(async (session) => {
      const sftp = await SftpChannel.of(session, this.sessions.options.sftpTimeoutMs);
      await sftp.writeFiles(dir, files, options.dirMode);
    });
  }

  /**
   * Reads (part of) a remote file over SFTP; null when it does not exist. Only for files erg
   * itself controls: a file a job can change (anything in a run directory after the job started)
   * is read with openJobFile (job-files.ts), which neither follows links nor waits on a FIFO.
   */
  async readFile(remotePath: string, options: ReadFileOptions = {}): Promise<ReadFileResult | null> {
    return this.sessions.use(async (session) => {
      const sftp = await SftpChannel.of(session, this.sessions.options.sftpTimeoutMs);
      return sftp.readFile(remotePath, options);
    });
  }

  /** Closes the connection; operations in flight and later calls fail with ConnectionClosedError. */
  async close(): Promise<void> {
    await this.sessions.close();
  }
}
