import { secretBoxFrom } from '@erg/secrets';
import { createTestDatabase, TEST_SECRET_KEY, type TestDatabase } from '@erg/testkit';
import {
  createProject,
  claimRunsForSubmission, createCampaign, createCluster, createDatabase, failRunsAtSubmission, findRunDetail, finishRun, getCampaignSummary,
  listTrackedRuns, markRunsQueued, recordStagedRuns, recordSlurmProgress, requestCampaignCancel, cancelPendingRuns, cancelPendingRunsOnCluster, returnRunsToPending, type Database, type SlurmProgress,
} from '@erg/db';
import { prismaOf } from '../src/client';
import { testCampaignSpec } from '@erg/db/testing';

describe('run state transitions', () => {
  let tdb: TestDatabase;
  let db: Database;
  let clusterId: string;
  let projectId: string;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDatabase(tdb.url);
    projectId = (await createProject(db, { name: 'runs' })).id;
    const cluster = await createCluster(db, {
      projectId, name: 'c1', host: '127.0.0.1', port: 2222, username: 'root', privateKey: 'k', hostKeySha256: 'SHA256:x', workDir: '/tmp/w',
    }, secretBoxFrom({ ERG_SECRET_KEY: TEST_SECRET_KEY }));
    clusterId = cluster.id;
  });
  afterAll(async () => {
    await db.close();
    await tdb.drop();
  });

  async function newCampaign(configs: number, repetitions: number) {
    return createCampaign(db, {
      name: 't', execution: 'slurm', clusterId, projectId, spec: testCampaignSpec(), specText: null, repetitions,
      configurations: Array.from({ length: configs }, (_, i) => ({ key: `a=${i}`, parameters: { a: i } })),
    });
  }

  test('a campaign is stored whole with every run pending', async () => {
    const c = await newCampaign(3, 2);
    expect(c.runs).toHaveLength(6);
    const summary = await getCampaignSummary(db, c.id);
    expect(summary?.runCounts).toEqual({ pending: 6 });
    expect(summary?.state).toBe('pending');
  });

  test('concurrent claims never hand the same run to two schedulers', async () => {
    const c = await newCampaign(50, 2);
    const claims = await Promise.all(Array.from({ length: 5 }, () => claimRunsForSubmission(db, clusterId, 40)));
    const ids = claims.flat().map((r) => r.id).filter((id) => c.runs.some((r) => r.id === id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(100);
    // tidy: back to pending so later tests start clean
    await returnRunsToPending(db, claims.flat().map((r) => r.id), 'test');
  });

  test('claim → queued → progress → finished, each transition guarded by its precondition', async () => {
    const c = await newCampaign(1, 1);
    const runId = c.runs[0]!.id;
    const claimed = (await claimRunsForSubmission(db, clusterId, 1000)).filter((r) => r.campaignId === c.id);
    expect(claimed.map((r) => r.id)).toEqual([runId]);
    expect(claimed[0]!.parameters).toEqual({ a: 0 });

    await recordStagedRuns(db, [{ runId, runDir: '/tmp/w/x', jobScript: '#!/bin/bash' }]);
    expect(await markRunsQueued(db, [{ runId, slurmJobId: '42' }])).toEqual([runId]);
    // A second "queued" for the same run (e.g. a replayed submission result) changes nothing.
    expect(await markRunsQueued(db, [{ runId, slurmJobId: '43' }])).toEqual([]);
    // A run that left `submitting` cannot be returned to pending.
    expect(await returnRunsToPending(db, [runId], 'nope')).toEqual([]);

    const progress = { runId, state: 'running' as const, slurmState: 'RUNNING', reason: null, startedAt: new Date(), nodeList: 'n1' };
    expect(await recordSlurmProgress(db, [progress])).toEqual([runId]);
    expect(await recordSlurmProgress(db, [progress])).toEqual([]); // unchanged: no event

    const tracked = await listTrackedRuns(db, clusterId);
    expect(tracked.find((t) => t.id === runId)).toMatchObject({ state: 'running', slurmJobId: '42' });

    const cooldown = {
      waitedS: 2.5, reached: true, window: { startMs: 1000, endMs: 3500 },
      nodes: [{ node: 'n1', waitedS: 2.6, reached: true, criterion: 'settled' as const, powerW: 80, referenceW: null, maxGpuTempC: null, referenceTempC: null, gpus: [] }],
    };
    const finished = {
      runId, state: 'completed' as const, slurmState: 'COMPLETED', reason: null, exitCode: 0, signal: 0, startedAt: null,
      endedAt: new Date(), nodeList: null, workloadStartNs: 1n, workloadEndNs: 2n, idleStartNs: null, idleEndNs: null, metrics: { x: 1 }, stdoutTail: 'out', stderrTail: '',
      cooldown,
    };
    expect(await finishRun(db, finished)).toBe(true);
    // The cooldown the job and its agents recorded is the run's, as GET /v1/runs/:id reads it.
    expect((await findRunDetail(db, runId))!.cooldown).toEqual(cooldown);
    expect(await finishRun(db, { ...finished, state: 'failed' })).toBe(false);
    const run = await prismaOf(db).run.findUniqueOrThrow({ where: { id: runId }, include: { events: { orderBy: { id: 'asc' } } } });
    expect(run.state).toBe('completed');
    expect(run.slurmJobId).toBe('42');
    expect(run.nodeList).toBe('n1');
    expect(run.runDir).toBe('/tmp/w/x');
    expect(run.jobScript).toBe('#!/bin/bash');
    expect(run.events.map((e) => e.to)).toEqual(['pending', 'submitting', 'queued', 'running', 'completed']);
  });

  test('sbatch refusal fails the run; cancel stops pending runs from ever being claimed', async () => {
    const c = await newCampaign(2, 1);
    const [a, b] = (await claimRunsForSubmission(db, clusterId, 1000)).filter((r) => r.campaignId === c.id);
    await returnRunsToPending(db, [b!.id], 'cluster unreachable');
    await failRunsAtSubmission(db, [{ runId: a!.id, reason: 'sbatch: error: invalid partition' }]);
    expect(await requestCampaignCancel(db, c.id)).toEqual({ pending: 1, active: 0 });
    // Requested, the pending run is never claimed again, even before it is cancelled ...
    expect((await claimRunsForSubmission(db, clusterId, 1000)).filter((r) => r.campaignId === c.id)).toEqual([]);
    // ... which is one statement for all of them.
    expect(await cancelPendingRuns(db, c.id)).toBe(1);
    expect(await cancelPendingRuns(db, c.id)).toBe(0);
    const summary = await getCampaignSummary(db, c.id);
    expect(summary?.runCounts).toEqual({ failed: 1, cancelled: 1 });
    expect(summary?.state).toBe('cancelled');
  });

  test('Slurm progress moves a run only as the lifecycle allows: requeues go back to queued, nothing runs again from completing, nothing leaves an end', async () => {
    const c = await newCampaign(1, 1);
    const runId = c.runs[0]!.id;
    await claimRunsForSubmission(db, clusterId, 1000);
    await markRunsQueued(db, [{ runId, slurmJobId: '77' }]);
    const report = (state: SlurmProgress['state'], slurmState: string) => ({ runId, state, slurmState, reason: null, startedAt: null, nodeList: 'n1' });
    const stateOf = async () => (await listTrackedRuns(db, clusterId)).find((t) => t.id === runId)?.state;

    expect(await recordSlurmProgress(db, [report('running', 'RUNNING')])).toEqual([runId]);
    expect(await recordSlurmProgress(db, [report('completing', 'COMPLETING')])).toEqual([runId]);
    // A report naming a state no poll may set (an unchecked cast upstream) is refused: a run is
    // not sent back before its claim, nor ended without finishRun's record.
    expect(await recordSlurmProgress(db, [{ ...report('completing', 'COMPLETING'), state: 'pending' as never }])).toEqual([]);
    expect(await recordSlurmProgress(db, [{ ...report('completing', 'COMPLETED'), state: 'completed' as never }])).toEqual([]);
    // sacct lagging behind squeue still says RUNNING for a job that is completing: stale, refused.
    expect(await recordSlurmProgress(db, [report('running', 'RUNNING')])).toEqual([]);
    expect(await stateOf()).toBe('completing');
    // Requeued: back in the queue, and it may run again from there.
    expect(await recordSlurmProgress(db, [report('queued', 'REQUEUED')])).toEqual([runId]);
    expect(await recordSlurmProgress(db, [report('running', 'RUNNING')])).toEqual([runId]);
    // Suspended (shown as queued) and resumed.
    expect(await recordSlurmProgress(db, [report('queued', 'SUSPENDED')])).toEqual([runId]);
    expect(await recordSlurmProgress(db, [report('running', 'RUNNING')])).toEqual([runId]);

    await finishRun(db, {
      runId, state: 'completed', slurmState: 'COMPLETED', reason: null, exitCode: 0, signal: 0, startedAt: null, endedAt: new Date(), nodeList: null,
      workloadStartNs: null, workloadEndNs: null, idleStartNs: null, idleEndNs: null, metrics: {}, stdoutTail: null, stderrTail: null,
    });
    // An ended run is never moved again by a poll.
    expect(await recordSlurmProgress(db, [report('running', 'RUNNING')])).toEqual([]);
    expect((await getCampaignSummary(db, c.id))?.runCounts).toEqual({ completed: 1 });
  });

  test('the cluster sweep ends the pending runs of every cancel-requested campaign on it, and only those', async () => {
    const requested = await newCampaign(3, 1);
    const untouched = await newCampaign(2, 1);
    await requestCampaignCancel(db, requested.id); // the API stopped before cancelling them itself
    expect(await cancelPendingRunsOnCluster(db, clusterId)).toBe(3);
    expect(await cancelPendingRunsOnCluster(db, clusterId)).toBe(0);
    expect((await getCampaignSummary(db, requested.id))?.runCounts).toEqual({ cancelled: 3 });
    expect((await getCampaignSummary(db, untouched.id))?.runCounts).toEqual({ pending: 2 });
  });

  test('pending runs of a campaign without a cancel request are not cancelled', async () => {
    const c = await newCampaign(2, 1);
    expect(await cancelPendingRuns(db, c.id)).toBe(0);
    expect((await getCampaignSummary(db, c.id))?.runCounts).toEqual({ pending: 2 });
  });

  test('cancelling a campaign whose runs have all ended changes nothing', async () => {
    const c = await newCampaign(1, 1);
    const [r] = (await claimRunsForSubmission(db, clusterId, 1000)).filter((x) => x.campaignId === c.id);
    await failRunsAtSubmission(db, [{ runId: r!.id, reason: 'refused' }]);
    expect(await requestCampaignCancel(db, c.id)).toEqual({ pending: 0, active: 0 });
    const summary = await getCampaignSummary(db, c.id);
    expect(summary?.campaign.cancelRequestedAt).toBeNull();
    expect(summary?.state).toBe('failed');
  });
});
