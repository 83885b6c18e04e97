import type { TrackedRun } from '@erg/db';
import { formatSize, JobFileRefusedError, openJobFile, readJobFile, shellQuote } from '@erg/slurm';
import {
  decodeTelemetryValue, NODE_FILE_SUFFIXES, nodeTelemetryFiles, parseAcked, readSpool, RUN_DIR_FILES, sampleTimeBounds, spoolNode, type SampleTimeBounds,
} from '@erg/spec';
import type { ClusterLink } from './connections';
import type { SchedulerContext } from './context';

const TELEMETRY = RUN_DIR_FILES.telemetryDir;

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
  if (listing.spools.length > maxFiles) {
    outcome.warnings.push(`${TELEMETRY} holds more than ${maxFiles} spool files; only ${maxFiles} were read (ERG_SPOOL_MAX_FILES)`);
  }
  for (const { name, node } of listing.spools.slice(0, maxFiles)) {
    const acked = await readJobFile(link.connection, { runDir, file: `${TELEMETRY}/${nodeTelemetryFiles(node).acked}`, maxBytes: 64, timeoutMs });
    if (acked.status === 'refused') {
      outcome.problems.push(acked.error.message);
      continue;
    }
    const ackedSeq = parseAcked(acked.status === 'read' ? acked.text : null);
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
  // Read from the middle, the first line is cut: readSpool passes it over, not worth a warning.
  for await (const line of readSpool(chunks, { startsMidLine, ackedSeq })) {
    if (line.kind === 'unreadable') {
      skipped++;
      continue;
    }
    // The spool is the job's to write: the same limits and checks as the API's ingest.
    const decoded = decodeTelemetryValue(line.value, bounds);
    if (!decoded.ok) {
      ctx.log.warn({ runId: run.id, node, seq: line.seq, issues: decoded.issues.slice(0, 3) }, 'spooled batch refused');
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
export function spoolSampleBounds(run: Pick<TrackedRun, 'createdAt'>, endedAt: Date, now: number = Date.now()): SampleTimeBounds {
  return sampleTimeBounds({ createdAt: run.createdAt, endedAt, imported: false }, now);
}

/**
 * The spool files of the run, by name (one more than `maxFiles` at most, to tell there were more).
 * `find -P` lists only regular files and never enters a symlink; a telemetry folder that is itself
 * a symlink is reported as such.
 */
async function listSpools(
  link: ClusterLink,
  runDir: string,
  maxFiles: number,
  timeoutMs: number,
): Promise<{ linked: boolean; spools: { name: string; node: string }[] }> {
  const dir = shellQuote(`${runDir}/${TELEMETRY}`);
  const seconds = Math.max(1, Math.ceil(timeoutMs / 1000));
  const command =
    `if [ -L ${dir} ]; then echo erg-linked; elif [ -d ${dir} ]; then ` +
    `timeout -s KILL ${seconds} find -P ${dir} -mindepth 1 -maxdepth 1 -type f -name ${shellQuote(`*${NODE_FILE_SUFFIXES.spool}`)} | head -n ${maxFiles + 1}; fi`;
  const result = await link.connection.exec(command, { timeoutMs: timeoutMs + 5000, maxOutputBytes: (maxFiles + 1) * 512 + 64 });
  if (result.stdout.startsWith('erg-linked')) return { linked: true, spools: [] };
  const spools = result.stdout.split('\n').flatMap((p) => {
    const name = p.slice(p.lastIndexOf('/') + 1);
    const node = spoolNode(name);
    return node === null ? [] : [{ name, node }];
  });
  return { linked: false, spools };
}
