/**
 * Reading the files a job controls: everything in a run's directory once the job has run in it
 * (stdout.log, stderr.log, erg.timing, erg.idle, telemetry spools). The job may have replaced
 * any of them with something else, by accident or on purpose, and erg must not stall, follow it
 * elsewhere or read without end. So a job file is never read over SFTP (OpenSSH's sftp-server
 * serves one request at a time and blocks in open() on a FIFO, holding up every later request of
 * the connection, and follows symlinks), but by one remote command per read:
 *
 *   timeout -s KILL <deadline> sh -c '<stat, then dd>' …
 *
 * - `stat` (no -L: the link itself) says what the path is. Only a regular file is read; a
 *   directory, FIFO, socket, device or symbolic link is refused, and so is a directory on the way
 *   that is a symbolic link (the run directory itself included).
 * - A regular file of at least SPARSE_MIN_BYTES whose allocated blocks are under 1/SPARSE_RATIO
 *   of its size is mostly holes (`truncate -s 1T stdout.log`) and refused. Compressing file
 *   systems store text at most ~256× smaller (ZFS: one 512-byte sector per 128 KiB record), so
 *   real logs are never taken for sparse ones.
 * - `dd iflag=nofollow,nonblock,skip_bytes,count_bytes` reads at most the bytes asked for:
 *   nofollow fails on a symlink swapped in after the stat, nonblock returns at once from a FIFO
 *   instead of waiting for a writer; the count caps a file that grew.
 * - `timeout` kills the whole process group at the deadline, so the channel closes whatever the
 *   file system does; the client's own deadline (a few seconds later) covers a login node where
 *   even that fails. Needs GNU coreutils (timeout, stat -c, dd with those flags: 8.20 or later).
 *
 * The command prints one header line (`erg-file <what> <size> <allocated> <start> <count>`) and
 * then the bytes, which arrive as a stream under SSH flow control: memory is bounded by the
 * channel's window, whatever the file's size.
 */
import { JobFileReadError, JobFileRefusedError, SshTimeoutError, type JobFileRefusalReason } from './errors';
import { shellQuote } from './shell';
import type { ExecStream, ExecStreamOptions } from './streamed-command';

/** What runs the remote command; ClusterConnection in production. */
export interface StreamRunner {
  readonly hostPort: string;
  execStream(command: string, options?: ExecStreamOptions): Promise<ExecStream>;
}

/** Regular files at least this large are checked for holes. Smaller ones may legitimately have no blocks (inline data). */
export const SPARSE_MIN_BYTES = 16 * 1024 * 1024;
/** A file whose size is over this many times its allocated bytes is "mostly holes". */
export const SPARSE_RATIO = 1024;
/** The client's deadline is the remote one plus this, so that `timeout` normally acts first. */
const CLIENT_GRACE_MS = 5_000;
const MAX_HEADER_BYTES = 4096;

export interface JobFileRequest {
  /** The run directory: it and every directory between it and the file must be real directories. */
  runDir: string;
  /** The file, relative to runDir: `stdout.log`, `telemetry/node1.spool`. */
  file: string;
  /** `start`: from `offset` forward (default); `end`: the last `maxBytes` bytes. */
  from?: 'start' | 'end';
  /** First byte read, with `from: 'start'`. Default 0. */
  offset?: number;
  /** Most bytes read. */
  maxBytes: number;
  /** Deadline of the whole read, streaming included (ms). */
  timeoutMs: number;
}

/** What a regular file's header said, and the part of it being read. */
export interface JobFileWindow {
  /** Size of the whole file when it was looked at. */
  size: number;
  /** Bytes the file system allocated to it. */
  allocated: number;
  /** First byte of the part read. */
  start: number;
  /** Bytes in the part read (the stream may end early if the file shrank). */
  length: number;
}

export type JobFile =
  | { status: 'missing' }
  | { status: 'refused'; error: JobFileRefusedError }
  | ({
      status: 'open';
      /**
       * The bytes of [start, start + length), as they arrive. Iterate it to the end, or break
       * out (which stops the remote command). Throws JobFileRefusedError when the file turned
       * out unreadable mid-way, SshTimeoutError at the deadline, or an SSH error.
       */
      chunks: AsyncIterable<Buffer>;
    } & JobFileWindow);

export type JobFileContent =
  | { status: 'missing' }
  | { status: 'refused'; error: JobFileRefusedError }
  | ({ status: 'read'; data: Buffer; text: string; truncated: boolean } & JobFileWindow);

// What the remote script prints as <what> for each file type of stat's %f (st_mode, in hex).
const KINDS: Record<string, string> = {
  directory: 'a directory',
  fifo: 'a FIFO',
  symlink: 'a symbolic link',
  socket: 'a socket',
  'character-device': 'a character device',
  'block-device': 'a block device',
  other: 'not a regular file',
};

// POSIX sh, one line (no `!`: csh-family login shells expand it even inside single quotes).
// $1 file, $2 from, $3 offset, $4 max bytes, $5 sparse minimum, $6 sparse ratio, then the directories to check.
const SCRIPT = [
  'p=$1; from=$2; off=$3; max=$4; smin=$5; ratio=$6; shift 6;',
  'for d in "$@"; do if [ -L "$d" ]; then printf "erg-file link-in-path 0 0 0 0 %s\\n" "$d"; exit 0; fi; done;',
  'if st=$(LC_ALL=C stat -c "%f %s %b %B" -- "$p" 2>&1); then :; else',
  '  if [ -e "$p" ]; then printf "erg-file unreadable 0 0 0 0 %s\\n" "$st"; else echo "erg-file missing 0 0 0 0"; fi; exit 0;',
  'fi;',
  'set -- $st; size=$2; alloc=$(( $3 * $4 ));',
  'case $(( 0x$1 & 61440 )) in 32768) v=regular;; 16384) v=directory;; 4096) v=fifo;; 40960) v=symlink;;',
  '  49152) v=socket;; 8192) v=character-device;; 24576) v=block-device;; *) v=other;; esac;',
  'if [ "$v" = regular ] && [ "$size" -ge "$smin" ] && [ $(( alloc * ratio )) -lt "$size" ]; then v=sparse; fi;',
  'if [ "$from" = end ]; then start=$(( size > max ? size - max : 0 )); else start=$(( off < size ? off : size )); fi;',
  'count=$(( size - start < max ? size - start : max ));',
  'if [ "$v" = regular ]; then :; else count=0; fi;',
  'printf "erg-file %s %s %s %s %s\\n" "$v" "$size" "$alloc" "$start" "$count";',
  'if [ "$count" -gt 0 ]; then exec dd if="$p" iflag=nofollow,nonblock,skip_bytes,count_bytes skip="$start" count="$count" bs=262144 status=none; fi',
].join(' ');

/** The remote command for one read (exported for tests). */
export function jobFileCommand(request: JobFileRequest): string {
  const { runDir, file } = request;
  const parts = file.split('/');
  if (!runDir.startsWith('/') || file.startsWith('/') || parts.some((p) => p === '' || p === '.' || p === '..')) {
    throw new RangeError(`job file must be a relative path inside an absolute run directory, got ${JSON.stringify(file)} in ${JSON.stringify(runDir)}`);
  }
  const dirs = [runDir];
  for (const part of parts.slice(0, -1)) dirs.push(`${dirs[dirs.length - 1]}/${part}`);
  const seconds = Math.max(1, Math.ceil(request.timeoutMs / 1000));
  const args = [
    `${runDir}/${file}`, request.from ?? 'start', String(Math.max(0, Math.floor(request.offset ?? 0))), String(Math.max(0, Math.floor(request.maxBytes))),
    String(SPARSE_MIN_BYTES), String(SPARSE_RATIO), ...dirs,
  ];
  return `timeout -s KILL ${seconds} sh -c ${shellQuote(SCRIPT)} erg-read ${args.map(shellQuote).join(' ')}`;
}

/**
 * Opens a job file for streaming. `missing` and `refused` are answers, not errors: a job that
 * never ran has no stdout.log, and a refusal is the run's fault, to be shown as its reason.
 * SSH and remote failures (unreachable, timeout, tools missing) throw.
 */
export async function openJobFile(runner: StreamRunner, request: JobFileRequest): Promise<JobFile> {
  const command = jobFileCommand(request);
  const exec = await runner.execStream(command, { timeoutMs: request.timeoutMs + CLIENT_GRACE_MS, maxStderrBytes: 4096 });
  const source = exec.stdout[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let header: { line: string; rest: Buffer };
  try {
    header = await readHeader(source);
  } catch (err) {
    await source.return?.();
    throw await explainFailure(runner.hostPort, request, exec, err);
  }
  const [what = '', size = '0', allocated = '0', start = '0', count = '0', ...detail] = header.line.split(' ').slice(1);
  const window: JobFileWindow = { size: Number(size), allocated: Number(allocated), start: Number(start), length: Number(count) };
  if (what !== 'regular') {
    await source.return?.();
    if (what === 'missing') return { status: 'missing' };
    return { status: 'refused', error: refusal(request.file, what, window, detail.join(' ')) };
  }
  return { status: 'open', ...window, chunks: streamRest(runner.hostPort, request, exec, source, header.rest) };
}

/** Reads (part of) a job file into memory: for small files (erg.timing) and bounded tails. */
export async function readJobFile(runner: StreamRunner, request: JobFileRequest): Promise<JobFileContent> {
  const file = await openJobFile(runner, request);
  if (file.status !== 'open') return file;
  const parts: Buffer[] = [];
  try {
    for await (const chunk of file.chunks) parts.push(chunk);
  } catch (err) {
    // Refused mid-way (swapped after the check): the same answer as refused at once.
    if (err instanceof JobFileRefusedError) return { status: 'refused', error: err };
    throw err;
  }
  const data = Buffer.concat(parts);
  const { chunks: _chunks, status: _status, ...window } = file;
  return { status: 'read', ...window, data, text: data.toString('utf8'), truncated: window.start > 0 || window.start + data.length < window.size };
}

async function readHeader(source: AsyncIterator<Buffer>): Promise<{ line: string; rest: Buffer }> {
  let buffered = Buffer.alloc(0);
  for (;;) {
    const newline = buffered.indexOf(10);
    if (newline >= 0) return { line: buffered.subarray(0, newline).toString('utf8'), rest: buffered.subarray(newline + 1) };
    if (buffered.length > MAX_HEADER_BYTES) throw new Error('the reading command printed no header line');
    const next = await source.next();
    if (next.done) throw new Error('the reading command ended before its header line');
    buffered = Buffer.concat([buffered, next.value]);
  }
}

async function* streamRest(hostPort: string, request: JobFileRequest, exec: ExecStream, source: AsyncIterator<Buffer>, first: Buffer): AsyncGenerator<Buffer> {
  let ended = false;
  try {
    if (first.length > 0) yield first;
    for (;;) {
      let next: IteratorResult<Buffer>;
      try {
        next = await source.next();
      } catch (err) {
        throw await explainFailure(hostPort, request, exec, err);
      }
      if (next.done) break;
      yield next.value;
    }
    ended = true;
    const exit = await exec.done;
    if (exit.code === 0) return;
    throw (
      exitError(hostPort, request, exit) ??
      // The header said "regular file", then dd failed: the job swapped the file (a symlink now
      // fails nofollow, a directory EISDIR) or made it unreadable.
      new JobFileRefusedError(request.file, 'unreadable', `${request.file} could not be read (${exit.stderr.trim() || `exit ${exit.code ?? exit.signal}`}); erg reads job output only from regular files`)
    );
  } finally {
    // A reader that stopped early: stop the remote dd too.
    if (!ended) await source.return?.();
  }
}

/** Why a stream failed: the deadline (said as such), a missing tool, else what the SSH layer said. */
async function explainFailure(hostPort: string, request: JobFileRequest, exec: ExecStream, err: unknown): Promise<unknown> {
  if (err instanceof SshTimeoutError) return new SshTimeoutError(hostPort, request.timeoutMs, `read ${request.runDir}/${request.file}`);
  const exit = await exec.done.catch(() => null);
  if (!exit) return err;
  return exitError(hostPort, request, exit) ?? new JobFileReadError(hostPort, `${request.runDir}/${request.file}`, `${(err as Error).message} (exit ${exit.code ?? exit.signal}: ${exit.stderr.trim()})`);
}

/** The failures an exit status itself explains: killed at the deadline, or a tool not found. */
function exitError(hostPort: string, request: JobFileRequest, exit: { code: number | null; signal: string | null; stderr: string }): Error | null {
  const where = `${request.runDir}/${request.file}`;
  if (isKilledByDeadline(exit)) return new SshTimeoutError(hostPort, request.timeoutMs, `read ${where}`);
  if (exit.code === 127) return new JobFileReadError(hostPort, where, `a tool is missing on the login node (erg needs GNU coreutils timeout, stat and dd): ${exit.stderr.trim()}`);
  return null;
}

/** GNU timeout -s KILL kills its process group, itself included: exit 137, or the signal itself (ssh2 says `SIGKILL`). */
function isKilledByDeadline(exit: { code: number | null; signal: string | null }): boolean {
  return exit.code === 137 || exit.code === 124 || exit.signal === 'SIGKILL' || exit.signal === 'KILL';
}

function refusal(file: string, what: string, window: JobFileWindow, detail: string): JobFileRefusedError {
  const reason: JobFileRefusalReason = what === 'sparse' ? 'sparse' : what === 'link-in-path' ? 'link-in-path' : what === 'unreadable' ? 'unreadable' : 'not-regular';
  switch (reason) {
    case 'sparse':
      return new JobFileRefusedError(
        file, reason,
        `${file} is a sparse file of ${formatSize(window.size)} with only ${formatSize(window.allocated)} allocated; erg does not read files that are mostly holes`,
      );
    case 'link-in-path':
      return new JobFileRefusedError(file, reason, `${file} lies under a symbolic link (${detail}); erg does not follow links in a run directory`);
    case 'unreadable':
      return new JobFileRefusedError(file, reason, `${file} cannot be examined (${detail}); erg reads job output only from regular files it can read`);
    default:
      if (what === 'symlink') return new JobFileRefusedError(file, reason, `${file} is a symbolic link, not a regular file; erg does not follow links in a run directory`);
      return new JobFileRefusedError(file, reason, `${file} is ${KINDS[what] ?? KINDS.other}, not a regular file; erg reads job output only from regular files`);
  }
}

/** 1.0 TiB, 812 MiB, 4.0 KiB: sizes in the binary units people read in `ls -lh`. */
export function formatSize(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  if (unit === 0) return `${bytes} B`;
  return `${value >= 100 || Number.isInteger(value) ? Math.round(value) : value.toFixed(1)} ${units[unit]}`;
}
