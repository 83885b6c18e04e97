// deleteRunEnergy forgets a run's stored figures, unless (given `batchesSeen`) they were computed
// from more batches than that. Called without a bound, it must forget them whatever the count:
// batches_seen is an INTEGER column, and a bound past its range (Number.MAX_SAFE_INTEGER, the old
// default) failed with Postgres's "out of range for type integer" instead.
import { secretBoxFrom } from '@erg/secrets';
import { createTestDatabase, TEST_SECRET_KEY, type TestDatabase } from '@erg/testkit';
import { createCampaign, createCluster, createDatabase, createProject, deleteRunEnergy, findRunEnergy, storeRunEnergy, type Database } from '@erg/db';
import { testCampaignSpec } from '@erg/db/testing';

const figures = { timeS: 10, energyJ: 100, method: 'integrated', coverage: 1, result: { timeS: 10, energyJ: 100, coverage: 1, components: {}, flags: [] } };

describe('deleteRunEnergy (Postgres)', () => {
  let tdb: TestDatabase;
  let db: Database;
  let runId: string;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDatabase(tdb.url);
    const projectId = (await createProject(db, { name: 'delete-energy' })).id;
    const cluster = await createCluster(
      db, { projectId, name: 'c1', host: '127.0.0.1', port: 2222, username: 'root', privateKey: 'k', hostKeySha256: 'SHA256:x', workDir: '/w' }, secretBoxFrom({ ERG_SECRET_KEY: TEST_SECRET_KEY }),
    );
    const campaign = await createCampaign(db, {
      name: 'c', execution: 'slurm', clusterId: cluster.id, projectId, spec: testCampaignSpec(), specText: null, repetitions: 1, configurations: [{ key: 'a=1', parameters: { a: 1 } }],
    });
    runId = campaign.runs[0]!.id;
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
