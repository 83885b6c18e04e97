import type { BatchMark, MarkKind } from '@erg/spec';
import type pg from 'pg';
import { poolOf, type Database } from './client';

/**
 * A run's phase marks (run_marks): what its workload wrote to `<node>.marks` on each node
 * (@erg/spec marks.ts), as the node's agent put them on its samples' timeline and sent them with
 * its telemetry batches. Written by the telemetry writer (telemetry.ts), in the transaction that
 * stores the batch; (run, node, offset) is a mark's identity, so a mark sent again — a resent
 * batch, a restarted agent re-reading the file from its start — is stored once, the first copy kept.
 */

/** One stored mark. */
export interface RunMarkRecord {
  node: string;
  /** Byte offset of its line in `<node>.marks`. */
  offset: number;
  kind: MarkKind;
  name: string;
  /** Unix ms on the node's sample timeline. */
  t: number;
  clock: 'mono' | 'wall';
  writer: string;
}

/** A run's marks, by node, then time, then offset (the order they were written in, for equal times). */
export async function listRunMarks(db: Database, runId: string): Promise<RunMarkRecord[]> {
  const { rows } = await poolOf(db).query<{ node: string; offset: string; kind: MarkKind; name: string; t: number; clock: 'mono' | 'wall'; writer: string }>(
    `SELECT node, "offset", kind, name, t, clock, writer FROM run_marks WHERE run_id = $1 ORDER BY node, t, "offset"`,
    [runId],
  );
  return rows.map((r) => ({ node: r.node, offset: Number(r.offset), kind: r.kind, name: r.name, t: r.t, clock: r.clock, writer: r.writer }));
}

/** How many marks a run has, over all its nodes. */
export async function countRunMarks(db: Database, runId: string): Promise<number> {
  const { rows } = await poolOf(db).query<{ n: number }>('SELECT count(*)::int AS n FROM run_marks WHERE run_id = $1', [runId]);
  return rows[0]!.n;
}

/** The marks of the new batches of one flush, for storeRunMarks. */
export interface NewMarks {
  runId: string;
  node: string;
  marks: readonly BatchMark[];
}

/**
 * Stores the marks of batches just inserted (telemetry.ts, in its transaction): one statement,
 * unnest arrays; a mark whose (run, node, offset) is stored already keeps its first copy.
 */
export async function storeRunMarks(client: pg.PoolClient, batches: readonly NewMarks[]): Promise<void> {
  const cols = { run: [] as string[], node: [] as string[], offset: [] as number[], kind: [] as string[], name: [] as string[], t: [] as number[], clock: [] as string[], writer: [] as string[] };
  for (const { runId, node, marks } of batches) {
    for (const m of marks) {
      cols.run.push(runId);
      cols.node.push(node);
      cols.offset.push(m.offset);
      cols.kind.push(m.kind);
      cols.name.push(m.name);
      cols.t.push(m.t);
      cols.clock.push(m.clock);
      cols.writer.push(m.writer);
    }
  }
  if (cols.run.length === 0) return;
  await client.query(
    `INSERT INTO run_marks (run_id, node, "offset", kind, name, t, clock, writer)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::float8[], $7::text[], $8::text[])
     ON CONFLICT DO NOTHING`,
    [cols.run, cols.node, cols.offset, cols.kind, cols.name, cols.t, cols.clock, cols.writer],
  );
}
