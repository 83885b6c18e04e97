// deleteRunEnergy forgets a run's stored figures, unless (given `batchesSeen`) they were computed
// from more batches than that. Called without a bound, it must forget them whatever the count:
// batches_seen is an INTEGER column, and a bound past its range (Number.MAX_SAFE_INTEGER, the old
// default) failed with Postgres's "out of range for type integer" instead.
import { createTestDatabase, type TestDatabase } from '@erg/testkit';
import { createDatabase, deleteRunEnergy, findRunEnergy, storeRunEnergy, type Database } from '@erg/db';
import { slurmRuns } from './telemetry-fixture';

const figures = { timeS: 10, energyJ: 100, method: 'integrated', coverage: 1, result: { timeS: 10, energyJ: 100, coverage: 1, components: {}, flags: [] } };

describe('deleteRunEnergy (Postgres)', () => {
  let tdb: TestDatabase;
  let db: Database;
  let runId: string;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDatabase(tdb.url);
    runId = (await slurmRuns(db, 'delete-energy', 1))[0]!;
  });
  afterAll(async () => {
    await db.close();
    await tdb.drop();
  });

  test('keeps figures computed from more batches than the bound, forgets them within it', async () => {
    await storeRunEnergy(db, runId, figures, 3);
    await deleteRunEnergy(db, runId, 2);
    expect(await findRunEnergy(db, runId)).not.toBeNull();
    await deleteRunEnergy(db, runId, 3);
    expect(await findRunEnergy(db, runId)).toBeNull();
  });

  test('without a bound, forgets them however many batches they were computed from', async () => {
    await storeRunEnergy(db, runId, figures, 2_147_483_647);
    await deleteRunEnergy(db, runId);
    expect(await findRunEnergy(db, runId)).toBeNull();
  });
});
