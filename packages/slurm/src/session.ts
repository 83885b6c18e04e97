/**
 * Session: one live ssh2 Client (the login node's, at the end of its hop chain) plus what hangs
 * off it — the channel permits, the SFTP channel, the operations in flight, and how many callers
 * use it. A lost connection ends its session; the next call opens a new one (session-manager.ts).
 *
 * A channel is one SSH channel (an exec or the SFTP subsystem). sshd counts them against
 * MaxSessions (10 by default) and refuses the eleventh, so every channel holds a permit of the
 * session's semaphore (`maxSessions`, default 8) from open request until the channel's close.
 *
 * Why operations register here (track, watchEnd): when the connection drops, every operation in
 * flight and every caller waiting for a channel must fail with the session's end error
 * (ConnectionLostError, retryable) instead of waiting for an answer that cannot come.
 */
import type { Client } from 'ssh2';
import { ChannelError, ChannelOpenError, ConnectionLostError, type ErgSlurmError } from './errors';
import { Semaphore } from './semaphore';
import type { SftpChannel } from './sftp-channel';

/** The connection's channel counters, over all of its sessions (ClusterConnection.channelStats). */
export class ChannelCounters {
  /** Channels open now. */
  open = 0;
  /** The most ever open at once. */
  maxOpen = 0;
  /** Exec channel opens asked for again after the server refused them (channelOpenRetries). */
  reopened = 0;

  opened(): void {
    this.open++;
    this.maxOpen = Math.max(this.maxOpen, this.open);
  }

  closed(): void {
    this.open--;
  }
}

/** Who names the login node in messages: the connection, as its settings say now. */
export interface HostPortSource {
  readonly hostPort: string;
}

export class Session {
  /** Callers using the session now (see SessionManager.use); a retired session closes when this drops to 0. */
  users = 0;
  /** Superseded by reconfigure, or its certificate expired: no new operation starts on it. */
  retired = false;
  readonly channels: Semaphore;
  /** The session's one SFTP channel, opened on first use (sftp-channel.ts). */
  sftp: Promise<SftpChannel> | null = null;
  alive = true;
  /** Why the session ended, once it has. */
  endedBy: ErgSlurmError | null = null;
  /** Last error the client emitted, to explain a following close. */
  lastClientError: Error | null = null;
  /** Fail functions of the operations in flight, called when the session ends. */
  private readonly inFlight = new Set<(err: ErgSlurmError) => void>();

  constructor(
    readonly client: Client,
    /** The jump hosts' connections the client runs through, first hop first; empty without jump hosts. */
    readonly via: Client[],
    maxSessions: number,
    private readonly counters: ChannelCounters,
    // Messages name the login node of the connection's settings at the moment they are made,
    // as they did before sessions were their own class.
    private readonly names: HostPortSource,
  ) {
    this.channels = new Semaphore(maxSessions);
  }

  get hostPort(): string {
    return this.names.hostPort;
  }

  /** Ends the session: fails its waiters and operations in flight with `err`. Idempotent. */
  end(err: ErgSlurmError): void {
    if (!this.alive) return;
    this.alive = false;
    this.endedBy = err;
    this.channels.abort(err);
    for (const failOp of [...this.inFlight]) failOp(err);
    this.inFlight.clear();
  }

  /** Calls `fail` if the session ends before `unwatchEnd(fail)`. */
  watchEnd(fail: (err: ErgSlurmError) => void): void {
    this.inFlight.add(fail);
  }

  unwatchEnd(fail: (err: ErgSlurmError) => void): void {
    this.inFlight.delete(fail);
  }

  /** Why an operation cannot go on: the session's end, or a ConnectionLostError saying `why`. */
  endError(why: string): ErgSlurmError {
    return this.endedBy ?? new ConnectionLostError(this.hostPort, why);
  }

  /** What a channel's stream error means: a failure of that channel, or of the whole session if it ended. */
  channelFailure(err: Error): ErgSlurmError {
    return this.alive ? new ChannelError(this.hostPort, err.message, { cause: err }) : this.endedBy!;
  }

  /** What a refused channel open means: retryable ChannelOpenError, or the session's end. */
  channelOpenError(err: Error): ErgSlurmError {
    if (!this.alive) return this.endedBy ?? new ConnectionLostError(this.hostPort, err.message, { cause: err });
    return new ChannelOpenError(this.hostPort, err.message, { cause: err });
  }

  /** Waits for a channel permit; the returned release is idempotent and keeps channel counters. */
  async acquireChannel(): Promise<() => void> {
    const release = await this.channels.acquire();
    if (!this.alive) {
      release();
      throw this.endError('connection ended');
    }
    this.counters.opened();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.counters.closed();
      release();
    };
  }

  /**
   * Runs `body` as an operation of the session: it settles once, and fails with the session's
   * end error if the connection goes away first.
   */
  track<T>(body: (resolve: (value: T) => void, reject: (err: unknown) => void) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (!this.alive) {
        reject(this.endError('connection ended'));
        return;
      }
      let settled = false;
      const onEnd = (err: ErgSlurmError) => settle(() => reject(err));
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        this.inFlight.delete(onEnd);
        fn();
      };
      this.inFlight.add(onEnd);
      try {
        body(
          (value) => settle(() => resolve(value)),
          (err) => settle(() => reject(err)),
        );
      } catch (err) {
        settle(() => reject(err));
      }
    });
  }
}
