import type { BatchMark, NormalizedBatch } from '@erg/spec';
import { createTestDatabase, type TestDatabase } from '@erg/testkit';
import { createDatabase, listRunMarks, storeJobMarks, TelemetryWriter, type Database } from '@erg/db';
import { oneSampleBatch, slurmRuns } from './telemetry-fixture';

// Marks that speak for the whole job (the scheduler's, read from stdout.log): stored once for
// each node the run has telemetry of, idempotent on (run, node, offset) like the agents' marks.

const t0 = Date.now();
const BASE = 2 ** 40;
const logMark = (offset: number, kind: BatchMark['kind'], name: string, t: number): BatchMark => ({ offset: BASE + offset, kind, name, t: t0 + t, clock: 'wall', writer: 'log' });
const batch = (node: string, seq: number, marks?: BatchMark[]): NormalizedBatch => oneSampleBatch(t0, node, seq, marks ? { marks } : {});

describe('storeJobMarks', () => {
  let tdb: TestDatabase;
  let db: Database;
  let writer: TelemetryWriter;
  let runs: string[];

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDatabase(tdb.url);
    writer = new TelemetryWriter(db);
    runs = await slurmRuns(db, 'job-marks', 3);
  });
  afterAll(async () => {
    await db.close();
    await tdb.drop();
  });

  test('stores the marks for every node with telemetry, beside the agents’ own; again, nothing new', async () => {
    const run = runs[0]!;
    const own: BatchMark = { offset: 0, kind: 'begin', name: 'train', t: t0, clock: 'mono', writer: 'py' };
    await writer.write(run, batch('gh-002', 0, [own]));
    await writer.write(run, batch('gh-001', 0));
    const marks = [logMark(0, 'begin', 'optimizer', 10), logMark(97, 'end', 'optimizer', 20), logMark(200, 'step', 'step', 30)];
    expect(await storeJobMarks(db, run, marks)).toEqual({ nodes: ['gh-001', 'gh-002'], stored: 6 });
    const stored = await listRunMarks(db, run);
    const plain = (node: string) => marks.map((m) => ({ node, ...m }));
    expect(stored).toEqual([...plain('gh-001'), { node: 'gh-002', ...own }, ...plain('gh-002')]);
    expect(await storeJobMarks(db, run, marks)).toEqual({ nodes: ['gh-001', 'gh-002'], stored: 0 });
    expect(await listRunMarks(db, run)).toEqual(stored);
  });

  test('a run without telemetry has no node to store them for', async () => {
    expect(await storeJobMarks(db, runs[1]!, [logMark(0, 'begin', 'x', 1)])).toEqual({ nodes: [], stored: 0 });
    expect(await listRunMarks(db, runs[1]!)).toEqual([]);
  });

  test('many marks go in chunks, read once from an iterable', async () => {
    const run = runs[2]!;
    for (const node of ['n1', 'n2', 'n3']) await writer.write(run, batch(node, 0));
    let made = 0;
    function* many(): Generator<BatchMark> {
      for (let i = 0; i < 25_000; i++, made++) yield logMark(i * 96 + 2, 'step', 'step', i);
    }
    expect(await storeJobMarks(db, run, many())).toEqual({ nodes: ['n1', 'n2', 'n3'], stored: 75_000 });
    expect(made).toBe(25_000);
    const stored = await listRunMarks(db, run);
    expect(stored).toHaveLength(75_000);
    expect(stored[24_999]).toEqual({ node: 'n1', ...logMark(24_999 * 96 + 2, 'step', 'step', 24_999) });
  }, 60_000);
});
