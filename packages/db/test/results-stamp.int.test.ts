// A campaign's results stamp (readResultsStamp) is what the API's results cache is checked
// against: it must change with every change to what the results are computed from, whoever makes
// it, and should stay put through what they do not read (the scheduler's moves before a run
// completes, each telemetry push's clock reading), so that a live campaign's results stay cached.
// Its change rows are folded as they grow, and it still moves with the next change.
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '@erg/testkit';
import {
  createCampaign, createDatabase, createProject, deleteRunEnergy, readResultsStamp, recordClusterCapabilities, RESULTS_CHANGES_FOLD_ABOVE, storeRunEnergy,
  TelemetryWriter, type Database,
} from '@erg/db';
import { forceRunEnd, testBatch, testCampaignSpec, testNodeFingerprint } from '@erg/db/testing';
import { poolOf } from '../src/client';
import { testCluster } from './telemetry-fixture';

const figures = (energyJ: number) => ({ timeS: 10, energyJ, method: 'integrated', coverage: 1, result: { timeS: 10, energyJ, coverage: 1, components: {}, flags: [] } });

describe('results stamps (Postgres)', () => {
  let tdb: TestDatabase;
  let db: Database;
  let clusterId: string;
  let campaignId: string;
  let runs: string[];
  let otherRuns: string[];

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDatabase(tdb.url);
    const projectId = (await createProject(db, { name: 'stamps' })).id;
    const cluster = await testCluster(db, projectId);
    clusterId = cluster.id;
    const campaign = (name: string) => createCampaign(db, {
      name, execution: 'slurm', clusterId, projectId, spec: testCampaignSpec(), specText: null, repetitions: 4, configurations: [{ key: 'a=1', parameters: { a: 1 } }],
    });
    const mine = await campaign('mine');
    campaignId = mine.id;
    runs = mine.runs.map((r) => r.id);
    otherRuns = (await campaign('other')).runs.map((r) => r.id);
  });
  afterAll(async () => {
    await db.close();
    await tdb.drop();
  });

  /** Runs `change` and says whether the campaign's stamp moved. */
  async function moves(change: () => Promise<unknown>): Promise<boolean> {
    const before = await readResultsStamp(db, campaignId);
    await change();
    return (await readResultsStamp(db, campaignId)) !== before;
  }

  test('null for a campaign that does not exist', async () => {
    expect(await readResultsStamp(db, '00000000-0000-4000-8000-000000000000')).toBeNull();
  });

  test('moves with every change the results read, whoever writes it', async () => {
    const [a, b] = runs as [string, string];
    const sql = (text: string, params: unknown[]) => () => poolOf(db).query(text, params);
    expect(await moves(() => forceRunEnd(db, a, 'completed'))).toBe(true);
    expect(await moves(() => storeRunEnergy(db, a, figures(100), 1))).toBe(true);
    expect(await moves(() => storeRunEnergy(db, a, figures(120), 2))).toBe(true);
    expect(await moves(sql(`UPDATE runs SET metrics = '{"steps": 7}' WHERE id = $1`, [a]))).toBe(true);
    expect(await moves(sql(`UPDATE runs SET node_list = 'gh-[001-002]' WHERE id = $1`, [a]))).toBe(true);
    expect(await moves(() => deleteRunEnergy(db, a, 2))).toBe(true);
    expect(await moves(() => storeRunEnergy(db, a, figures(120), 3))).toBe(true);
    // Its nodes: the first batch of a node, then another fingerprint from the same node (a resumed agent on other software);
    // a node of a run still running too (it may complete in a transaction that runs at the same time).
    const writer = new TelemetryWriter(db);
    expect(await moves(() => writer.write(a, testBatch('gh-001', 0, { fingerprint: testNodeFingerprint('gh-001', '550.54.15') })))).toBe(true);
    expect(await moves(() => writer.write(a, testBatch('gh-001', 1, { fingerprint: testNodeFingerprint('gh-001', '535.104.05') })))).toBe(true);
    expect(await moves(() => writer.write(b, testBatch('gh-002', 0, { fingerprint: testNodeFingerprint('gh-002', '550.54.15') })))).toBe(true);
    // A completed run leaving the results (a test's hand, no transition does it), and the cluster re-probed.
    expect(await moves(sql(`UPDATE runs SET state = 'failed' WHERE id = $1`, [a]))).toBe(true);
    expect(await moves(() => recordClusterCapabilities(db, clusterId, { probedAt: new Date().toISOString(), slurmVersion: 'slurm 24.11.5', powerHelper: null, powerHelperProblem: 'not installed' }))).toBe(true);
    // Another run completing, written by hand: the trigger sees every writer.
    expect(await moves(sql(`UPDATE runs SET state = 'completed' WHERE id = $1`, [b]))).toBe(true);
  });

  test('stays put through what the results do not read', async () => {
    const [, , c, d] = runs as [string, string, string, string];
    // The scheduler's moves before a run completes.
    const running = () => poolOf(db).query(`UPDATE runs SET state = 'running', node_list = 'gh-003', started_at = now() WHERE id = $1`, [c]);
    expect(await moves(running)).toBe(false);
    expect((await poolOf(db).query('SELECT state FROM runs WHERE id = $1', [c])).rows[0].state).toBe('running');
    const writer = new TelemetryWriter(db);
    // A completed run's later pushes: clock readings and batches without provenance.
    await forceRunEnd(db, d, 'completed');
    await writer.write(d, testBatch('gh-004', 0, { fingerprint: testNodeFingerprint('gh-004', '550.54.15') }), 5);
    expect(await moves(() => writer.write(d, testBatch('gh-004', 1), 7))).toBe(false);
    // Another campaign's runs and figures.
    expect(await moves(() => forceRunEnd(db, otherRuns[0]!, 'completed'))).toBe(false);
    expect(await moves(() => storeRunEnergy(db, otherRuns[0]!, figures(50), 1))).toBe(false);
  });

  test('a change committed after one drawn later still moves it (the sum of the changes, not the largest id)', async () => {
    const [, , c, d] = runs as [string, string, string, string];
    for (const run of [c, d]) {
      await forceRunEnd(db, run, 'completed');
      await storeRunEnergy(db, run, figures(1), 1);
    }
    const first = new pg.Client({ connectionString: tdb.url });
    const second = new pg.Client({ connectionString: tdb.url });
    await first.connect();
    await second.connect();
    try {
      // The first transaction adds its change row, the second a later one and commits first.
      await first.query('BEGIN');
      await first.query('UPDATE run_energy SET result = $2 WHERE run_id = $1', [c, JSON.stringify(figures(2).result)]);
      await second.query('UPDATE run_energy SET result = $2 WHERE run_id = $1', [d, JSON.stringify(figures(3).result)]);
      const between = await readResultsStamp(db, campaignId);
      await first.query('COMMIT');
      expect(await readResultsStamp(db, campaignId)).not.toBe(between);
    } finally {
      await first.end();
      await second.end();
    }
  });

  test('folds its change rows into one as they grow, and still moves with the next change', async () => {
    const [, , c] = runs as [string, string, string];
    for (let i = 0; i <= RESULTS_CHANGES_FOLD_ABOVE; i++) await storeRunEnergy(db, c, figures(10 + i), 10 + i);
    const rowsOf = async () => (await poolOf(db).query('SELECT count(*)::int AS n FROM campaign_results_changes WHERE campaign_id = $1', [campaignId])).rows[0].n as number;
    expect(await rowsOf()).toBeGreaterThan(RESULTS_CHANGES_FOLD_ABOVE);
    const folded = await readResultsStamp(db, campaignId);
    expect(await rowsOf()).toBe(1);
    expect(await readResultsStamp(db, campaignId)).toBe(folded);
    expect(await moves(() => storeRunEnergy(db, c, figures(1), 1000))).toBe(true);
  });
});
