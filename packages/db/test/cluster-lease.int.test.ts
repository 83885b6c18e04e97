// The cluster lease: one holder per cluster across processes, free the moment its holder's
// connection ends, and an epoch that only grows — what fences a cycle that lost its lease.
import { spawn } from 'node:child_process';
import {
  advanceSubmitEpoch, claimRunsForSubmission, createCampaign, createCluster, createDatabase, createProject, currentSubmitEpoch, markRunsQueued,
  returnRunsToPending, tryTakeClusterLease, type Database,
} from '../src';
import { secretBoxFrom } from '@erg/secrets';
import { createTestDatabase, TEST_SECRET_KEY, waitFor, type TestDatabase } from '@erg/testkit';
import { prismaOf } from '../src/client';
import { testCampaignSpec } from '@erg/db/testing';

describe('cluster lease', () => {
  let tdb: TestDatabase;
  let db: Database;
  let clusterId: string;
  let campaignId: string;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDatabase(tdb.url);
    const projectId = (await createProject(db, { name: 'lease' })).id;
    const cluster = await createCluster(db, {
      projectId, name: 'c1', host: '127.0.0.1', port: 2222, username: 'root', privateKey: 'k', hostKeySha256: 'SHA256:x', workDir: '/tmp/w',
    }, secretBoxFrom({ ERG_SECRET_KEY: TEST_SECRET_KEY }));
    clusterId = cluster.id;
    const campaign = await createCampaign(db, {
      name: 't', execution: 'slurm', clusterId, projectId, spec: testCampaignSpec(), specText: null, repetitions: 4,
      configurations: [{ key: 'a=1', parameters: { a: 1 } }],
    });
    campaignId = campaign.id;
  });
  afterAll(async () => {
    await db.close();
    await tdb.drop();
  });

  test('one holder at a time; a released lease can be taken again, with a larger epoch', async () => {
    const a = await tryTakeClusterLease(db, clusterId);
    expect(a).not.toBeNull();
    expect(await tryTakeClusterLease(db, clusterId)).toBeNull();
    const first = await a!.epoch();
    expect(await a!.epoch()).toBe(first); // one epoch per lease
    await a!.release();
    const b = await tryTakeClusterLease(db, clusterId);
    expect(await b!.epoch()).toBe(first + 1n);
    await b!.release();
  });

  test('the lease of a process that was killed is free at once', async () => {
    // Another process takes the lease and is SIGKILLed while holding it.
    const script = `
      const { createDatabase, tryTakeClusterLease } = require(${JSON.stringify(require.resolve('../dist/index.js'))});
      (async () => { const l = await tryTakeClusterLease(createDatabase(${JSON.stringify(tdb.url)}), ${JSON.stringify(clusterId)}); console.log(l ? 'held' : 'busy'); setInterval(() => {}, 1000); })();`;
    const holder = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    holder.stdout.on('data', (d) => (out += d));
    await waitFor(() => out.includes('held'), { timeoutMs: 15_000, what: 'the other process to hold the lease' });
    expect(await tryTakeClusterLease(db, clusterId)).toBeNull();
    holder.kill('SIGKILL');
    const taken = await waitFor(() => tryTakeClusterLease(db, clusterId).then((l) => l ?? undefined), { timeoutMs: 5_000, intervalMs: 50, what: 'the lease to be free' });
    await taken.release();
  });

  test('claims carry the epoch; a stale lease claims nothing and cannot move a newer lease\'s runs', async () => {
    const old = await tryTakeClusterLease(db, clusterId);
    const oldEpoch = await old!.epoch();
    await old!.release();
    const lease = await tryTakeClusterLease(db, clusterId);
    const epoch = await lease!.epoch();
    const claimed = await claimRunsForSubmission(db, clusterId, 2, epoch);
    expect(claimed).toHaveLength(2);
    expect(await claimRunsForSubmission(db, clusterId, 2, oldEpoch)).toEqual([]);
    const ids = claimed.map((r) => r.id);
    // The old lease's cycle, still running somewhere, tries to record or return them: nothing happens.
    expect(await markRunsQueued(db, [{ runId: ids[0]!, slurmJobId: '1' }], { epoch: oldEpoch, claimedBy: 'this-lease' })).toEqual([]);
    expect(await returnRunsToPending(db, ids, 'x', { epoch: oldEpoch, claimedBy: 'earlier-lease' })).toEqual([]);
    // The lease that claimed them records them.
    expect(await markRunsQueued(db, [{ runId: ids[0]!, slurmJobId: '1' }], { epoch, claimedBy: 'this-lease' })).toEqual([ids[0]]);
    // A later lease settles the other as in doubt.
    await lease!.release();
    const later = await tryTakeClusterLease(db, clusterId);
    expect(await returnRunsToPending(db, ids, 'settled', { epoch: await later!.epoch(), claimedBy: 'earlier-lease' })).toEqual([ids[1]]);
    await later!.release();
    const rows = await prismaOf(db).run.findMany({ where: { campaignId, id: { in: ids } }, orderBy: { position: 'asc' } });
    expect(rows.map((r) => r.state).sort()).toEqual(['pending', 'queued']);
  });

  test('a fence ahead of the database (restored from a backup) moves the next epoch past it', async () => {
    const now = await currentSubmitEpoch(db, clusterId);
    await advanceSubmitEpoch(db, clusterId, now + 100n);
    await advanceSubmitEpoch(db, clusterId, now); // never backwards
    const lease = await tryTakeClusterLease(db, clusterId);
    expect(await lease!.epoch()).toBe(now + 101n);
    await lease!.release();
  });
});
