/**
 * Staging many files in one remote command: the files of a whole submission batch (every run's
 * directory, every array's dispatcher) travel as one gzip'd tar on the stdin of one `tar -x` on
 * the login node. Over SFTP each file costs several round trips (open, write, close, chmod) and
 * each directory a stat/mkdir; for 10,000 runs that is the difference between seconds and minutes.
 * Packing runs off the event loop (zlib's thread pool), and nothing in the archive comes from a
 * user: names are erg's run-directory layout, checked here again.
 */
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { pack } from 'tar-stream';
import { DEFAULT_RUN_UMASK, maskedMode, umaskCommand } from '@erg/spec';
import { InvalidCommandInputError } from './errors';
import { shellQuote } from './shell';

const gzipAsync = promisify(gzip);

/** One entry of a staging archive, its name relative to the base folder. */
export type StageEntry = { name: string; content: string | Buffer; mode: number } | { name: string; linkTo: string };

/** What the base folder and entry names may be: erg's own paths, nothing a shell or tar reads specially. */
const SAFE_PATH_SEGMENT = /^[A-Za-z0-9._,:=+@-]+$/;

function checkName(name: string): void {
  const parts = name.split('/');
  if (name.startsWith('/') || parts.some((p) => p === '.' || p === '..' || !SAFE_PATH_SEGMENT.test(p))) {
    throw new InvalidCommandInputError('entries', `contains ${JSON.stringify(name)}: need a relative path of plain segments`);
  }
}

/**
 * The archive, gzip'd: explicit folders first, then files and links in the given order. Every
 * mode is as created under `umask` (@erg/spec's run-dir file modes): folders 0777, files their
 * own mode, less the umask — by default 0700 and 0600 (0755 scripts become 0700), so that other
 * users of the cluster's filesystem read nothing of a run.
 */
export async function stageArchive(entries: readonly StageEntry[], umask: number = DEFAULT_RUN_UMASK): Promise<Buffer> {
  const tar = pack();
  const chunks: Buffer[] = [];
  tar.on('data', (chunk: unknown) => chunks.push(chunk as Buffer));
  const ended = new Promise<void>((resolve, reject) => {
    tar.on('end', () => resolve());
    tar.on('error', reject);
  });
  const dirs = new Set<string>();
  for (const e of entries) {
    checkName(e.name);
    const parts = e.name.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
  }
  const mtime = new Date();
  for (const dir of [...dirs].sort()) tar.entry({ name: `${dir}/`, type: 'directory', mode: maskedMode(0o777, umask), mtime });
  for (const e of entries) {
    if ('linkTo' in e) tar.entry({ name: e.name, type: 'symlink', linkname: e.linkTo, mode: 0o777, mtime });
    else tar.entry({ name: e.name, type: 'file', mode: maskedMode(e.mode, umask), mtime }, typeof e.content === 'string' ? Buffer.from(e.content, 'utf8') : e.content);
  }
  tar.finalize();
  await ended;
  return gzipAsync(Buffer.concat(chunks), { level: 1 });
}

/**
 * The remote command that unpacks a staging archive (on its stdin) into `baseDir`, creating it
 * (and its parents) under `umask`. `--no-same-owner`: erg's login user owns what it stages, also
 * when that user is root; modes are kept as the archive gives them (stageArchive masked them).
 */
export function stageCommand(baseDir: string, umask: number = DEFAULT_RUN_UMASK): string {
  if (!baseDir.startsWith('/') || baseDir.split('/').slice(1).some((p) => !SAFE_PATH_SEGMENT.test(p) || p === '.' || p === '..')) {
    throw new InvalidCommandInputError('baseDir', `${JSON.stringify(baseDir)} must be an absolute path of plain segments`);
  }
  const dir = shellQuote(baseDir);
  return `${umaskCommand(umask)} && mkdir -p ${dir} && gzip -dc | tar -x --no-same-owner -p -f - -C ${dir}`;
}
