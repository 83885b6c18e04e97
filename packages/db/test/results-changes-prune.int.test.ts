// The scheduler folds the change rows of campaigns nobody reads (foldGrownResultsChanges): the
// campaigns with the most rows first, a bounded number a pass, each into one row holding the sum,
// so that every campaign's results stamp stays exactly what it was.
import { createTestDatabase, type TestDatabase } from '@erg/testkit';
import { createCampaign, createDatabase, createProject, foldGrownResultsChanges, readResultsStamp, RESULTS_CHANGES_FOLD_ABOVE, type Database } from '@erg/db';
import { testCampaignSpec } from '@erg/db/testing';
import { poolOf } from '../src/client';
import { testCluster } from './telemetry-fixture';

describe('foldGrownResultsChanges (Postgres)', () => {
  let tdb: TestDatabase;
  let db: Database;
  let campaigns: string[];

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDatabase(tdb.url);
    const projectId = (await createProject(db, { name: 'prune' })).id;
    const cluster = await testCluster(db, projectId);
    campaigns = [];
    for (const name of ['most', 'more', 'few']) {
      const c = await createCampaign(db, {
        name, execution: 'slurm', clusterId: cluster.id, projectId, spec: testCampaignSpec(), specText: null, repetitions: 1, configurations: [{ key: 'a=1', parameters: { a: 1 } }],
      });
      campaigns.push(c.id);
    }
  });
  afterAll(async () => {
    await db.close();
    await tdb.drop();
  });

  /** `n` changes of a campaign, one row each, as the triggers add them. */
  const change = (campaignId: string, n: number) =>
    poolOf(db).query('INSERT INTO campaign_results_changes (campaign_id) SELECT $1 FROM generate_series(1, $2::int)', [campaignId, n]);
  const rowsOf = async (campaignId: string) =>
    (await poolOf(db).query<{ n: number }>('SELECT count(*)::int AS n FROM campaign_results_changes WHERE campaign_id = $1', [campaignId])).rows[0]!.n;
  const stamps = () => Promise.all(campaigns.map((id) => readResultsStamp(db, id)));

  test('folds the most grown campaigns first, a bounded number a pass, and no stamp moves', async () => {
    const [most, more, few] = campaigns as [string, string, string];
    // Below the fold a read makes (RESULTS_CHANGES_FOLD_ABOVE), so only this pruning folds them.
    expect(RESULTS_CHANGES_FOLD_ABOVE).toBeGreaterThan(60);
    await change(most, 60);
    await change(more, 40);
    await change(few, 5);
    const before = await stamps();
    const fewRows = await rowsOf(few);

    expect(await foldGrownResultsChanges(db, { above: 10, campaigns: 1 })).toEqual([most]);
    expect(await rowsOf(most)).toBe(1);
    expect(await rowsOf(more)).toBeGreaterThan(10);
    expect(await stamps()).toEqual(before);

    expect(await foldGrownResultsChanges(db, { above: 10, campaigns: 5 })).toEqual([more]);
    expect([await rowsOf(more), await rowsOf(few)]).toEqual([1, fewRows]);
    expect(await stamps()).toEqual(before);
    expect(await foldGrownResultsChanges(db, { above: 10, campaigns: 5 })).toEqual([]);

    // A folded campaign's stamp still moves with its next change.
    await change(most, 1);
    expect((await stamps())[0]).not.toBe(before[0]);
  });
});
