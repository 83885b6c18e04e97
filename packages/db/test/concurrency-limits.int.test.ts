// claimRunsForSubmission under clusters.max_concurrent_runs and projects.max_concurrent_runs:
// never more active runs than the limits, even with several schedulers claiming at once.
import { RUN_STATES_HOLDING_A_SLOT } from '@erg/spec';
import { createTestDatabase, type TestDatabase } from '@erg/testkit';
import {
  claimRunsForSubmission, createCampaign, createDatabase, createProject, markRunsQueued, type Database,
} from '@erg/db';
import { poolOf, prismaOf } from '../src/client';
import { testCampaignSpec } from '@erg/db/testing';

describe('concurrency limits in the claim', () => {
  let tdb: TestDatabase;
  let db: Database;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDatabase(tdb.url);
  });
  afterAll(async () => {
    await db.close();
    await tdb.drop();
  });

  // Straight to the table: how clusters are created (credentials and all) is not this test's business.
  function newCluster(name: string, projectId: string, maxConcurrentRuns: number | null, maxQueuedJobs: number | null = null) {
    return prismaOf(db).cluster.create({
      data: { name, projectId, host: '127.0.0.1', port: 2222, username: 'root', privateKey: 'k', hostKeySha256: 'SHA256:x', workDir: '/tmp/w', maxConcurrentRuns, maxQueuedJobs },
    });
  }

  async function setup(name: string, clusterMax: number | null, projectMax: number | null, maxQueuedJobs: number | null = null) {
    const project = await createProject(db, { name, maxConcurrentRuns: projectMax });
    const cluster = await newCluster(name, project.id, clusterMax, maxQueuedJobs);
    const campaign = await createCampaign(db, {
      name: 't', execution: 'slurm', clusterId: cluster.id, projectId: project.id, spec: testCampaignSpec(), specText: null, repetitions: 1,
      configurations: Array.from({ length: 10 }, (_, i) => ({ key: `a=${i}`, parameters: { a: i } })),
    });
    return { project, cluster, campaign };
  }

  async function active(clusterId: string): Promise<number> {
    return prismaOf(db).run.count({ where: { campaign: { clusterId }, state: { in: [...RUN_STATES_HOLDING_A_SLOT] } } });
  }

  test('five schedulers claiming at once claim no more than the cluster limit; the rest wait with the reason', async () => {
    const { cluster, campaign } = await setup('limited', 3, null);
    const claims = await Promise.all(Array.from({ length: 5 }, () => claimRunsForSubmission(db, cluster.id, 1000)));
    expect(claims.flat()).toHaveLength(3);
    expect(await active(cluster.id)).toBe(3);
    const waiting = await prismaOf(db).run.findMany({ where: { campaignId: campaign.id, state: 'pending' } });
    expect(waiting).toHaveLength(7);
    for (const r of waiting) expect(r.reason).toBe('waiting: cluster "limited" is at its limit of 3 concurrent runs');

    // Queued runs still count; a finished one frees its place, and the claim clears the reason.
    await markRunsQueued(db, claims.flat().map((r, i) => ({ runId: r.id, slurmJobId: String(100 + i) })));
    expect(await claimRunsForSubmission(db, cluster.id, 1000)).toEqual([]);
    await poolOf(db).query(`UPDATE runs SET state = 'completed' WHERE id = $1`, [claims.flat()[0]!.id]);
    const next = await claimRunsForSubmission(db, cluster.id, 1000);
    expect(next).toHaveLength(1);
    expect((await prismaOf(db).run.findUniqueOrThrow({ where: { id: next[0]!.id } })).reason).toBeNull();
    expect(await active(cluster.id)).toBe(3);
  });

  test("a project's limit counts its runs on every cluster", async () => {
    const { project, cluster } = await setup('proj', null, 4);
    const second = await newCluster('proj-2', project.id, null);
    const other = await createCampaign(db, {
      name: 't2', execution: 'slurm', clusterId: second.id, projectId: project.id, spec: testCampaignSpec(), specText: null, repetitions: 1,
      configurations: Array.from({ length: 10 }, (_, i) => ({ key: `a=${i}`, parameters: { a: i } })),
    });
    const [a, b] = await Promise.all([claimRunsForSubmission(db, cluster.id, 1000), claimRunsForSubmission(db, second.id, 1000)]);
    expect(a.length + b.length).toBe(4);
    const waiting = await prismaOf(db).run.findMany({ where: { campaignId: other.id, state: 'pending' } });
    expect(waiting.length).toBeGreaterThan(0);
    for (const r of waiting) expect(r.reason).toBe('waiting: project "proj" is at its limit of 4 concurrent runs');
  });

  test("maxQueuedJobs counts runs with a job in Slurm's queue (not completing ones), concurrently claimed too, and names itself as the reason", async () => {
    const { cluster, campaign } = await setup('queue-cap', null, null, 4);
    const claims = await Promise.all(Array.from({ length: 5 }, () => claimRunsForSubmission(db, cluster.id, 1000)));
    const claimed = claims.flat();
    expect(claimed).toHaveLength(4);
    const waiting = await prismaOf(db).run.findMany({ where: { campaignId: campaign.id, state: 'pending' } });
    expect(waiting).toHaveLength(6);
    for (const r of waiting) expect(r.reason).toBe('waiting: cluster "queue-cap" has 4 Slurm jobs of erg queued or running, its maxQueuedJobs');

    await markRunsQueued(db, claimed.map((r, i) => ({ runId: r.id, slurmJobId: `200_${i}` })));
    await poolOf(db).query(`UPDATE runs SET state = 'running' WHERE id = $1`, [claimed[0]!.id]);
    expect(await claimRunsForSubmission(db, cluster.id, 1000)).toEqual([]);
    // A completing run's job has left Slurm's queue: its place is free for the site's limit, not
    // for maxConcurrentRuns (which counts it until its results are in).
    await poolOf(db).query(`UPDATE runs SET state = 'completing' WHERE id = ANY($1::uuid[])`, [[claimed[0]!.id, claimed[1]!.id]]);
    expect(await claimRunsForSubmission(db, cluster.id, 1000)).toHaveLength(2);
    expect(await claimRunsForSubmission(db, cluster.id, 1000)).toEqual([]);
  });

  test('with both cluster limits the tighter one decides and is the reason', async () => {
    const { cluster, campaign } = await setup('both-caps', 3, null, 5);
    expect(await claimRunsForSubmission(db, cluster.id, 1000)).toHaveLength(3);
    const waiting = await prismaOf(db).run.findMany({ where: { campaignId: campaign.id, state: 'pending' } });
    for (const r of waiting) expect(r.reason).toBe('waiting: cluster "both-caps" is at its limit of 3 concurrent runs');
  });

  test('no limits: the batch size alone bounds the claim', async () => {
    const { cluster } = await setup('free', null, null);
    expect(await claimRunsForSubmission(db, cluster.id, 6)).toHaveLength(6);
    expect(await claimRunsForSubmission(db, cluster.id, 1000)).toHaveLength(4);
  });
});
