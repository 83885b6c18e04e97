import fs from 'node:fs';

/** Writes a file atomically: a temporary file beside it, then rename over it. */
export function writeFileAtomic(file: string, data: string, options: { fsync?: boolean } = {}): void {
  const tmp = `${file}.tmp-${process.pid}`;
  const fd = fs.openSync(tmp, 'w');
  try {
    fs.writeSync(fd, data);
    if (options.fsync) fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
}

/** The files one agent writes for one node in its spool directory. */
export function spoolFiles(dir: string, node: string) {
  const base = `${dir}/${node}`;
  return {
    spool: `${base}.spool`,
    acked: `${base}.acked`,
    meta: `${base}.meta.json`,
    ready: `${base}.ready`,
    stats: `${base}.stats.json`,
  };
}
