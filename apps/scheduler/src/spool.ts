import type { TrackedRun } from '@erg/db';
import { formatSize, JobFileRefusedError, openJobFile, readJobFile, shellQuote } from '@erg/slurm';
import { decodeTelemetryValue, RUN_DIR_FILES, sampleTimeBounds, type SampleTimeBounds } from '@erg/spec';
import type { ClusterLink } from './connections';
import type { SchedulerContext } from './context';

/** A spooled batch is one line; the agent's are far smaller. Longer lines are skipped, not parsed. */
const MAX_LINE_BYTES = 4 * 1024 * 1024;
const TELEMETRY = RUN_DIR_FILES.telemetryDir;
/** `telemetry/<node>.spool`: node names as the agent writes them. */
const SPOOL_NAME = /^[A-Za-z0-9._-]+\.spool$/;

export interface SpoolOutcome {
  batches: number;
  samples: number;
  /** Files of the spool erg refused to read (the job's doing): the run fails with these. */
  problems: string[];
  /** What could not be read in full. */
  warnings: string[];
}

/**
 * Ingests what the run's agents spooled but the API never acknowledged (the API was down, or the
 * nodes cannot reach it): `<runDir>/telemetry/<node>.spool` holds one batch per line, and
 * `<node>.acked` the highest seq up to which every batch was acknowledged. Ingest is idempotent,
 * so a batch that did arrive but whose acknowledgement was lost is harmless.
 *
 * The spool lies in the job's directory, so it is read like any job file (never followed, never
 * waited on), and bounded: at most ERG_SPOOL_MAX_FILES files, the last ERG_SPOOL_MAX_BYTES of
 * each, streamed line by line. Lines that are not batches (one cut by a crash mid-write) are skipped.
 */
export async function pullSpool(ctx: SchedulerContext, link: ClusterLink, run: TrackedRun, endedAt: Date): Promise<SpoolOutcome> {
  const outcome: SpoolOutcome = { batches: 0, samples: 0, problems: [], warnings: [] };
  if (!run.runDir) return outcome;
  const runDir = run.runDir;
  const { ERG_SPOOL_MAX_FILES: maxFiles, ERG_SPOOL_MAX_BYTES: maxBytes, ERG_RUN_FILE_TIMEOUT_MS: timeoutMs } = ctx.config;
  const listing = await listSpools(link, runDir, maxFiles, timeoutMs);
  if (listing.linked) {
    outcome.problems.push(`${TELEMETRY} is a symbolic link, not a directory; erg does not follow links in a run directory`);
    return outcome;
  }
  if (listing.names.length > maxFiles) {
    outcome.warnings.push(`${TELEMETRY} holds more than ${maxFiles} spool files; only ${maxFiles} were read (ERG_SPOOL_MAX_FILES)`);
  }
  for (const name of listing.names.slice(0, maxFiles)) {
    const node = name.slice(0, -'.spool'.length);
    const acked = await readJobFile(link.connection, { runDir, file: `${TELEMETRY}/${node}.acked`, maxBytes: 64, timeoutMs });
    if (acked.status === 'refused') {
      outcome.problems.push(acked.error.message);
      continue;
    }
    const ackedSeq = acked.status === 'read' ? Number.parseInt(acked.text.trim(), 10) : -1;
    const spool = await openJobFile(link.connection, { runDir, file: `${TELEMETRY}/${name}`, from: 'end', maxBytes, timeoutMs });
    if (spool.status === 'missing') continue;
    if (spool.status === 'refused') {
      outcome.problems.push(spool.error.message);
      continue;
    }
    if (spool.start > 0) outcome.warnings.push(`${TELEMETRY}/${name} is ${formatSize(spool.size)}; only its last ${formatSize(spool.length)} were read (ERG_SPOOL_MAX_BYTES)`);
    let skipped: number;
    try {
      skipped = await ingestLines(ctx, run, node, spool.chunks, { startsMidLine: spool.start > 0, ackedSeq, bounds: spoolSampleBounds(run, endedAt) }, outcome);
    } catch (err) {
      // Swapped for something else while erg read it.
      if (!(err instanceof JobFileRefusedError)) throw err;
      outcome.problems.push(err.message);
      continue;
    }
    // One cut line is what a crash mid-write leaves; more is worth saying.
    if (skipped > 1) outcome.warnings.push(`${TELEMETRY}/${name}: ${skipped} lines were not valid telemetry batches and were skipped`);
  }
  return outcome;
}

/** Ingests the spooled batches above `ackedSeq`; returns how many lines were not valid batches. */
async function ingestLines(
  ctx: SchedulerContext,
  run: TrackedRun,
  node: string,
  chunks: AsyncIterable<Buffer>,
  { startsMidLine, ackedSeq, bounds }: { startsMidLine: boolean; ackedSeq: number; bounds: SampleTimeBounds },
  outcome: SpoolOutcome,
): Promise<number> {
  let skipped = 0;
  // Read from the middle, the first line is cut: not a batch, and not worth a warning.
  let first = startsMidLine;
  for await (const line of lines(chunks)) {
    const cut = first;
    first = false;
    if (cut) continue;
    if (line === null) {
      skipped++;
      continue;
    }
    if (line.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      skipped++;
      continue;
    }
    // Acknowledged batches are passed over before any validation: most of a spool is those.
    const seq = (parsed as { seq?: unknown } | null)?.seq;
    if (typeof seq === 'number' && seq <= ackedSeq) continue;
    // The spool is the job's to write: the same limits and checks as the API's ingest.
    const decoded = decodeTelemetryValue(parsed, bounds);
    if (!decoded.ok) {
      ctx.log.warn({ runId: run.id, node, seq, issues: decoded.issues.slice(0, 3) }, 'spooled batch refused');
      skipped++;
      continue;
    }
    const result = await ctx.telemetry.write(run.id, decoded.batch);
    if (!result.duplicate) {
      outcome.batches++;
      outcome.samples += result.accepted;
    }
  }
  return skipped;
}

/**
 * The times a spooled sample of `run`, whose job ended at `endedAt`, may carry: the API's window
 * for the run as finalizing is about to store it (sampleTimeBounds). A tracked run carries its
 * claim time, not its creation; the claim comes after the creation, so this window is never wider
 * than the API's. (Every tracked run was claimed; were the time missing, its samples are kept.)
 */
export function spoolSampleBounds(run: Pick<TrackedRun, 'claimedAt'>, endedAt: Date, now: number = Date.now()): SampleTimeBounds {
  return sampleTimeBounds({ createdAt: run.claimedAt ?? new Date(0), endedAt, imported: false }, now);
}

/**
 * The spool files of the run, by name (one more than `maxFiles` at most, to tell there were more).
 * `find -P` lists only regular files and never enters a symlink; a telemetry folder that is itself
 * a symlink is reported as such.
 */
async function listSpools(link: ClusterLink, runDir: string, maxFiles: number, timeoutMs: number): Promise<{ linked: boolean; names: string[] }> {
  const dir = shellQuote(`${runDir}/${TELEMETRY}`);
  const seconds = Math.max(1, Math.ceil(timeoutMs / 1000));
  const command =
    `if [ -L ${dir} ]; then echo erg-linked; elif [ -d ${dir} ]; then ` +
    `timeout -s KILL ${seconds} find -P ${dir} -mindepth 1 -maxdepth 1 -type f -name '*.spool' | head -n ${maxFiles + 1}; fi`;
  const result = await link.connection.exec(command, { timeoutMs: timeoutMs + 5000, maxOutputBytes: (maxFiles + 1) * 512 + 64 });
  if (result.stdout.startsWith('erg-linked')) return { linked: true, names: [] };
  const names = result.stdout
    .split('\n')
    .map((p) => p.slice(p.lastIndexOf('/') + 1))
    .filter((f) => SPOOL_NAME.test(f));
  return { linked: false, names };
}

/** The lines of a byte stream as strings; null for a line longer than MAX_LINE_BYTES (skipped, not kept). */
async function* lines(chunks: AsyncIterable<Buffer>): AsyncGenerator<string | null> {
  let parts: Buffer[] = [];
  let length = 0;
  let tooLong = false;
  for await (const chunk of chunks) {
    let from = 0;
    for (let newline = chunk.indexOf(10, from); newline >= 0; newline = chunk.indexOf(10, from)) {
      const piece = chunk.subarray(from, newline);
      if (tooLong || length + piece.length > MAX_LINE_BYTES) yield null;
      else yield Buffer.concat([...parts, piece]).toString('utf8');
      parts = [];
      length = 0;
      tooLong = false;
      from = newline + 1;
    }
    const rest = chunk.subarray(from);
    if (tooLong || length + rest.length > MAX_LINE_BYTES) {
      tooLong = true;
      parts = [];
    } else if (rest.length > 0) {
      parts.push(Buffer.from(rest));
      length += rest.length;
    }
  }
  if (tooLong) yield null;
  else if (length > 0) yield Buffer.concat(parts).toString('utf8');
}
