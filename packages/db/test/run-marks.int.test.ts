import type { BatchMark, NormalizedBatch } from '@erg/spec';
import { createTestDatabase, type TestDatabase } from '@erg/testkit';
import { countRunMarks, createDatabase, listRunMarks, TelemetryWriter, type Database } from '@erg/db';
import { poolOf } from '../src/client';
import { oneSampleBatch, slurmRuns } from './telemetry-fixture';

// Phase marks travel with the telemetry batches and are stored in the batch's transaction,
// idempotent on (run, node, offset). The scheduler's spool pull (apps/scheduler/src/spool.ts)
// stores spooled batches with this same TelemetryWriter (ctx.telemetry), so these tests of the
// writer cover that path as well as the API's ingest.

const t0 = Date.now();
const mark = (offset: number, kind: BatchMark['kind'], name: string, t: number, clock: BatchMark['clock'] = 'mono'): BatchMark => ({ offset, kind, name, t: t0 + t, clock, writer: 'py' });
const batch = (node: string, seq: number, marks?: BatchMark[]): NormalizedBatch => oneSampleBatch(t0, node, seq, marks ? { marks } : {});

describe('run marks', () => {
  let tdb: TestDatabase;
  let db: Database;
  let writer: TelemetryWriter;
  let runs: string[];

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDatabase(tdb.url);
    writer = new TelemetryWriter(db);
    runs = await slurmRuns(db, 'marks', 4);
  });
  afterAll(async () => {
    await db.close();
    await tdb.drop();
  });

  test('a batch with marks stores them, listed by node, time and offset', async () => {
    const run = runs[0]!;
    await writer.write(run, batch('gh-002', 0, [mark(0, 'begin', 'train', 5)]));
    const result = await writer.write(run, batch('gh-001', 0, [mark(0, 'begin', 'train', 10), mark(29, 'step', 'step', 20, 'wall'), mark(55, 'end', 'train', 20)]));
    expect(result).toEqual({ accepted: 1, duplicate: false });
    expect(await listRunMarks(db, run)).toEqual([
      { node: 'gh-001', offset: 0, kind: 'begin', name: 'train', t: t0 + 10, clock: 'mono', writer: 'py' },
      { node: 'gh-001', offset: 29, kind: 'step', name: 'step', t: t0 + 20, clock: 'wall', writer: 'py' },
      { node: 'gh-001', offset: 55, kind: 'end', name: 'train', t: t0 + 20, clock: 'mono', writer: 'py' },
      { node: 'gh-002', offset: 0, kind: 'begin', name: 'train', t: t0 + 5, clock: 'mono', writer: 'py' },
    ]);
    expect(await countRunMarks(db, run)).toBe(4);
    expect(await countRunMarks(db, runs[1]!)).toBe(0);
  });

  test('the same batch again stores nothing, even with other marks in it', async () => {
    const run = runs[1]!;
    await writer.write(run, batch('gh-001', 0, [mark(0, 'begin', 'train', 10)]));
    const again = await writer.write(run, batch('gh-001', 0, [mark(0, 'begin', 'renamed', 11), mark(40, 'end', 'train', 12)]));
    expect(again).toEqual({ accepted: 0, duplicate: true });
    expect(await listRunMarks(db, run)).toEqual([{ node: 'gh-001', offset: 0, kind: 'begin', name: 'train', t: t0 + 10, clock: 'mono', writer: 'py' }]);
  });

  test('marks re-sent in a new seq (a restarted agent re-reads its file from 0) keep their first copy; new ones are added', async () => {
    const run = runs[2]!;
    await writer.write(run, batch('gh-001', 0, [mark(0, 'begin', 'train', 10), mark(29, 'step', 'step', 11)]));
    // The restarted agent's clock offset differs a little: the first copy stays.
    await writer.write(run, batch('gh-001', 1, [mark(0, 'begin', 'train', 10.5), mark(29, 'step', 'step', 11.5), mark(55, 'end', 'train', 12)]));
    // Both in one flush, one batch repeating a mark of the other: no conflict, each stored once.
    await Promise.all([
      writer.write(run, batch('gh-001', 2, [mark(80, 'step', 'step', 13), mark(100, 'step', 'step', 14)])),
      writer.write(run, batch('gh-001', 3, [mark(100, 'step', 'step', 14), mark(120, 'step', 'step', 15)])),
    ]);
    const stored = await listRunMarks(db, run);
    expect(stored.map((m) => [m.offset, m.t - t0])).toEqual([[0, 10], [29, 11], [55, 12], [80, 13], [100, 14], [120, 15]]);
  });

  test('a batch without marks stores none; a deleted run takes its marks with it', async () => {
    const run = runs[3]!;
    await writer.write(run, batch('gh-001', 0));
    expect(await countRunMarks(db, run)).toBe(0);
    await writer.write(run, batch('gh-001', 1, [mark(0, 'begin', 'train', 1)]));
    expect(await countRunMarks(db, run)).toBe(1);
    await poolOf(db).query('DELETE FROM runs WHERE id = $1', [run]);
    const { rows } = await poolOf(db).query<{ n: number }>('SELECT count(*)::int AS n FROM run_marks WHERE run_id = $1', [run]);
    expect(rows[0]!.n).toBe(0);
  });
});
