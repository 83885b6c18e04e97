/**
 * Phase marks: what a workload writes to say "phase NAME begins / ends here" or "one step is
 * done", and how they travel. The one owner of that contract, without dependencies (no zod): the
 * agent bundles it as `@erg/spec/marks`, the mark writers (apps/agent/marks: the `erg-mark` shell
 * command and the `erg` Python module) write its line format, the API validates batches with it.
 *
 *   workload ──write(2), one line per mark──> <telemetry dir>/<node>.marks
 *   agent on that node ──tails the file──> marks in its next telemetry batch (spool, push, pull)
 *   API ──ingest, idempotent on (run, node, offset)──> run_marks ──> energy per phase
 *
 * A mark never costs the workload a network call: one append to a file on its node (the
 * telemetry folder, which job.sh names in ERG_MARKS_DIR).
 *
 * The line format (version 1), tab-separated, newline-terminated, at most MAX_MARK_LINE_BYTES:
 *
 *   <kind> TAB <name> TAB <wall_ns> TAB <mono_ns> TAB <writer> LF
 *
 *   kind     begin | end | step
 *   name     MARK_NAME; for `step`, the counter's name (`step` when the workload gives none)
 *   wall_ns  Unix time in ns (CLOCK_REALTIME), an integer
 *   mono_ns  CLOCK_MONOTONIC in ns, an integer; `-` where the writer cannot read it (the shell)
 *   writer   who wrote it: `sh` or `py` (a 1-16 character word), for provenance
 *
 * Lines are appended with O_APPEND in one write each, so marks of several processes on one node
 * interleave whole. A line that does not parse is skipped (and counted) by the agent, never
 * fatal: a workload's bug must not cost its telemetry.
 */

/** The kinds of mark. `begin`/`end` bracket a phase (they nest); `step` counts one unit of work. */
export const MARK_KINDS = ['begin', 'end', 'step'] as const;
export type MarkKind = (typeof MARK_KINDS)[number];

/** A phase's (or step counter's) name: a word of letters, digits and `_ . : / -`, 1-64 characters. */
export const MARK_NAME = /^[A-Za-z0-9_.:/-]{1,64}$/;

/** The name a `step` mark gets when the workload names none. */
export const DEFAULT_STEP_NAME = 'step';

/** The longest line a writer may produce (kind, a 64-character name, two 20-digit clocks, writer). */
export const MAX_MARK_LINE_BYTES = 256;

/** What `<node>.marks` is called in the telemetry folder (beside `<node>.spool`). */
export const MARKS_FILE_SUFFIX = '.marks';

/** The environment variable job.sh sets to the folder the writers append `<node>.marks` in. */
export const MARKS_DIR_ENV = 'ERG_MARKS_DIR';

/** The marks file of one node. */
export function marksFileName(node: string): string {
  return `${node}${MARKS_FILE_SUFFIX}`;
}

/** One mark as its line says it. */
export interface MarkLine {
  kind: MarkKind;
  name: string;
  /** Unix ns (CLOCK_REALTIME). */
  wallNs: bigint;
  /** CLOCK_MONOTONIC ns; null where the writer could not read it. */
  monoNs: bigint | null;
  writer: string;
}

const DIGITS = /^\d{1,20}$/;
const WRITER = /^[a-z0-9]{1,16}$/;

/** Parses one line (without its newline); null for anything that is not a version-1 mark. */
export function parseMarkLine(line: string): MarkLine | null {
  if (line.length > MAX_MARK_LINE_BYTES) return null;
  const fields = line.split('\t');
  if (fields.length !== 5) return null;
  const [kind, name, wall, mono, writer] = fields as [string, string, string, string, string];
  if (!(MARK_KINDS as readonly string[]).includes(kind) || !MARK_NAME.test(name)) return null;
  if (!DIGITS.test(wall) || !(mono === '-' || DIGITS.test(mono)) || !WRITER.test(writer)) return null;
  return { kind: kind as MarkKind, name, wallNs: BigInt(wall), monoNs: mono === '-' ? null : BigInt(mono), writer };
}

/** A mark as it travels in a telemetry batch (the agent has put it on its samples' timeline). */
export interface BatchMark {
  /** Byte offset of the mark's line in `<node>.marks`: its identity (ingest keeps the first copy). */
  offset: number;
  kind: MarkKind;
  name: string;
  /** Unix ms on the agent's sample timeline (from mono_ns where the line has it, else wall_ns). */
  t: number;
  /** Which clock `t` came from: `mono` (converted on the node, immune to clock steps) or `wall`. */
  clock: 'mono' | 'wall';
  writer: string;
}

/** Most marks one batch carries; the agent sends the rest with the next ones. */
export const MAX_BATCH_MARKS = 10_000;
/** Most marks erg keeps of one node of one run; an agent stops reading the file past it (and says so). */
export const MAX_NODE_MARKS = 1_000_000;

/**
 * Distinct mark names (phases and step counters together) erg keeps of one run by default: the
 * marks of later names are not stored (docs/security.md § Budgets). Sites change it with
 * ERG_MAX_PHASE_NAMES (MAX_PHASE_NAMES_ENV), set alike for the API and the scheduler; job.sh
 * exports it to the workload, whose `erg` module stops writing marks of names beyond it.
 */
export const DEFAULT_MAX_PHASE_NAMES = 256;

/** The setting's name: the API's and the scheduler's environment, and the workload's (job.sh exports it). */
export const MAX_PHASE_NAMES_ENV = 'ERG_MAX_PHASE_NAMES';
