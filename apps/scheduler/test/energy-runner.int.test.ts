// The scheduler's energy worker (energy-runner.ts, issue 27 §1): a run's figures are read,
// computed and stored in a worker thread with a pool of its own; a worker that dies fails only
// what it was doing — the run stays due, and the next refresh computes it. Needs the build
// (the worker runs dist/energy-worker.js).
import { createCampaign, createDatabase, energyDirtyVersion, findProjectByName, findRunEnergy, finishImportedRun, TelemetryWriter, type Database } from '@erg/db';
import { testCampaignSpec } from '@erg/db/testing';
import { decodeTelemetryBatch } from '@erg/spec';
import { createTestDatabase, type TestDatabase } from '@erg/testkit';
import { EnergyRunner } from '../src/energy-runner';

describe('EnergyRunner', () => {
  let tdb: TestDatabase;
  let db: Database;
  const runners: EnergyRunner[] = [];
  const start = Date.now() - 3_600_000;

  /** An imported run finished over [start, start + 10 s] with 100 W on one GPU: due, 1,000 J once computed. */
  async function dueRun(name: string): Promise<string> {
    const projectId = (await findProjectByName(db, 'default'))!.id;
    const created = await createCampaign(db, { name, execution: 'import', clusterId: null, spec: testCampaignSpec(), specText: null, projectId, configurations: [{ key: 'x=1', parameters: { x: 1 } }], repetitions: 1 });
    const runId = created.runs[0]!.id;
    const t = Array.from({ length: 121 }, (_, i) => start - 1000 + i * 100);
    const decoded = decodeTelemetryBatch(JSON.stringify({ node: 'n1', seq: 0, samples: [{ sensor: 'gpu0.power', t, v: t.map(() => 100) }] }), { minT: 0, maxT: Date.now() + 60_000 });
    if (!decoded.ok) throw new Error(JSON.stringify(decoded.issues));
    await new TelemetryWriter(db).write(runId, decoded.batch);
    expect(await finishImportedRun(db, { runId, startedAt: new Date(start), endedAt: new Date(start + 10_000), exitCode: 0, metrics: {} })).toBe(true);
    return runId;
  }
  const runner = (maxHeapMb?: number) => {
    const r = new EnergyRunner({ databaseUrl: tdb.url, ...(maxHeapMb ? { maxHeapMb } : {}) });
    runners.push(r);
    return r;
  };
  const energyOf = async (runId: string) => ((await findRunEnergy(db, runId))?.result as { energyJ: number } | undefined)?.energyJ;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDatabase(tdb.url);
  });
  afterAll(async () => {
    // Each runner's worker closes its pool first: the database can then be dropped.
    for (const r of runners) await r.close();
    await db?.close();
    await tdb?.drop();
  });

  test('computes and stores a run\'s figures in its worker; two asks for one run at once are one refresh', async () => {
    const runId = await dueRun('in-worker');
    const energy = runner();
    const first = energy.refresh(runId);
    expect(energy.refresh(runId)).toBe(first);
    expect(await first).toBe(true);
    expect(energy.workersStarted).toBe(1);
    expect(await energyOf(runId)).toBeCloseTo(1000, 6);
    expect(await energyDirtyVersion(db, runId)).toBeNull();
  });

  test('a worker that dies (its heap limit) fails the refresh; the run stays due and the next worker computes it', async () => {
    const runId = await dueRun('dies');
    await expect(runner(4).refresh(runId)).rejects.toMatchObject({ code: 'ERG_ENERGY_REFRESH_FAILED' });
    expect(await energyDirtyVersion(db, runId)).not.toBeNull();
    expect(await energyOf(runId)).toBeUndefined();
    expect(await runner().refresh(runId)).toBe(true);
    expect(await energyOf(runId)).toBeCloseTo(1000, 6);
  });
});
