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
 *
 * Jump hosts (bastions)
 * - With `jumpHosts`, a session is a chain: erg connects to the first jump host, asks it to
 *   forward a TCP connection to the next hop (`direct-tcpip`, what `ssh -J` does), runs the next
 *   SSH connection inside it, and so on to the login node. Every hop has its own user, key,
 *   certificate and pinned host key; jump hosts have no trust on first use.
 * - The chain is one connect attempt: any hop's failure fails it, classified as above and naming
 *   the hop (`jump host bastion.example.org:22`), and the backoff applies to the whole chain.
 * - A hop that drops ends the session (ConnectionLostError naming the hop); closing the session
 *   closes every hop.
 *
 * Certificates and rotation
 * - A hop with an OpenSSH user certificate offers it first, then the plain key (certificate-auth.ts).
 *   A certificate past its validity is never offered: erg does not connect (CertificateExpiredError,
 *   no attempt, no backoff), and a live session whose certificate expires is retired (below).
 * - `reconfigure` swaps the credentials (or the whole endpoint) without downtime: the live session
 *   is retired — operations on it run to their end, and it closes once the last has — while new
 *   operations open a session with the new settings.
 */
import path from 'node:path';
import { Readable } from 'node:stream';
import { Backoff, type BackoffOptions } from '@erg/backoff';
import type { Duplex } from 'node:stream';
import { Client, type ClientChannel, type SFTPWrapper, type Stats } from 'ssh2';
import { certificateExpired, parseCertificate, type SshCertificate } from './certificate';
import { installCertificateAuth, publickeyAuthHandler } from './certificate-auth';
import {
  CertificateExpiredError,
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

/** One jump host (bastion) in front of the login node. */
export interface JumpHostOptions {
  host: string;
  /** Default 22. */
  port?: number;
  username: string;
  /** OpenSSH-format private key for this hop. */
  privateKey: string | Buffer;
  /** An OpenSSH user certificate of privateKey (the one line of its `-cert.pub`); offered before the plain key. */
  certificate?: string | null;
  /** Pinned host key fingerprint (`SHA256:…`); jump hosts have no trust on first use. */
  hostKeySha256: string;
}

export interface ClusterConnectionOptions {
  host: string;
  /** Default 22. */
  port?: number;
  username: string;
  /** OpenSSH-format private key. */
  privateKey: string | Buffer;
  passphrase?: string;
  /** An OpenSSH user certificate of privateKey (the one line of its `-cert.pub`); offered before the plain key. */
  certificate?: string | null;
  /**
   * Jump hosts in front of the login node, in the order erg passes them (the first is the one
   * erg reaches directly, as in `ssh -J first,second login`). Default: none.
   */
  jumpHosts?: readonly JumpHostOptions[];
  /** The cluster's name in erg, for messages that say what to run (rotating a certificate). */
  clusterName?: string;
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
  /**
   * How often an exec channel the server refused to open is asked for again, after 25, 50, 100 …
   * ms, before the refusal reaches the caller. Default 5 (under 1 s in all). A refused open ran
   * nothing, so asking again is safe; sshd frees a closed channel's session slot a little after
   * it confirmed the close (OpenSSH 10 under load: "no more sessions" with fewer than
   * MaxSessions open), and without this the caller would see that lag as a failure.
   */
  channelOpenRetries?: number;
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
  /** Exec channel opens the server refused and that were asked for again (channelOpenRetries). */
  reopened: number;
}

/** The settings `reconfigure` may change: where to connect, and with what. */
export type ClusterEndpointOptions = Pick<
  ClusterConnectionOptions,
  'host' | 'port' | 'username' | 'privateKey' | 'passphrase' | 'certificate' | 'jumpHosts' | 'hostKeySha256' | 'clusterName'
>;

/** One SSH connection of a chain, as connect() walks it. */
interface Hop {
  /** How messages name it: `login.example.org:22`, or `jump host bastion.example.org:22`. */
  label: string;
  /** Whose login it is, for certificate messages: `erg@login.example.org:22`, `erg@bastion.example.org:22 (jump host 1)`. */
  account: string;
  host: string;
  port: number;
  username: string;
  privateKey: string | Buffer;
  passphrase: string | undefined;
  certificate: SshCertificate | null;
  /** Why the configured certificate cannot be used (does not parse); null when fine or none. */
  certificateProblem: string | null;
  /** The fingerprint required of it; null: trust on first use (the login node only). */
  pin: string | null;
  /** The cluster setting that pins it, for the mismatch message. */
  pinField: string;
  /** What to run to rotate its certificate. */
  rotate: string;
}

interface Session {
  client: Client;
  /** The jump hosts' connections the client runs through, first hop first; empty without jump hosts. */
  via: Client[];
  /** Callers using the session now (see useSession); a retired session closes when this drops to 0. */
  users: number;
  /** Superseded by reconfigure, or its certificate expired: no new operation starts on it. */
  retired: boolean;
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
  private options: Required<Omit<ClusterConnectionOptions, 'passphrase' | 'backoff' | 'certificate' | 'jumpHosts' | 'clusterName'>> &
    Pick<ClusterConnectionOptions, 'passphrase' | 'backoff' | 'certificate' | 'jumpHosts' | 'clusterName'>;
  private current: Session | null = null;
  /** Bumped by reconfigure: a connect attempt started before it yields a session that is retired at once. */
  private generation = 0;
  /** The generation `connecting` connects with. */
  private connectingGeneration = 0;
  /** Retired sessions still finishing their operations. */
  private readonly retiring = new Set<Session>();
  /** Certificates of the current settings, parsed once (session() looks at their expiry on every call). */
  private certificates = new Map<string, ReturnType<typeof parseCertificate>>();
  private connecting: Promise<Session> | null = null;
  /** Failed connect attempts in a row, and how long the next one waits. */
  private readonly reconnect: Backoff;
  private nextAttempt = 0;
  private closed = false;
  private error: ErgSlurmError | null = null;
  private openChannels = 0;
  private maxOpenChannels = 0;
  /** Exec channel opens asked for again after the server refused them (channelOpenRetries). */
  private channelOpenRetried = 0;
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
      channelOpenRetries: 5,
      ...options,
    };
    this.reconnect = new Backoff({ ...SSH_RECONNECT_BACKOFF, ...options.backoff });
    this.pinned = this.options.hostKeySha256;
    // The semaphore validates maxSessions too, but fail here, at configuration time.
    if (!Number.isInteger(this.options.maxSessions) || this.options.maxSessions < 1) {
      throw new RangeError(`maxSessions must be a positive integer, got ${this.options.maxSessions}`);
    }
  }

  /** The login node, `host:port`, as messages name it. */
  get hostPort(): string {
    return `${this.options.host}:${this.options.port ?? 22}`;
  }

  /**
   * Replaces where and how the connection connects (new credentials, a rotated certificate,
   * another login node) without dropping anything: the live session is retired — what runs on it
   * finishes, and it closes after its last operation — and the next operation connects with the
   * new settings, at once (a backoff of the old settings does not delay it).
   */
  reconfigure(endpoint: ClusterEndpointOptions): void {
    if (this.closed) return;
    this.options = {
      ...this.options,
      ...endpoint,
      port: endpoint.port ?? 22,
      passphrase: endpoint.passphrase,
      certificate: endpoint.certificate,
      jumpHosts: endpoint.jumpHosts,
      clusterName: endpoint.clusterName ?? this.options.clusterName,
    };
    this.certificates = new Map();
    this.pinned = endpoint.hostKeySha256;
    this.generation++;
    this.reconnect.succeeded();
    this.nextAttempt = 0;
    if (this.current) this.retire(this.current);
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
    return { open: this.openChannels, maxOpen: this.maxOpenChannels, waiting: this.current?.channels.waiting ?? 0, reopened: this.channelOpenRetried };
  }

  /** Runs `command` through the login shell and collects its output. A non-zero exit is a result, not an error. */
  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const timeoutMs = options.timeoutMs ?? this.options.execTimeoutMs;
    const maxOutputBytes = options.maxOutputBytes ?? this.options.maxOutputBytes;
    return this.useSession(async (session) => {
      const channel = await this.openCommand(session, command);
      return this.track(session, (resolve, reject) =>
        this.collect(session, channel, command, { timeoutMs, maxOutputBytes, stdin: options.stdin }, resolve, reject),
      );
    });
  }

  /**
   * Runs `command` through the login shell and hands its stdout over as a stream, for output of
   * any size (job logs). The channel's permit is held until the channel closes. stderr is always
   * drained (it shares the channel's window with stdout) and its first part kept for `done`.
   */
  async execStream(command: string, options: ExecStreamOptions = {}): Promise<ExecStream> {
    const timeoutMs = options.timeoutMs ?? this.options.execTimeoutMs;
    const maxStderrBytes = options.maxStderrBytes ?? 64 * 1024;
    const session = await this.session();
    // The stream uses the session until it settles, not until this call returns.
    session.users++;
    let channel: ClientChannel;
    try {
      channel = await this.openCommand(session, command);
    } catch (err) {
      this.leave(session);
      throw err;
    }
    return new StreamedCommand(this.hostPort, session, channel, command, timeoutMs, maxStderrBytes, () => this.leave(session));
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
    await this.useSession(async (session) => {
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
    });
  }

  /**
   * Reads (part of) a remote file over SFTP; null when it does not exist. Only for files erg
   * itself controls: a file a job can change (anything in a run directory after the job started)
   * is read with openJobFile (job-files.ts), which neither follows links nor waits on a FIFO.
   */
  async readFile(remotePath: string, options: ReadFileOptions = {}): Promise<ReadFileResult | null> {
    return this.useSession((session) => this.readFileOn(session, remotePath, options));
  }

  private async readFileOn(session: Session, remotePath: string, options: ReadFileOptions): Promise<ReadFileResult | null> {
    const maxBytes = options.maxBytes ?? 1024 * 1024;
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
    const sessions = new Set([...this.retiring, ...(session ? [session] : [])]);
    this.retiring.clear();
    await Promise.all([...sessions].map((s) => this.shut(s, new ConnectionClosedError(this.hostPort))));
  }

  // --- connection -----------------------------------------------------------------------------

  private async session(): Promise<Session> {
    if (this.closed) throw new ConnectionClosedError(this.hostPort);
    if (this.current?.alive) {
      // A certificate that expired while the session lived: no new work on it (the site meant
      // erg's access to end there); what runs on it finishes. The connect below then says why.
      if (!this.expiredHop(this.hops())) return this.current;
      this.retire(this.current);
    }
    // An attempt with settings reconfigure has replaced serves those who waited for it, not new callers.
    if (this.connecting && this.connectingGeneration === this.generation) return this.connecting;
    if (this.reconnect.failures > 0 && Date.now() < this.nextAttempt && this.error) throw this.error;
    const attempt = this.connect().finally(() => {
      if (this.connecting === attempt) this.connecting = null;
    });
    this.connecting = attempt;
    this.connectingGeneration = this.generation;
    return attempt;
  }

  /**
   * Runs `body` with a session, counted as one of its users: a session retired meanwhile
   * (reconfigure, an expired certificate) stays up until its last user is done.
   */
  private async useSession<T>(body: (session: Session) => Promise<T>): Promise<T> {
    const session = await this.session();
    session.users++;
    try {
      return await body(session);
    } finally {
      this.leave(session);
    }
  }

  private leave(session: Session): void {
    session.users--;
    if (session.retired && session.users === 0) void this.shut(session, new ConnectionClosedError(this.hostPort));
  }

  /** Takes the session out of use: new operations get another; it closes once its users are done. */
  private retire(session: Session): void {
    if (session.retired) return;
    session.retired = true;
    if (this.current === session) this.current = null;
    if (!session.alive) return;
    this.retiring.add(session);
    // Callers that were handed the session in this tick count themselves as users in a later microtask.
    setImmediate(() => {
      if (session.users === 0) void this.shut(session, new ConnectionClosedError(this.hostPort));
    });
  }

  /** Ends the session (failing what is still in flight with `err`) and closes every hop of it. */
  private async shut(session: Session, err: ErgSlurmError): Promise<void> {
    this.retiring.delete(session);
    this.endSession(session, err);
    await new Promise<void>((resolve) => {
      session.client.once('close', () => resolve());
      session.client.end();
      for (const hop of session.via) hop.end();
      // 'close' normally follows end() at once; do not hang a test's afterAll on a dead socket.
      setTimeout(resolve, 2000).unref();
    });
  }

  /** The chain of this connection's settings: its jump hosts, then the login node. */
  private hops(): Hop[] {
    const o = this.options;
    const name = o.clusterName ?? 'NAME';
    const certificateOf = (text: string | null | undefined) => {
      if (!text) return { certificate: null, certificateProblem: null };
      let parsed = this.certificates.get(text);
      if (!parsed) this.certificates.set(text, (parsed = parseCertificate(text)));
      return parsed.ok ? { certificate: parsed.certificate, certificateProblem: null } : { certificate: null, certificateProblem: parsed.message };
    };
    const clusterRotate = `erg clusters credentials ${name} --cert FILE`;
    const jumps = (o.jumpHosts ?? []).map((j, i): Hop => {
      const port = j.port ?? 22;
      return {
        label: `jump host ${j.host}:${port}`,
        account: `${j.username}@${j.host}:${port} (jump host ${i + 1})`,
        host: j.host,
        port,
        username: j.username,
        privateKey: j.privateKey,
        passphrase: undefined,
        ...certificateOf(j.certificate),
        pin: j.hostKeySha256,
        pinField: `jumpHosts[${i}].hostKeySha256`,
        // A jump host that logs in with the cluster's certificate is fixed by rotating that one.
        rotate: j.certificate && j.certificate === o.certificate
          ? clusterRotate
          : `erg clusters credentials ${name} --jump 'USER@HOST:PORT,host-key=SHA256:…,key=FILE,cert=FILE' (every jump host, in order, jump host ${i + 1} with its new cert)`,
      };
    });
    const target: Hop = {
      label: this.hostPort,
      account: `${o.username}@${this.hostPort}`,
      host: o.host,
      port: o.port,
      username: o.username,
      privateKey: o.privateKey,
      passphrase: o.passphrase,
      ...certificateOf(o.certificate),
      pin: this.pinned,
      pinField: 'hostKeySha256',
      rotate: clusterRotate,
    };
    return [...jumps, target];
  }

  /** The first hop whose certificate has expired, if any. */
  private expiredHop(hops: Hop[], now = new Date()): Hop | undefined {
    return hops.find((h) => h.certificate !== null && certificateExpired(h.certificate, now));
  }

  private async connect(): Promise<Session> {
    const generation = this.generation;
    const hops = this.hops();
    const expired = this.expiredHop(hops);
    if (expired) {
      // Not an attempt: nothing was sent, so no backoff; the next call checks again (a rotation may have come).
      const err = new CertificateExpiredError(expired.account, expired.certificate!.validBefore!, expired.rotate);
      this.error = err;
      throw err;
    }
    const opened: Client[] = [];
    let presented: string | null = null;
    try {
      let sock: Duplex | undefined;
      for (const [i, hop] of hops.entries()) {
        const hopConnected = await this.connectHop(hop, sock);
        opened.push(hopConnected.client);
        presented = hopConnected.presented;
        const next = hops[i + 1];
        if (next) sock = await this.forward(hopConnected.client, hop, next);
      }
    } catch (err) {
      for (const client of opened) client.end();
      this.nextAttempt = Date.now() + this.reconnect.next();
      this.error = err as ErgSlurmError;
      throw err;
    }
    const client = opened.pop()!;
    if (this.closed) {
      client.end();
      for (const hop of opened) hop.end();
      throw new ConnectionClosedError(this.hostPort);
    }
    const session: Session = {
      client,
      via: opened,
      users: 0,
      retired: false,
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
    const lost = (why: string, cause?: Error | null) => {
      this.endSession(session, new ConnectionLostError(this.hostPort, why, { cause: cause ?? undefined }));
      // Closing the login node's connection closes the chain, and a jump host that drops takes it with it.
      client.end();
      for (const hop of opened) hop.end();
      this.retiring.delete(session);
    };
    client.on('error', (err: Error) => {
      session.lastClientError = err;
    });
    client.on('close', () => lost(session.lastClientError?.message ?? 'the server closed the connection', session.lastClientError));
    for (const [i, hop] of opened.entries()) {
      let hopError: Error | null = null;
      hop.on('error', (err: Error) => {
        hopError = err;
      });
      hop.on('close', () => lost(`${hops[i]!.label} closed the connection${hopError ? ` (${hopError.message})` : ''}`, hopError));
    }
    if (generation !== this.generation) {
      // Settings changed while this one connected: it serves whoever waited for it, then closes.
      this.retire(session);
      return session;
    }
    this.current = session;
    // Trust on first use ends here: authentication succeeded with this key, so pin it.
    this.pinned ??= presented;
    return session;
  }

  /** One SSH handshake and login: to `hop.host` directly, or inside `sock` (a connection forwarded by the hop before it). */
  private connectHop(hop: Hop, sock: Duplex | undefined): Promise<{ client: Client; presented: string | null }> {
    return new Promise((resolve, reject) => {
      if (hop.certificateProblem) {
        reject(new SshAuthError(hop.label, hop.username, `cannot use the certificate for ${hop.username}@${hop.label}: ${hop.certificateProblem}`));
        return;
      }
      const client = new Client();
      let presented: string | null = null;
      let hostKeyRejected = false;
      let settled = false;
      const mismatch = () => new HostKeyMismatchError(hop.label, hop.pin ?? '(none)', presented ?? '(none)', hop.pinField);
      const fail = (err: ErgSlurmError) => {
        if (settled) return;
        settled = true;
        client.end();
        reject(err);
      };
      client.on('ready', () => {
        if (settled) return;
        settled = true;
        resolve({ client, presented });
      });
      client.on('error', (err: Error & { level?: string }) => {
        if (settled) return;
        if (hostKeyRejected) fail(mismatch());
        else if (err.level === 'client-authentication') fail(this.authError(hop, err));
        else fail(new ClusterUnreachableError(hop.label, describeConnectError(err), { cause: err }));
      });
      client.on('close', () => fail(hostKeyRejected ? mismatch() : new ClusterUnreachableError(hop.label, 'connection closed during handshake')));
      try {
        client.connect({
          host: hop.host,
          port: hop.port,
          ...(sock ? { sock } : {}),
          username: hop.username,
          privateKey: hop.privateKey,
          passphrase: hop.passphrase,
          // Only publickey (the certificate first, when there is one): never fall back to
          // password/keyboard prompts on a scheduler.
          authHandler: hop.certificate ? publickeyAuthHandler(hop.username, hop.privateKey, hop.certificate) : ['publickey'],
          hostVerifier: (key: Buffer) => {
            presented = hostKeyFingerprint(key);
            hostKeyRejected = hop.pin !== null && !fingerprintsEqual(hop.pin, presented);
            return !hostKeyRejected;
          },
          readyTimeout: this.options.connectTimeoutMs,
          keepaliveInterval: this.options.keepaliveIntervalMs,
          keepaliveCountMax: this.options.keepaliveCountMax,
        });
        if (hop.certificate) installCertificateAuth(client);
      } catch (err) {
        // ssh2 throws synchronously for an unusable private key: a configuration error.
        fail(new SshAuthError(hop.label, hop.username, `cannot use the private key for ${hop.username}@${hop.label}: ${(err as Error).message}`, { cause: err }));
      }
    });
  }

  private authError(hop: Hop, err: Error): SshAuthError {
    const where = hop.host;
    if (hop.certificate) {
      const c = hop.certificate;
      return new SshAuthError(
        hop.label,
        hop.username,
        `authentication as ${hop.username} at ${hop.label} failed with the certificate (key id ${JSON.stringify(c.keyId)}, serial ${c.serial}, ` +
          `principals ${c.principals.join(',') || '(any)'}, signed by ${c.signingKeySha256}) and with the plain key: check that ${where} trusts that CA ` +
          `(TrustedUserCAKeys) and that a principal matches ${hop.username}, or that the key is in ${hop.username}'s ~/.ssh/authorized_keys there`,
        { cause: err },
      );
    }
    if (hop.label !== this.hostPort) {
      return new SshAuthError(hop.label, hop.username, `authentication as ${hop.username} at ${hop.label} failed: check that the jump host's key is in ${hop.username}'s ~/.ssh/authorized_keys on ${where}`, { cause: err });
    }
    return new SshAuthError(hop.label, hop.username, undefined, { cause: err });
  }

  /** Asks `via` (connected) to open a TCP connection to `next`, for the next hop's SSH to run inside. */
  private forward(via: Client, hop: Hop, next: Hop): Promise<Duplex> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        via.removeListener('close', onClose);
        fn();
      };
      const timeoutMs = this.options.connectTimeoutMs;
      const timer = setTimeout(
        () => settle(() => reject(new ClusterUnreachableError(next.label, `${hop.label} did not open a forwarded connection to it within ${timeoutMs} ms`))),
        timeoutMs,
      );
      const onClose = () => settle(() => reject(new ClusterUnreachableError(next.label, `${hop.label} closed the connection while forwarding to it`)));
      via.once('close', onClose);
      via.forwardOut('127.0.0.1', 0, next.host, next.port, (err, stream) => {
        if (err) {
          settle(() =>
            reject(
              new ClusterUnreachableError(
                next.label,
                `${hop.label} refused to forward a connection to it (${err.message}): the jump host must allow TCP forwarding there (sshd: AllowTcpForwarding, PermitOpen)`,
                { cause: err },
              ),
            ),
          );
          return;
        }
        settle(() => resolve(stream));
      });
    });
  }

  /** Ends a session: fails its waiters and operations in flight with `err`. Idempotent. */
  private endSession(session: Session, err: ErgSlurmError): void {
    if (!session.alive) return;
    session.alive = false;
    session.endedBy = err;
    if (this.current === session) this.current = null;
    // A retired session's end is no failure of the connection's current settings.
    if (!(err instanceof ConnectionClosedError) && !session.retired) this.error = err;
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
  private async openCommand(session: Session, command: string): Promise<ClientChannel> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.openCommandOnce(session, command);
      } catch (err) {
        if (!(err instanceof ChannelOpenError) || attempt >= this.options.channelOpenRetries || !session.alive) throw err;
        this.channelOpenRetried++;
        await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** attempt));
      }
    }
  }

  private async openCommandOnce(session: Session, command: string): Promise<ClientChannel> {
    const release = await this.acquireChannel(session);
    const channel = await this.track<ClientChannel>(session, (resolve, reject) => {
      session.client.exec(command, (err, stream) => {
        if (err) {
          release();
          reject(this.channelError(session, err));
          return;
        }
        stream.on('close', () => release());
        // Listened for here, in the callback: a fast command's exit-status can arrive before the
        // caller (after an await) attaches its listeners, and ssh2 would emit it to nobody — the
        // command would read as killed (exit null). Seen against the 24.11 cluster's sshd.
        stream.on('exit', (code: number | null, signal?: string) => {
          exitStatus.set(stream, { code: typeof code === 'number' ? code : null, signal: signal ?? null });
        });
        resolve(stream);
      });
    });
    return channel;
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
    stream.on('close', () => {
      clearTimeout(timer);
      const exit = exitStatus.get(stream);
      if (exit) {
        exited = true;
        ({ code, signal } = exit);
      }
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
/** The exit status of each exec channel, recorded the moment ssh2 reports it (see openCommand). */
const exitStatus = new WeakMap<ClientChannel, { code: number | null; signal: string | null }>();

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
    /** Called once, when the command has settled (the connection counts the stream as a user until then). */
    private readonly onSettled: () => void = () => undefined,
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
    this.exit = exitStatus.get(this.channel) ?? null;
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
    this.onSettled();
  }
}
