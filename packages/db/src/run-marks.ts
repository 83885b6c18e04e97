import { DEFAULT_MAX_PHASE_NAMES, type BatchMark, type MarkKind } from '@erg/spec';
import type pg from 'pg';
import { poolOf, withTransaction, type Database } from './client';
import { admitMarkNames } from './run-mark-names';

/**
 * A run's phase marks (run_marks): what its workload wrote to `<node>.marks` on each node
 * (@erg/spec marks.ts), as the node's agent put them on its samples' timeline and sent them with
 * its telemetry batches. Written by the telemetry writer (telemetry.ts), in the transaction that
 * stores the batch; (run, node, offset) is a mark's identity, so a mark sent again — a resent
 * batch, a restarted agent re-reading the file from its start — is stored once, the first copy kept.
 * Marks read from the workload's stdout.log (a campaign's `phases`, writer `log`) are stored by
 * the scheduler when the job ends (storeJobMarks), for each node of the run; their offsets lie
 * from 2^40 up (apps/scheduler log-phases.ts), apart from any `<node>.marks` byte offset.
 * Both writers store only marks of names the run admits (run-mark-names.ts: at most
 * ERG_MAX_PHASE_NAMES distinct names a run).
 */

/**
 * One stored mark: a batch's mark (its offset, for writer `log`, is 2^40 + a number derived from
 * its line in stdout.log) and the node it is of.
 */
export type RunMarkRecord = BatchMark & { node: string };

/** A run's marks, by node, then time, then offset (the order they were written in, for equal times). */
export async function listRunMarks(db: Database, runId: string): Promise<RunMarkRecord[]> {
  const { rows } = await poolOf(db).query<{ node: string; offset: string; kind: MarkKind; name: string; t: number; clock: 'mono' | 'wall'; writer: string }>(
    `SELECT node, "offset", kind, name, t, clock, writer FROM run_marks WHERE run_id = $1 ORDER BY node, t, "offset"`,
    [runId],
  );
  return rows.map((r) => ({ node: r.node, offset: Number(r.offset), kind: r.kind, name: r.name, t: r.t, clock: r.clock, writer: r.writer }));
}

/**
 * A run's first `limit` marks by time (then node, offset) and how many it has in all: what its
 * figures are computed from (the first MAX_ATTRIBUTED_MARKS by time, @erg/results), without
 * reading a million marks to use a tenth of them. Postgres keeps only the `limit` smallest while
 * it sorts (a top-N sort): memory bounded whatever the run's marks.
 */
export async function listFirstRunMarks(db: Database, runId: string, limit: number): Promise<{ marks: RunMarkRecord[]; total: number }> {
  const [rows, total] = await Promise.all([
    poolOf(db).query<{ node: string; offset: string; kind: MarkKind; name: string; t: number; clock: 'mono' | 'wall'; writer: string }>(
      `SELECT node, "offset", kind, name, t, clock, writer FROM run_marks WHERE run_id = $1 ORDER BY t, node, "offset" LIMIT $2`,
      [runId, limit],
    ),
    countRunMarks(db, runId),
  ]);
  return { marks: rows.rows.map((r) => ({ node: r.node, offset: Number(r.offset), kind: r.kind, name: r.name, t: r.t, clock: r.clock, writer: r.writer })), total };
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
 * unnest arrays; a mark whose (run, node, offset) is stored already keeps its first copy. Marks
 * of names past the run's first `maxNames` are left out (admitMarkNames).
 */
export async function storeRunMarks(client: pg.PoolClient, batches: readonly NewMarks[], maxNames: number = DEFAULT_MAX_PHASE_NAMES): Promise<void> {
  const cols = { run: [] as string[], node: [] as string[], ...markColumns() };
  for (const { runId, node, marks } of await admitMarkNames(client, batches, maxNames)) {
    for (const m of marks) {
      cols.run.push(runId);
      cols.node.push(node);
      pushMark(cols, m);
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

/** What storeJobMarks did. */
export interface StoredJobMarks {
  /** The nodes the marks were stored for: those the run's telemetry came from. */
  nodes: string[];
  /** Rows inserted (marks × nodes, less those stored before). */
  stored: number;
}

/** Rows one statement of storeJobMarks inserts at most (marks × nodes). */
const JOB_MARK_ROWS_PER_STATEMENT = 20_000;

/**
 * Stores marks that speak for the whole job, not one node — the scheduler's, read from the
 * workload's stdout.log — as marks of every node the run has telemetry of (telemetry_batches): the
 * energy per phase is computed per node. A mark whose (run, node, offset) is stored already keeps
 * its first copy, so storing the same marks again (a finalize tried again) adds nothing. `marks`
 * is read once, in chunks; each chunk is one transaction (a chunk stored before a failure is
 * simply found stored the next time), and keeps only marks of names the run admits (at most
 * `maxNames` distinct names a run, admitMarkNames).
 */
export async function storeJobMarks(db: Database, runId: string, marks: Iterable<BatchMark>, maxNames: number = DEFAULT_MAX_PHASE_NAMES): Promise<StoredJobMarks> {
  const pool = poolOf(db);
  const { rows } = await pool.query<{ node: string }>('SELECT DISTINCT node FROM telemetry_batches WHERE run_id = $1 ORDER BY node', [runId]);
  const nodes = rows.map((r) => r.node);
  if (nodes.length === 0) return { nodes, stored: 0 };
  const perStatement = Math.max(1, Math.floor(JOB_MARK_ROWS_PER_STATEMENT / nodes.length));
  let stored = 0;
  const insert = (chunk: BatchMark[]): Promise<void> =>
    withTransaction(db, async (client) => {
      const [kept] = await admitMarkNames(client, [{ runId, node: '', marks: chunk }], maxNames);
      const cols = markColumns();
      for (const m of kept!.marks) pushMark(cols, m);
      if (cols.offset.length === 0) return;
      const result = await client.query(
        `INSERT INTO run_marks (run_id, node, "offset", kind, name, t, clock, writer)
         SELECT $1::uuid, n.node, m.* FROM unnest($2::text[]) AS n(node)
         CROSS JOIN unnest($3::bigint[], $4::text[], $5::text[], $6::float8[], $7::text[], $8::text[]) AS m
         ON CONFLICT DO NOTHING`,
        [runId, nodes, cols.offset, cols.kind, cols.name, cols.t, cols.clock, cols.writer],
      );
      stored += result.rowCount ?? 0;
    });
  let chunk: BatchMark[] = [];
  for (const m of marks) {
    chunk.push(m);
    if (chunk.length >= perStatement) {
      await insert(chunk);
      chunk = [];
    }
  }
  if (chunk.length > 0) await insert(chunk);
  return { nodes, stored };
}

interface MarkColumns {
  offset: number[];
  kind: string[];
  name: string[];
  t: number[];
  clock: string[];
  writer: string[];
}

function markColumns(): MarkColumns {
  return { offset: [], kind: [], name: [], t: [], clock: [], writer: [] };
}

/** Appends one mark to the unnest columns. */
function pushMark(cols: MarkColumns, m: BatchMark): void {
  cols.offset.push(m.offset);
  cols.kind.push(m.kind);
  cols.name.push(m.name);
  cols.t.push(m.t);
  cols.clock.push(m.clock);
  cols.writer.push(m.writer);
}
