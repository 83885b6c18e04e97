// The results worker keeps each campaign's inputs between reads (CampaignInputsKeeper) and reads
// again only the runs whose change rows it has not seen: what it gives must be exactly what reading
// the campaign whole gives (readCampaignFigureInputs), after every kind of change the results read,
// and the results computed from it the same — while reading only the runs that changed.
import pg from 'pg';
import { secretBoxFrom } from '@erg/secrets';
import { createTestDatabase, TEST_SECRET_KEY, type TestDatabase } from '@erg/testkit';
import {
  createCampaign, createCluster, createDatabase, createProject, deleteRunEnergy, readResultsStamp, recordClusterCapabilities, RESULTS_CHANGES_FOLD_ABOVE, storeRunEnergy,
  TelemetryWriter, type Database,
} from '@erg/db';
import { forceRunEnd, testBatch, testCampaignSpec, testNodeFingerprint } from '@erg/db/testing';
import { CampaignInputsKeeper, campaignFiguresOf, readCampaignFigureInputs } from '../src';

/** Figures with phases and data movement, so that every input of the results is exercised. */
const figures = (energyJ: number, timeS = 10) => ({
  timeS, energyJ, method: 'integrated', coverage: 1,
  result: {
    timeS, energyJ, edpJs: energyJ * timeS, ed2pJs2: energyJ * timeS * timeS, avgPowerW: energyJ / timeS, coverage: 1, components: { gpu: energyJ * 0.6 }, flags: [],
    phases: { marked: true, phases: [{ name: 'step', energyJ: energyJ / 2, timeS: timeS / 2, occurrences: 1 }] },
  },
});

describe('CampaignInputsKeeper (Postgres)', () => {
  let tdb: TestDatabase;
  let db: Database;
  let clusterId: string;
  let campaignId: string;
  let runs: string[];
  const keeper = new CampaignInputsKeeper();

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDatabase(tdb.url);
    const projectId = (await createProject(db, { name: 'keeper' })).id;
    clusterId = (await createCluster(
      db, { projectId, name: 'c1', host: '127.0.0.1', port: 2222, username: 'root', privateKey: 'k', hostKeySha256: 'SHA256:x', workDir: '/w' }, secretBoxFrom({ ERG_SECRET_KEY: TEST_SECRET_KEY }),
    )).id;
    const campaign = await createCampaign(db, {
      name: 'kept', execution: 'slurm', clusterId, projectId, spec: testCampaignSpec(), specText: null, repetitions: 3,
      configurations: [{ key: 'a=1', parameters: { a: 1 } }, { key: 'a=2', parameters: { a: 2 } }, { key: 'a=3', parameters: { a: 3 } }],
    });
    campaignId = campaign.id;
    runs = campaign.runs.map((r) => r.id);
  });
  /** A statement by hand (the triggers see every writer). */
  async function sql(text: string, params: unknown[]): Promise<void> {
    const client = new pg.Client({ connectionString: tdb.url });
    await client.connect();
    try {
      await client.query(text, params);
    } finally {
      await client.end();
    }
  }
  afterAll(async () => {
    await db.close();
    await tdb.drop();
  });

  /** Reads through the keeper as the results reader does (the stamp first: it folds), and holds it equal to a whole read. */
  async function readsAsWhole(): Promise<{ read: 'whole' | 'changes'; runsRead: number }> {
    await readResultsStamp(db, campaignId);
    const { inputs, read, runsRead } = await keeper.read(db, campaignId);
    const whole = await readCampaignFigureInputs(db, campaignId);
    expect(inputs.rows).toEqual(whole.rows);
    expect([...inputs.runNodes]).toEqual([...whole.runNodes]);
    expect(inputs.phaseRows).toEqual(whole.phaseRows);
    expect(inputs.movementRows).toEqual(whole.movementRows);
    expect(inputs.context).toEqual(whole.context);
    expect(campaignFiguresOf(inputs)).toEqual(campaignFiguresOf(whole));
    return { read, runsRead };
  }

  test('after each kind of change, reads only the runs that changed and gives what a whole read gives', async () => {
    expect(await readsAsWhole()).toEqual({ read: 'whole', runsRead: 0 });
    // Runs completing with figures, one configuration after another.
    for (const [i, run] of runs.entries()) {
      await forceRunEnd(db, run, 'completed');
      await storeRunEnergy(db, run, figures(100 + i, 10 + (i % 3)), 1);
    }
    expect(await readsAsWhole()).toEqual({ read: 'changes', runsRead: runs.length });
    // A run's figures recomputed: the rows of the other configurations are the same objects (what was made of them is reused).
    const [a, b, c] = runs as [string, string, string];
    const before = (await keeper.read(db, campaignId)).inputs.rows;
    await storeRunEnergy(db, a, figures(150), 2);
    expect(await readsAsWhole()).toEqual({ read: 'changes', runsRead: 1 });
    const after = (await keeper.read(db, campaignId)).inputs.rows;
    expect(after.filter((row, i) => row === before[i]).length).toBe(runs.length - 3);
    // Its metrics and node list, by hand; its figures forgotten, then stored again.
    await sql(`UPDATE runs SET metrics = '{"steps": 7}', node_list = 'gh-[001-002]' WHERE id = $1`, [b]);
    expect(await readsAsWhole()).toEqual({ read: 'changes', runsRead: 1 });
    await deleteRunEnergy(db, a, 2);
    expect(await readsAsWhole()).toEqual({ read: 'changes', runsRead: 1 });
    await storeRunEnergy(db, a, figures(90), 3);
    // Nodes first seen and a fingerprint changing: the fingerprint classes follow.
    const writer = new TelemetryWriter(db);
    await writer.write(c, testBatch('gh-002', 0, { fingerprint: testNodeFingerprint('gh-002', '550.54.15') }));
    await writer.write(b, testBatch('gh-001', 0, { fingerprint: testNodeFingerprint('gh-001', '550.54.15') }));
    expect(await readsAsWhole()).toEqual({ read: 'changes', runsRead: 3 });
    await writer.write(b, testBatch('gh-001', 1, { fingerprint: testNodeFingerprint('gh-001', '535.104.05') }));
    expect(await readsAsWhole()).toEqual({ read: 'changes', runsRead: 1 });
    // A completed run leaving the results, and coming back; the cluster re-probed (no run changed).
    await sql(`UPDATE runs SET state = 'failed' WHERE id = $1`, [c]);
    expect(await readsAsWhole()).toEqual({ read: 'changes', runsRead: 1 });
    await sql(`UPDATE runs SET state = 'completed' WHERE id = $1`, [c]);
    await recordClusterCapabilities(db, clusterId, { probedAt: new Date().toISOString(), slurmVersion: 'slurm 24.11.5', powerHelper: null, powerHelperProblem: 'not installed' });
    expect(await readsAsWhole()).toEqual({ read: 'changes', runsRead: 1 });
    // Nothing changed: nothing read.
    expect(await readsAsWhole()).toEqual({ read: 'changes', runsRead: 0 });
  });

  test('reads the campaign whole when its change rows were folded before it saw them, and not when it had seen them', async () => {
    const [a] = runs as [string];
    for (let i = 0; i <= RESULTS_CHANGES_FOLD_ABOVE; i++) await storeRunEnergy(db, a, figures(10 + i), 10 + i);
    // readsAsWhole reads the stamp first, which folds the rows this keeper has not seen.
    expect((await readsAsWhole()).read).toBe('whole');
    await storeRunEnergy(db, a, figures(5), 1000);
    expect(await readsAsWhole()).toEqual({ read: 'changes', runsRead: 1 });
  });

  test('a keeper that has seen every row folded reads only what changed after the fold', async () => {
    const [a, b] = runs as [string, string];
    // Seen one by one, then folded by another reader's stamp.
    for (let i = 0; i <= RESULTS_CHANGES_FOLD_ABOVE; i++) {
      await storeRunEnergy(db, a, figures(20 + i), 2000 + i);
      if (i % 64 === 0) await keeper.read(db, campaignId);
    }
    await keeper.read(db, campaignId);
    await readResultsStamp(db, campaignId);
    await storeRunEnergy(db, b, figures(7), 5000);
    expect(await readsAsWhole()).toEqual({ read: 'changes', runsRead: 1 });
  });
});
