import type { TrackedRun } from '@erg/db';
import { normalizeBatch, TelemetryBatch } from '@erg/spec';
import { shellQuote } from '@erg/slurm';
import type { ClusterLink } from './connections';
import type { SchedulerContext } from './context';

/** A spool larger than this is read from its end only (a week of 10 Hz sampling is far less). */
const MAX_SPOOL_BYTES = 512 * 1024 * 1024;

/**
 * Ingests what the run's agents spooled but the API never acknowledged (the API was down, or the
 * nodes cannot reach it): `<runDir>/telemetry/<node>.spool` holds one batch per line, and
 * `<node>.acked` the highest seq up to which every batch was acknowledged. Ingest is idempotent,
 * so a batch that did arrive but whose acknowledgement was lost is harmless.
 */
export async function pullSpool(ctx: SchedulerContext, link: ClusterLink, run: TrackedRun): Promise<{ batches: number; samples: number }> {
  if (!run.runDir) return { batches: 0, samples: 0 };
  const dir = `${run.runDir}/telemetry`;
  const listing = await link.connection.exec(`cd ${shellQuote(dir)} 2>/dev/null && ls -1`);
  const spools = listing.stdout.split('\n').filter((f) => /^[A-Za-z0-9._-]+\.spool$/.test(f));
  let batches = 0;
  let samples = 0;
  const bounds = { minT: (run.claimedAt?.getTime() ?? Date.now()) - 86_400_000, maxT: Date.now() + 600_000 };
  for (const file of spools) {
    const node = file.slice(0, -'.spool'.length);
    const [spool, acked] = await Promise.all([
      link.connection.readFile(`${dir}/${file}`, { maxBytes: MAX_SPOOL_BYTES, fromEnd: true }),
      link.connection.readFile(`${dir}/${node}.acked`, { maxBytes: 64 }),
    ]);
    const ackedSeq = acked ? Number.parseInt(acked.text.trim(), 10) : -1;
    for (const line of (spool?.text ?? '').split('\n')) {
      if (line.trim() === '') continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        continue; // a line cut by a crash mid-write (or by reading from the end)
      }
      const envelope = TelemetryBatch.safeParse(parsed);
      if (!envelope.success || envelope.data.seq <= ackedSeq) continue;
      const normalized = normalizeBatch(envelope.data, bounds);
      if (!normalized.ok) {
        ctx.log.warn({ runId: run.id, node, seq: envelope.data.seq, issues: normalized.issues.slice(0, 3) }, 'spooled batch refused');
        continue;
      }
      const result = await ctx.telemetry.write(run.id, normalized.batch);
      if (!result.duplicate) {
        batches++;
        samples += result.accepted;
      }
    }
  }
  return { batches, samples };
}
