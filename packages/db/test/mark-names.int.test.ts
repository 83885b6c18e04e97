import type { BatchMark, NormalizedBatch } from '@erg/spec';
import { createTestDatabase, type TestDatabase } from '@erg/testkit';
import { createDatabase, findRunDetail, listRunMarks, storeJobMarks, TelemetryWriter, type Database } from '@erg/db';
import { oneSampleBatch, slurmRuns } from './telemetry-fixture';

// The cap on a run's distinct mark names (run-mark-names.ts, issue 27 §1), in both writers: the
// telemetry writer (the API's ingest and the scheduler's spool pull) and storeJobMarks (the log's
// phases). Concurrent flushes of one run never pass the cap between them.

const t0 = Date.now();
const mark = (offset: number, name: string, kind: BatchMark['kind'] = 'step'): BatchMark => ({ offset, kind, name, t: t0 + offset, clock: 'wall', writer: 'py' });
const batch = (node: string, seq: number, marks: BatchMark[]): NormalizedBatch => oneSampleBatch(t0, node, seq, { marks });
const distinctNames = async (db: Database, run: string) => new Set((await listRunMarks(db, run)).map((m) => m.name));

describe('distinct mark names per run', () => {
  let tdb: TestDatabase;
  let db: Database;
  let runs: string[];

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDatabase(tdb.url, { max: 12 });
    runs = await slurmRuns(db, 'mark-names', 3);
  });
  afterAll(async () => {
    await db.close();
    await tdb.drop();
  });

  test('flushes of one run from 8 writers at once, each with 10 names of its own, keep exactly the cap', async () => {
    const run = runs[0]!;
    const writers = Array.from({ length: 8 }, () => new TelemetryWriter(db, { maxPhaseNames: 25 }));
    await Promise.all(writers.map((w, k) => w.write(run, batch(`n${k}`, 0, Array.from({ length: 10 }, (_, i) => mark(i, `w${k}-${i}`))))));
    expect((await distinctNames(db, run)).size).toBe(25);
    // Every batch was stored, and the run warns once.
    const detail = await findRunDetail(db, run);
    expect(detail!.warnings.filter((w) => w.includes('(ERG_MAX_PHASE_NAMES)'))).toHaveLength(1);
  });

  test("the log's phases count toward the same cap: their names past it are not stored, the others are, for every node", async () => {
    const run = runs[1]!;
    const writer = new TelemetryWriter(db, { maxPhaseNames: 3 });
    await writer.write(run, batch('gh-001', 0, [mark(0, 'train', 'begin'), mark(1, 'train', 'end')]));
    await writer.write(run, batch('gh-002', 0, []));
    const BASE = 2 ** 40;
    const log = ['load', 'eval', 'save', 'train'].map((name, i) => ({ ...mark(BASE + i, name), writer: 'log' }));
    expect(await storeJobMarks(db, run, log, 3)).toEqual({ nodes: ['gh-001', 'gh-002'], stored: 2 * 3 });
    expect([...(await distinctNames(db, run))].sort()).toEqual(['eval', 'load', 'train']);
    const detail = await findRunDetail(db, run);
    expect(detail!.warnings.find((w) => w.includes('(ERG_MAX_PHASE_NAMES)'))).toContain('"save"');
  });

  test('a run at its cap still stores every mark of the names it has', async () => {
    const run = runs[2]!;
    const writer = new TelemetryWriter(db, { maxPhaseNames: 2 });
    await writer.write(run, batch('n1', 0, [mark(0, 'a'), mark(1, 'b'), mark(2, 'c')]));
    await writer.write(run, batch('n1', 1, [mark(3, 'b'), mark(4, 'd'), mark(5, 'a')]));
    expect((await listRunMarks(db, run)).map((m) => m.name)).toEqual(['a', 'b', 'b', 'a']);
  });
});
