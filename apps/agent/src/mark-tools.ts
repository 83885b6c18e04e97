// The phase-mark writers a workload calls — the `erg-mark` shell command and the `erg` Python
// module (apps/agent/marks) — as files for the scheduler to stage beside the agent bundle. They
// append lines of the format in @erg/spec/marks to $ERG_MARKS_DIR/<hostname>.marks, which the
// agent on the node tails. The job puts `<dir>/bin` on PATH and `<dir>/python` on PYTHONPATH.
import path from 'node:path';

/** One file to stage: where it goes under the staged tools folder, where it is here, its mode. */
export interface MarkToolFile {
  /** Path under the staged folder, `/`-separated: `bin/erg-mark`, `python/erg.py`. */
  relPath: string;
  /** Absolute path of the file in this package (apps/agent/marks). */
  source: string;
  /** File mode to stage it with. */
  mode: number;
}

// Resolved from the package folder at runtime (src/ under Jest, dist/ when built: both one below it).
const MARKS_DIR = path.resolve(__dirname, '..', 'marks');

/** The mark writers to stage: `bin/erg-mark` (executable) and `python/erg.py`. */
export const MARK_TOOL_FILES: readonly MarkToolFile[] = Object.freeze([
  Object.freeze({ relPath: 'bin/erg-mark', source: path.join(MARKS_DIR, 'erg-mark'), mode: 0o755 }),
  Object.freeze({ relPath: 'python/erg.py', source: path.join(MARKS_DIR, 'erg.py'), mode: 0o644 }),
]);
