/**
 * ClusterConnection: erg's one SSH connection to one cluster's login node, shared by every caller
 * (exec for Slurm commands, one long-lived SFTP channel for staging files and reading results).
 *
 * Glossary
 * - session: one live ssh2 Client plus what hangs off it (channel permits, the SFTP channel, the
 *   operations in flight). A lost connection ends its session; the next call opens a new one.
 * - channel: one SSH channel (an exec or the SFTP subsystem). sshd counts them against
 *   MaxSessions (10 by default) and refuses the eleventh, so every channel holds a permit of the
 *   session's semaphore (`maxSessions`, default 8) from open request until the channel's close.
 *
 * Failure model
 * - Connect failures are classified: host key mismatch (HostKeyMismatchError, never retried
 *   silently), authentication (SshAuthError), everything else (ClusterUnreachableError).
 * - After a failed connect attempt, further attempts wait an exponential backoff
 *   (SSH_RECONNECT_BACKOFF: 250 ms doubling to 30 s, jittered); calls made during the wait fail
 *   at once with the last error instead of hammering the login node (which could trip fail2ban)
 *   or hanging the scheduler's poll.
 * - When an established connection drops, every operation in flight and every caller waiting
 *   for a channel fails with ConnectionLostError (retryable); the next call reconnects at once.
 * - `state` and `lastError` say where the connection stands, for the scheduler to show as the
 *   pending reason of the runs it cannot submit.
 */
import path from 'node:path';
import { Readable } from 'node:stream';
import { Backoff, type BackoffOptions } from '@erg/backoff';
import { Client, type ClientChannel, type SFTPWrapper, type Stats } from 'ssh2';
import {
  ChannelError,
  ChannelOpenError,
  ClusterUnreachableError,
  ConnectionClosedError,
  ConnectionLostError,
  ErgSlurmError,
  HostKeyMismatchError,
  OutputTooLargeError,
  SftpError,
  SshAuthError,
  SshTimeoutError,
} from './errors';
import { fingerprintsEqual, hostKeyFingerprint } from './host-key';
import type { RenderedFile } from './render';
import { Semaphore } from './semaphore';

export interface ClusterConnectionOptions {
  host: string;
  /** Default 22. */
  port?: number;
  username: string;
  /** OpenSSH-format private key. */
  privateKey: string | Buffer;
  passphrase?: string;
  /**
   * Pinned host key fingerprint, `SHA256:<base64>` as `ssh-keygen -lf` prints it. null: trust on
   * first use, only for clusters registered with that policy: the first successful connection
   * accepts the key it is shown and pins it (`hostKeySha256` then says which); every later
   * connection of this object requires that same key.
   */
  hostKeySha256: string | null;
  /** Most channels (exec + SFTP) open at once; keep under sshd's MaxSessions (10). Default 8. */
  maxSessions?: number;
  /** TCP connect + handshake + authentication deadline (ms). Default 10 000. */
  connectTimeoutMs?: number;
  /** SSH keepalive interval (ms); a dead link is noticed after ~3 intervals. Default 15 000. */
  keepaliveIntervalMs?: number;
  /** Unanswered keepalives before the connection is declared lost. Default 3. */
  keepaliveCountMax?: number;
  /** Backoff between failed connect attempts; what is not given comes from SSH_RECONNECT_BACKOFF. */
  backoff?: Partial<BackoffOptions>;
  /** Deadline of `exec` when the call gives none (ms). Default 120 000. */
  execTimeoutMs?: number;
  /** Output limit of `exec` (stdout + stderr) when the call gives none. Default 16 MiB. */
  maxOutputBytes?: number;
  /** Deadline of each SFTP request (ms); on expiry the request fails and its channel is given up. Default 30 000. */
  sftpTimeoutMs?: number;
}

export interface ExecOptions {
  /** Written to the command's stdin, which is then closed (stdin is always closed). */
  stdin?: string | Buffer;
  /** Deadline (ms); on expiry the channel is closed and SshTimeoutError raised. */
  timeoutMs?: number;
  /** Limit on stdout + stderr bytes; beyond it the channel is closed and OutputTooLargeError raised. */
  maxOutputBytes?: number;
}

export interface ExecResult {
  /** Exit status, null when the command was killed by a signal. */
  code: number | null;
  /** Signal name (`TERM`, `KILL`) when killed by one, else null. */
  signal: string | null;
  stdout: string;
  stderr: string;
}

export interface ExecStreamOptions {
  /**
   * Deadline of the whole command, reading included (ms); on expiry the command is killed where
   * sshd allows, the channel closed, and `stdout` fails with SshTimeoutError. Default: execTimeoutMs.
   */
  timeoutMs?: number;
  /** Bytes of stderr kept for `done`; the rest is read and dropped, never an error. Default 64 KiB. */
  maxStderrBytes?: number;
}

/** How a streamed command ended. */
export interface ExecExit {
  /** Exit status, null when the command was killed by a signal. */
  code: number | null;
  /** The signal that ended the command, as ssh2 names it (`SIGKILL`), else null. */
  signal: string | null;
  /** The first `maxStderrBytes` of stderr. */
  stderr: string;
}

/** A command whose stdout is read as it arrives (see ClusterConnection.execStream). */
export interface ExecStream {
  /**
   * The command's stdout. A reader that stops reading stops the sender (SSH flow control: the
   * channel's window is not renewed), so memory stays bounded by the window, not by the output.
   */
  readonly stdout: Readable;
  /**
   * Settles once the channel has closed, with the exit status; rejects with the stream's failure
   * (SshTimeoutError, ConnectionLostError, or an Error after cancel()). Awaiting it is optional.
   */
  readonly done: Promise<ExecExit>;
  /** Stops the command (kills it where sshd allows) and closes the channel; idempotent. */
  cancel(): void;
}

export interface ReadFileOptions {
  /** Read at most this many bytes. Default 1 MiB. */
  maxBytes?: number;
  /** Read the last `maxBytes` bytes instead of the first (log tails). */
  fromEnd?: boolean;
}

export interface ReadFileResult {
  data: Buffer;
  /** `data` decoded as UTF-8 (a cut multi-byte character at the edges becomes U+FFFD). */
  text: string;
  /** Size of the whole file when it was read. */
  size: number;
  /** True when the file is larger than what was read. */
  truncated: boolean;
}

/**
 * Reconnect delays: 250 ms doubling to 30 s, with the default (equal) jitter so that schedulers
 * restarted together do not reconnect in lockstep (and trip a login node's fail2ban or MaxStartups).
 */
export const SSH_RECONNECT_BACKOFF: BackoffOptions = { initialMs: 250, maxMs: 30_000 };

/** Where the connection stands. `backoff`: the last attempt failed; the next call tries again after `nextAttemptAt`. */
export type ConnectionState = 'idle' | 'connecting' | 'ready' | 'backoff' | 'closed';

/** Channel counters, for tests and metrics. */
export interface ChannelStats {
  open: number;
  maxOpen: number;
  waiting: number;
}

interface Session {
  client: Client;
  channels: Semaphore;
  sftp: Promise<SFTPWrapper> | null;
  alive: boolean;
  /** Why the session ended, once it has. */
  endedBy: ErgSlurmError | null;
  /** Fail functions of the operations in flight, called when the session ends. */
  inFlight: Set<(err: ErgSlurmError) => void>;
  /** Last error the client emitted, to explain a following close. */
  lastClientError: Error | null;
}

const SFTP_NO_SUCH_FILE = 2;
const SFTP_EOF = 1;
const READ_CHUNK = 64 * 1024;

/** One shared, lazily connected, self-healing SSH connection to a cluster. */
export class ClusterConnection {
  readonly hostPort: string;
  private readonly options: Required<Omit<ClusterConnectionOptions, 'passphrase' | 'backoff'>> &
    Pick<ClusterConnectionOptions, 'passphrase' | 'backoff'>;
  private current: Session | null = null;
  private connecting: Promise<Session> | null = null;
  /** Failed connect attempts in a row, and how long the next one waits. */
  private readonly reconnect: Backoff;
  private nextAttempt = 0;
  private closed = false;
  private error: ErgSlurmError | null = null;
  private openChannels = 0;
  private maxOpenChannels = 0;
  /** The fingerprint required of the server: the configured one, or the one learned on first use. */
  private pinned: string | null;
  /** How to give up each open SFTP channel (see sftpCall). */
  private readonly sftpDiscard = new WeakMap<SFTPWrapper, () => void>();

  constructor(options: ClusterConnectionOptions) {
    this.options = {
      port: 22,
      maxSessions: 8,
      connectTimeoutMs: 10_000,
      keepaliveIntervalMs: 15_000,
      keepaliveCountMax: 3,
      execTimeoutMs: 120_000,
      maxOutputBytes: 16 * 1024 * 1024,
      sftpTimeoutMs: 30_000,
      ...options,
    };
    this.reconnect = new Backoff({ ...SSH_RECONNECT_BACKOFF, ...options.backoff });
    this.hostPort = `${this.options.host}:${this.options.port}`;
    this.pinned = this.options.hostKeySha256;
    // The semaphore validates maxSessions too, but fail here, at configuration time.
    if (!Number.isInteger(this.options.maxSessions) || this.options.maxSessions < 1) {
      throw new RangeError(`maxSessions must be a positive integer, got ${this.options.maxSessions}`);
    }
  }

  /** The pinned fingerprint: configured, or learned by the first successful connection (trust on first use); null before that. */
  get hostKeySha256(): string | null {
    return this.pinned;
  }

  get state(): ConnectionState {
    if (this.closed) return 'closed';
    if (this.current?.alive) return 'ready';
    if (this.connecting) return 'connecting';
    return this.reconnect.failures > 0 ? 'backoff' : 'idle';
  }

  /** The last connect failure or connection loss; null once a connection succeeds. */
  get lastError(): ErgSlurmError | null {
    return this.error;
  }

  /** When the next connect attempt may start (epoch ms); 0 when not backing off. */
  get nextAttemptAt(): number {
    return this.reconnect.failures > 0 ? this.nextAttempt : 0;
  }

  /** Channels open now, the most ever open at once, and callers waiting for a channel. */
  get channelStats(): ChannelStats {
    return { open: this.openChannels, maxOpen: this.maxOpenChannels, waiting: this.current?.channels.waiting ?? 0 };
  }

  /** Runs `command` through the login shell and collects its output. A non-zero exit is a result, not an error. */
  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const timeoutMs = options.timeoutMs ?? this.options.execTimeoutMs;
    const maxOutputBytes = options.maxOutputBytes ?? this.options.maxOutputBytes;
    const { session, channel } = await this.openCommand(command);
    return this.track(session, (resolve, reject) =>
      this.collect(session, channel, command, { timeoutMs, maxOutputBytes, stdin: options.stdin }, resolve, reject),
    );
  }

  /**
   * Runs `command` through the login shell and hands its stdout over as a stream, for output of
   * any size (job logs). The channel's permit is held until the channel closes. stderr is always
   * drained (it shares the channel's window with stdout) and its first part kept for `done`.
   */
  async execStream(command: string, options: ExecStreamOptions = {}): Promise<ExecStream> {
    const timeoutMs = options.timeoutMs ?? this.options.execTimeoutMs;
    const maxStderrBytes = options.maxStderrBytes ?? 64 * 1024;
    const { session, channel } = await this.openCommand(command);
    return new StreamedCommand(this.hostPort, session, channel, command, timeoutMs, maxStderrBytes);
  }

  /**
   * Creates `dir` (and parents) and writes every file into it with its mode, all writes in flight
   * at once over the connection's one SFTP channel. Existing files are overwritten.
   */
  async writeFiles(dir: string, files: readonly RenderedFile[]): Promise<void> {
    if (!path.posix.isAbsolute(dir)) throw new SftpError(this.hostPort, 'writeFiles', dir, { cause: new Error('directory must be absolute') });
    for (const file of files) {
      const parts = file.name.split('/');
      if (file.name.startsWith('/') || parts.some((p) => p === '' || p === '.' || p === '..')) {
        throw new SftpError(this.hostPort, 'writeFiles', file.name, { cause: new Error('file name must be a relative path inside the directory') });
      }
    }
    const session = await this.session();
    const sftp = await this.sftp(session);
    const dirs = new Set([dir, ...files.map((f) => path.posix.dirname(path.posix.join(dir, f.name)))]);
    for (const d of [...dirs].sort()) await this.ensureDir(session, sftp, d);
    await Promise.all(
      files.map(async (file) => {
        const target = path.posix.join(dir, file.name);
        await this.sftpCall<void>(session, sftp, 'write', target, (cb) => sftp.writeFile(target, file.content, { mode: file.mode }, cb));
        // open() applies the mode only to new files, minus the server's umask: set it explicitly.
        await this.sftpCall<void>(session, sftp, 'chmod', target, (cb) => sftp.chmod(target, file.mode, cb));
      }),
    );
  }

  /**
   * Reads (part of) a remote file over SFTP; null when it does not exist. Only for files erg
   * itself controls: a file a job can change (anything in a run directory after the job started)
   * is read with openJobFile (job-files.ts), which neither follows links nor waits on a FIFO.
   */
  async readFile(remotePath: string, options: ReadFileOptions = {}): Promise<ReadFileResult | null> {
    const maxBytes = options.maxBytes ?? 1024 * 1024;
    const session = await this.session();
    const sftp = await this.sftp(session);
    let handle: Buffer;
    try {
      handle = await this.sftpCall<Buffer>(session, sftp, 'open', remotePath, (cb) => sftp.open(remotePath, 'r', cb));
    } catch (err) {
      if (err instanceof SftpError && sftpCode(err.cause) === SFTP_NO_SUCH_FILE) return null;
      throw err;
    }
    try {
      const stats = await this.sftpCall<Stats>(session, sftp, 'fstat', remotePath, (cb) => sftp.fstat(handle, cb));
      const size = stats.size;
      const start = options.fromEnd ? Math.max(0, size - maxBytes) : 0;
      const want = Math.min(maxBytes, Math.max(0, size - start));
      const data = Buffer.alloc(want);
      let got = 0;
      while (got < want) {
        const n = await this.sftpCall<number>(session, sftp, 'read', remotePath, (cb) =>
          sftp.read(handle, data, got, Math.min(READ_CHUNK, want - got), start + got, (err, bytesRead) => {
            if (err && sftpCode(err) === SFTP_EOF) cb(undefined, 0);
            else cb(err, bytesRead);
          }),
        );
        if (n === 0) break; // the file shrank since fstat
        got += n;
      }
      const slice = data.subarray(0, got);
      return { data: slice, text: slice.toString('utf8'), size, truncated: got < size };
    } finally {
      // A failed close of a read handle loses nothing; do not let it mask the result.
      sftp.close(handle, () => undefined);
    }
  }

  /** Closes the connection; operations in flight and later calls fail with ConnectionClosedError. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const session = this.current ?? (await this.connecting?.catch(() => null)) ?? null;
    this.current = null;
    if (session) {
      const closedError = new ConnectionClosedError(this.hostPort);
      this.endSession(session, closedError);
      await new Promise<void>((resolve) => {
        session.client.once('close', () => resolve());
        session.client.end();
        // 'close' normally follows end() at once; do not hang a test's afterAll on a dead socket.
        setTimeout(resolve, 2000).unref();
      });
    }
  }

  // --- connection -----------------------------------------------------------------------------

  private async session(): Promise<Session> {
    if (this.closed) throw new ConnectionClosedError(this.hostPort);
    if (this.current?.alive) return this.current;
    if (this.connecting) return this.connecting;
    if (this.reconnect.failures > 0 && Date.now() < this.nextAttempt && this.error) throw this.error;
    const attempt = this.connect().finally(() => {
      if (this.connecting === attempt) this.connecting = null;
    });
    this.connecting = attempt;
    return attempt;
  }

  private connect(): Promise<Session> {
    const { host, port, username, privateKey, passphrase } = this.options;
    const hostKeySha256 = this.pinned;
    return new Promise<Session>((resolve, reject) => {
      const client = new Client();
      let presented: string | null = null;
      let hostKeyRejected = false;
      let settled = false;
      const fail = (err: ErgSlurmError) => {
        if (settled) return;
        settled = true;
        this.nextAttempt = Date.now() + this.reconnect.next();
        this.error = err;
        client.end();
        reject(err);
      };
      client.on('ready', () => {
        if (settled) return;
        settled = true;
        if (this.closed) {
          client.end();
          reject(new ConnectionClosedError(this.hostPort));
          return;
        }
        const session: Session = {
          client,
          channels: new Semaphore(this.options.maxSessions),
          sftp: null,
          alive: true,
          endedBy: null,
          inFlight: new Set(),
          lastClientError: null,
        };
        this.reconnect.succeeded();
        this.nextAttempt = 0;
        this.error = null;
        this.current = session;
        // Trust on first use ends here: authentication succeeded with this key, so pin it.
        this.pinned ??= presented;
        client.on('close', () => {
          const why = session.lastClientError?.message ?? 'the server closed the connection';
          this.endSession(session, new ConnectionLostError(this.hostPort, why, { cause: session.lastClientError ?? undefined }));
        });
        resolve(session);
      });
      client.on('error', (err: Error & { level?: string }) => {
        if (settled) {
          if (this.current?.client === client) this.current.lastClientError = err;
          return;
        }
        if (hostKeyRejected) fail(new HostKeyMismatchError(this.hostPort, hostKeySha256 ?? '(none)', presented ?? '(none)'));
        else if (err.level === 'client-authentication') fail(new SshAuthError(this.hostPort, username, undefined, { cause: err }));
        else fail(new ClusterUnreachableError(this.hostPort, describeConnectError(err), { cause: err }));
      });
      client.on('close', () =>
        fail(
          hostKeyRejected
            ? new HostKeyMismatchError(this.hostPort, hostKeySha256 ?? '(none)', presented ?? '(none)')
            : new ClusterUnreachableError(this.hostPort, 'connection closed during handshake'),
        ),
      );
      try {
        client.connect({
          host,
          port,
          username,
          privateKey,
          passphrase,
          // Only publickey: never fall back to password/keyboard prompts on a scheduler.
          authHandler: ['publickey'],
          hostVerifier: (key: Buffer) => {
            presented = hostKeyFingerprint(key);
            hostKeyRejected = hostKeySha256 !== null && !fingerprintsEqual(hostKeySha256, presented);
            return !hostKeyRejected;
          },
          readyTimeout: this.options.connectTimeoutMs,
          keepaliveInterval: this.options.keepaliveIntervalMs,
          keepaliveCountMax: this.options.keepaliveCountMax,
        });
      } catch (err) {
        // ssh2 throws synchronously for an unusable private key: a configuration error.
        fail(new SshAuthError(this.hostPort, username, `cannot use the private key for ${username}@${this.hostPort}: ${(err as Error).message}`, { cause: err }));
      }
    });
  }

  /** Ends a session: fails its waiters and operations in flight with `err`. Idempotent. */
  private endSession(session: Session, err: ErgSlurmError): void {
    if (!session.alive) return;
    session.alive = false;
    session.endedBy = err;
    if (this.current === session) this.current = null;
    if (!(err instanceof ConnectionClosedError)) this.error = err;
    session.channels.abort(err);
    for (const failOp of [...session.inFlight]) failOp(err);
    session.inFlight.clear();
  }

  // --- channels -------------------------------------------------------------------------------

  /**
   * Opens an exec channel for `command` under a channel permit. The permit is held until the
   * channel is closed on both sides, which is when sshd stops counting it — not when the caller's
   * call settles (a timed-out command's channel is still open).
   */
  private async openCommand(command: string): Promise<{ session: Session; channel: ClientChannel }> {
    const session = await this.session();
    const release = await this.acquireChannel(session);
    const channel = await this.track<ClientChannel>(session, (resolve, reject) => {
      session.client.exec(command, (err, stream) => {
        if (err) {
          release();
          reject(this.channelError(session, err));
          return;
        }
        stream.on('close', () => release());
        resolve(stream);
      });
    });
    return { session, channel };
  }

  private async acquireChannel(session: Session): Promise<() => void> {
    const release = await session.channels.acquire();
    if (!session.alive) {
      release();
      throw session.endedBy ?? new ConnectionLostError(this.hostPort, 'connection ended');
    }
    this.openChannels++;
    this.maxOpenChannels = Math.max(this.maxOpenChannels, this.openChannels);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.openChannels--;
      release();
    };
  }

  private channelError(session: Session, err: Error): ErgSlurmError {
    if (!session.alive) return session.endedBy ?? new ConnectionLostError(this.hostPort, err.message, { cause: err });
    return new ChannelOpenError(this.hostPort, err.message, { cause: err });
  }

  /**
   * Runs `body` as an operation of `session`: it settles once, and fails with the session's end
   * error if the connection goes away first.
   */
  private track<T>(session: Session, body: (resolve: (value: T) => void, reject: (err: unknown) => void) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (!session.alive) {
        reject(session.endedBy ?? new ConnectionLostError(this.hostPort, 'connection ended'));
        return;
      }
      let settled = false;
      const onEnd = (err: ErgSlurmError) => settle(() => reject(err));
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        session.inFlight.delete(onEnd);
        fn();
      };
      session.inFlight.add(onEnd);
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

  private collect(
    session: Session,
    stream: ClientChannel,
    command: string,
    limits: { timeoutMs: number; maxOutputBytes: number; stdin: string | Buffer | undefined },
    resolve: (r: ExecResult) => void,
    reject: (err: unknown) => void,
  ): void {
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let bytes = 0;
    let code: number | null = null;
    let signal: string | null = null;
    let exited = false;
    let abandoned = false;
    const abandon = (err: ErgSlurmError) => {
      abandoned = true;
      clearTimeout(timer);
      // Ask the remote process to die, then close the channel. Signals are best effort: OpenSSH
      // ignores them in some setups (seen for root logins on OpenSSH 9.2), and then sshd keeps
      // the channel — and we keep its permit — until the remote command ends by itself. Callers
      // that can, bound their commands on the remote side too (SlurmClient uses `timeout`).
      try {
        stream.signal('KILL');
      } catch {
        /* the channel may already be closing */
      }
      stream.close();
      reject(err);
    };
    const timer = setTimeout(() => abandon(new SshTimeoutError(this.hostPort, limits.timeoutMs, command)), limits.timeoutMs);
    const onData = (sink: Buffer[]) => (chunk: Buffer) => {
      if (abandoned) return;
      bytes += chunk.length;
      if (bytes > limits.maxOutputBytes) {
        abandon(new OutputTooLargeError(this.hostPort, limits.maxOutputBytes, command));
        return;
      }
      sink.push(chunk);
    };
    // A stream error (e.g. a write after the server closed the channel) ends this call; the
    // channel's close still follows and returns the permit.
    stream.on('error', (err: Error) => {
      if (abandoned) return;
      abandoned = true;
      clearTimeout(timer);
      reject(session.alive ? new ChannelError(this.hostPort, err.message, { cause: err }) : session.endedBy);
    });
    stream.on('data', onData(stdout));
    stream.stderr.on('data', onData(stderr));
    stream.on('exit', (exitCode: number | null, exitSignal?: string) => {
      exited = true;
      code = typeof exitCode === 'number' ? exitCode : null;
      signal = exitSignal ?? null;
    });
    stream.on('close', () => {
      clearTimeout(timer);
      if (abandoned) return;
      if (!exited && !session.alive) {
        reject(session.endedBy ?? new ConnectionLostError(this.hostPort, 'channel closed'));
        return;
      }
      resolve({ code, signal, stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8') });
    });
    // Always send EOF: a command that reads stdin must not wait forever.
    stream.end(limits.stdin);
  }

  // --- SFTP -----------------------------------------------------------------------------------

  /** The session's SFTP channel, opened on first use and kept (it holds one channel permit). */
  private sftp(session: Session): Promise<SFTPWrapper> {
    if (!session.sftp) {
      const opening: Promise<SFTPWrapper> = this.openSftp(session, () => {
        if (session.sftp === opening) session.sftp = null;
      });
      session.sftp = opening;
    }
    return session.sftp;
  }

  private async openSftp(session: Session, forget: () => void): Promise<SFTPWrapper> {
    const release = await this.acquireChannel(session);
    try {
      const sftp = await this.track<SFTPWrapper>(session, (resolve, reject) =>
        session.client.sftp((err, s) => (err ? reject(this.channelError(session, err)) : resolve(s))),
      );
      // Request failures arrive through each request's callback; an 'error' event without a
      // listener would crash the process, so it is only noted here.
      sftp.on('error', () => undefined);
      // If the server closes the subsystem, the next call opens a new one.
      sftp.on('close', () => {
        release();
        forget();
      });
      // A channel with a request that timed out is given up: later calls open a new one. Its
      // permit is returned now, not at its close: sshd confirms the close only once the stuck
      // sftp-server returns, which may be never (seen with OpenSSH 9.2). sshd still counts that
      // channel, so a connection with stuck channels may see an open refused (ChannelOpenError,
      // retryable) sooner than maxSessions says.
      this.sftpDiscard.set(sftp, () => {
        forget();
        release();
        sftp.end();
      });
      return sftp;
    } catch (err) {
      release();
      forget();
      throw err;
    }
  }

  /**
   * One SFTP request as a promise; failures become SftpError (or the session's end error). A
   * request unanswered after `sftpTimeoutMs` fails with SshTimeoutError and its channel is
   * discarded: OpenSSH's sftp-server answers one request at a time, so one that hangs (an open()
   * of a FIFO blocks until a writer appears) would hold every later request of that channel.
   */
  private sftpCall<T>(
    session: Session,
    sftp: SFTPWrapper,
    operation: string,
    remotePath: string,
    call: (cb: (err: Error | null | undefined, value?: T) => void) => void,
  ): Promise<T> {
    return this.track<T>(session, (resolve, reject) => {
      const timeoutMs = this.options.sftpTimeoutMs;
      const timer = setTimeout(() => {
        this.sftpDiscard.get(sftp)?.();
        reject(new SshTimeoutError(this.hostPort, timeoutMs, `SFTP ${operation} ${remotePath}`));
      }, timeoutMs);
      call((err, value) => {
        clearTimeout(timer);
        if (err) reject(session.alive ? new SftpError(this.hostPort, operation, remotePath, { cause: err }) : session.endedBy);
        else resolve(value as T);
      });
    });
  }

  /** mkdir -p over SFTP. */
  private async ensureDir(session: Session, sftp: SFTPWrapper, dir: string): Promise<void> {
    const isDir = await this.sftpCall<Stats>(session, sftp, 'stat', dir, (cb) => sftp.stat(dir, cb)).then(
      (stats) => stats.isDirectory(),
      (err: unknown) => {
        if (err instanceof SftpError && sftpCode(err.cause) === SFTP_NO_SUCH_FILE) return null;
        throw err;
      },
    );
    if (isDir === true) return;
    if (isDir === false) throw new SftpError(this.hostPort, 'mkdir', dir, { cause: new Error('exists and is not a directory') });
    const parent = path.posix.dirname(dir);
    if (parent !== dir) await this.ensureDir(session, sftp, parent);
    try {
      await this.sftpCall<void>(session, sftp, 'mkdir', dir, (cb) => sftp.mkdir(dir, cb));
    } catch (err) {
      // Another writer may have created it between our stat and mkdir.
      const again = await this.sftpCall<Stats>(session, sftp, 'stat', dir, (cb) => sftp.stat(dir, cb)).catch(() => null);
      if (!again?.isDirectory()) throw err;
    }
  }
}

function sftpCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

function describeConnectError(err: Error & { level?: string; code?: string }): string {
  if (err.level === 'client-timeout') return `no SSH handshake within the connect timeout (${err.message})`;
  if (err.code === 'ECONNREFUSED') return 'connection refused (is sshd running on that port?)';
  if (err.code === 'ENOTFOUND' || err.level === 'client-dns') return `host name does not resolve (${err.message})`;
  return err.message;
}

/**
 * The state of one execStream call: the channel, its deadline, and how it ended. Exactly one of
 * "closed by the server" and "given up" (timeout, connection lost, cancel) happens; both settle
 * `done` and finish `stdout`.
 */
class StreamedCommand implements ExecStream {
  readonly stdout: Readable;
  readonly done: Promise<ExecExit>;
  private settled = false;
  private exit: { code: number | null; signal: string | null } | null = null;
  private readonly stderr: Buffer[] = [];
  private stderrBytes = 0;
  private readonly timer: NodeJS.Timeout;
  private resolveDone!: (exit: ExecExit) => void;
  private rejectDone!: (err: unknown) => void;
  private readonly onSessionEnd = (err: ErgSlurmError) => this.giveUp(err);

  constructor(
    private readonly hostPort: string,
    private readonly session: Session,
    private readonly channel: ClientChannel,
    command: string,
    timeoutMs: number,
    private readonly maxStderrBytes: number,
  ) {
    this.done = new Promise<ExecExit>((resolve, reject) => {
      this.resolveDone = resolve;
      this.rejectDone = reject;
    });
    // A caller that cancels, or fails on stdout, need not await `done` as well.
    this.done.catch(() => undefined);
    this.stdout = new Readable({
      highWaterMark: 64 * 1024,
      // Resuming the channel lets ssh2 renew the window, so the server sends more.
      read: () => void channel.resume(),
      // Destroyed before its end: the reader stopped early (or failed), so stop the command too.
      // After the end (Readable destroys itself then) the channel's own close is on its way.
      destroy: (err, cb) => {
        if (err || !this.stdout.readableEnded) this.abandon(err ?? new Error('the reader stopped reading'));
        cb(err);
      },
    });
    channel.on('data', (chunk: Buffer) => {
      if (this.settled) return; // given up: drained and dropped (see abandon)
      if (!this.stdout.push(chunk)) channel.pause();
    });
    channel.on('end', () => this.stdout.push(null));
    channel.stderr.on('data', (chunk: Buffer) => {
      const room = this.maxStderrBytes - this.stderrBytes;
      if (room <= 0) return;
      this.stderr.push(chunk.subarray(0, room));
      this.stderrBytes += Math.min(room, chunk.length);
    });
    channel.on('exit', (code: number | null, signal?: string) => {
      this.exit = { code: typeof code === 'number' ? code : null, signal: signal ?? null };
    });
    channel.on('error', (err: Error) => this.giveUp(session.alive ? new ChannelError(hostPort, err.message, { cause: err }) : session.endedBy!));
    channel.on('close', () => this.closed());
    this.timer = setTimeout(() => this.giveUp(new SshTimeoutError(hostPort, timeoutMs, command)), timeoutMs);
    session.inFlight.add(this.onSessionEnd);
    // stdin is closed at once: a command that reads it must not wait forever.
    channel.end();
  }

  cancel(): void {
    this.abandon(new Error('cancelled by the reader'));
    this.stdout.destroy();
  }

  private closed(): void {
    if (this.settled) return;
    if (!this.exit && !this.session.alive) {
      this.giveUp(this.session.endedBy ?? new ConnectionLostError(this.hostPort, 'channel closed'));
      return;
    }
    this.finish();
    // The server may close without an EOF first; the reader must still see the end.
    this.stdout.push(null);
    this.resolveDone({ ...(this.exit ?? { code: null, signal: null }), stderr: Buffer.concat(this.stderr).toString('utf8') });
  }

  /** Ends the command from this side and fails `stdout` and `done` with `err`. */
  private giveUp(err: unknown): void {
    if (this.settled) return;
    this.abandon(err);
    this.stdout.destroy(err instanceof Error ? err : new Error(String(err)));
  }

  /** Kills the command and closes the channel; `done` fails with `err`. */
  private abandon(err: unknown): void {
    if (this.settled) return;
    this.finish();
    // Signals are best effort (see collect); remote commands bound themselves with `timeout`.
    try {
      this.channel.signal('KILL');
    } catch {
      /* the channel may already be closing */
    }
    this.channel.close();
    // ssh2 emits the channel's 'close' (which returns the permit) only after its buffered data
    // has been read: drain it into the void.
    this.channel.resume();
    this.rejectDone(err);
  }

  private finish(): void {
    this.settled = true;
    clearTimeout(this.timer);
    this.session.inFlight.delete(this.onSessionEnd);
  }
}
