import fs from 'node:fs';
import { nodeTelemetryFiles, type NodeFile } from '@erg/spec/run-dir';

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

/** The paths of the files one agent writes for one node in its spool directory (the run's telemetry folder). */
export function spoolFiles(dir: string, node: string): Record<NodeFile, string> {
  const names = nodeTelemetryFiles(node);
  return { spool: `${dir}/${names.spool}`, acked: `${dir}/${names.acked}`, meta: `${dir}/${names.meta}`, ready: `${dir}/${names.ready}`, stats: `${dir}/${names.stats}` };
}
