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

/** The paths of one node's files in the agent's spool directory (the run's telemetry folder): those the agent writes, and the node helper's power record it reads. */
export function spoolFiles(dir: string, node: string): Record<NodeFile, string> {
  const names = nodeTelemetryFiles(node);
  return Object.fromEntries(Object.entries(names).map(([file, name]) => [file, `${dir}/${name}`])) as Record<NodeFile, string>;
}
