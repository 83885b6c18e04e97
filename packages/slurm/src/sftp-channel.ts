/**
 * SftpChannel: a session's one long-lived SFTP channel, shared by every caller (staging files,
 * reading results erg itself wrote), each request under a deadline.
 *
 * Why one channel, opened on first use and kept: it holds one channel permit for as long as it
 * lives, so SFTP never competes with exec for more than one of sshd's MaxSessions slots.
 * Why a deadline per request, and a channel given up when one passes: OpenSSH's sftp-server
 * answers one request at a time, so one that hangs (an open() of a FIFO blocks until a writer
 * appears) would hold every later request of that channel.
 */
import path from 'node:path';
import type { SFTPWrapper, Stats } from 'ssh2';
import { SftpError, SshTimeoutError } from './errors';
import type { RenderedFile } from './render';
import type { Session } from './session';

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

const SFTP_NO_SUCH_FILE = 2;
const SFTP_EOF = 1;
const READ_CHUNK = 64 * 1024;

/** Refuses, before anything is sent, a target directory or file names that would write outside it. */
export function checkWriteTargets(hostPort: string, dir: string, files: readonly RenderedFile[]): void {
  if (!path.posix.isAbsolute(dir)) throw new SftpError(hostPort, 'writeFiles', dir, { cause: new Error('directory must be absolute') });
  for (const file of files) {
    const parts = file.name.split('/');
    if (file.name.startsWith('/') || parts.some((p) => p === '' || p === '.' || p === '..')) {
      throw new SftpError(hostPort, 'writeFiles', file.name, { cause: new Error('file name must be a relative path inside the directory') });
    }
  }
}

export class SftpChannel {
  private constructor(
    private readonly session: Session,
    private readonly sftp: SFTPWrapper,
    private readonly timeoutMs: number,
    /** Gives the channel up (see open): later calls open a new one. */
    private readonly discard: () => void,
  ) {}

  /** The session's SFTP channel, opened on first use and kept (it holds one channel permit). */
  static of(session: Session, timeoutMs: number): Promise<SftpChannel> {
    if (!session.sftp) {
      const opening: Promise<SftpChannel> = SftpChannel.open(session, timeoutMs, () => {
        if (session.sftp === opening) session.sftp = null;
      });
      session.sftp = opening;
    }
    return session.sftp;
  }

  private static async open(session: Session, timeoutMs: number, forget: () => void): Promise<SftpChannel> {
    const release = await session.acquireChannel();
    try {
      const sftp = await session.track<SFTPWrapper>((resolve, reject) =>
        session.client.sftp((err, s) => (err ? reject(session.channelOpenError(err)) : resolve(s))),
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
      return new SftpChannel(session, sftp, timeoutMs, () => {
        forget();
        release();
        sftp.end();
      });
    } catch (err) {
      release();
      forget();
      throw err;
    }
  }

  /**
   * Creates `dir` (and parents; with `dirMode` when given, less the server's umask) and writes
   * every file into it with its mode, all writes in flight at once. Existing files are
   * overwritten. Check the names first (checkWriteTargets).
   */
  async writeFiles(dir: string, files: readonly RenderedFile[], dirMode?: number): Promise<void> {
    const sftp = this.sftp;
    const dirs = new Set([dir, ...files.map((f) => path.posix.dirname(path.posix.join(dir, f.name)))]);
    for (const d of [...dirs].sort()) await this.ensureDir(d, dirMode);
    // The writes share the channel: each gets the time all of them take at the slowest rate accepted.
    const deadlineMs = writeDeadlineMs(this.timeoutMs, files.reduce((n, f) => n + Buffer.byteLength(f.content), 0));
    await Promise.all(
      files.map(async (file) => {
        const target = path.posix.join(dir, file.name);
        await this.call<void>('write', target, (cb) => sftp.writeFile(target, file.content, { mode: file.mode }, cb), deadlineMs);
        // open() applies the mode only to new files, minus the server's umask: set it explicitly.
        await this.call<void>('chmod', target, (cb) => sftp.chmod(target, file.mode, cb));
      }),
    );
  }

  /** Reads (part of) a remote file; null when it does not exist. */
  async readFile(remotePath: string, options: ReadFileOptions = {}): Promise<ReadFileResult | null> {
    const maxBytes = options.maxBytes ?? 1024 * 1024;
    const sftp = this.sftp;
    let handle: Buffer;
    try {
      handle = await this.call<Buffer>('open', remotePath, (cb) => sftp.open(remotePath, 'r', cb));
    } catch (err) {
      if (err instanceof SftpError && sftpCode(err.cause) === SFTP_NO_SUCH_FILE) return null;
      throw err;
    }
    try {
      const stats = await this.call<Stats>('fstat', remotePath, (cb) => sftp.fstat(handle, cb));
      const size = stats.size;
      const start = options.fromEnd ? Math.max(0, size - maxBytes) : 0;
      const want = Math.min(maxBytes, Math.max(0, size - start));
      const data = Buffer.alloc(want);
      let got = 0;
      while (got < want) {
        const n = await this.call<number>('read', remotePath, (cb) =>
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

  /**
   * One SFTP request as a promise; failures become SftpError (or the session's end error). A
   * request unanswered after the deadline fails with SshTimeoutError and its channel is
   * discarded (see the header).
   */
  private call<T>(
    operation: string, remotePath: string, request: (cb: (err: Error | null | undefined, value?: T) => void) => void, timeoutMs = this.timeoutMs,
  ): Promise<T> {
    const session = this.session;
    return session.track<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.discard();
        reject(new SshTimeoutError(session.hostPort, timeoutMs, `SFTP ${operation} ${remotePath}`));
      }, timeoutMs);
      request((err, value) => {
        clearTimeout(timer);
        if (err) reject(session.alive ? new SftpError(session.hostPort, operation, remotePath, { cause: err }) : session.endedBy);
        else resolve(value as T);
      });
    });
  }

  /** mkdir -p over SFTP; the folders it creates get `mode` (less the server's umask) when given. */
  private async ensureDir(dir: string, mode?: number): Promise<void> {
    const sftp = this.sftp;
    const isDir = await this.call<Stats>('stat', dir, (cb) => sftp.stat(dir, cb)).then(
      (stats) => stats.isDirectory(),
      (err: unknown) => {
        if (err instanceof SftpError && sftpCode(err.cause) === SFTP_NO_SUCH_FILE) return null;
        throw err;
      },
    );
    if (isDir === true) return;
    if (isDir === false) throw new SftpError(this.session.hostPort, 'mkdir', dir, { cause: new Error('exists and is not a directory') });
    const parent = path.posix.dirname(dir);
    if (parent !== dir) await this.ensureDir(parent, mode);
    try {
      await this.call<void>('mkdir', dir, (cb) => (mode === undefined ? sftp.mkdir(dir, cb) : sftp.mkdir(dir, { mode }, cb)));
    } catch (err) {
      // Another writer may have created it between our stat and mkdir.
      const again = await this.call<Stats>('stat', dir, (cb) => sftp.stat(dir, cb)).catch(() => null);
      if (!again?.isDirectory()) throw err;
    }
  }
}

function sftpCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** The slowest upload erg waits for (bytes per second): a large file (the agent runtime's ~50 MB tarballs) over a slow link still arrives. */
export const MIN_UPLOAD_BYTES_PER_S = 256 * 1024;

/** An SFTP write's deadline: the request deadline, plus the time `bytes` take at MIN_UPLOAD_BYTES_PER_S. */
export function writeDeadlineMs(baseMs: number, bytes: number): number {
  return baseMs + Math.ceil((bytes / MIN_UPLOAD_BYTES_PER_S) * 1000);
}
