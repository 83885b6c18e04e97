// Job arrays on the local Slurm cluster: runs of a campaign that ask for the same resources go as
// array jobs (chunked to the cluster's MaxArraySize), each task running its own run directory;
// one run is cancelled as its task alone; a refused array fails every run in it with Slurm's words.
import { campaignRunOrder } from '@erg/sweep';
import { waitFor } from '@erg/testkit';
import { Harness } from './harness';

jest.setTimeout(300_000);

const arrayOf = (slurmJobId: string | null) => /^(\d+)_(\d+)$/.exec(slurmJobId ?? '');

describe('job arrays', () => {
  const h = new Harness();

  beforeAll(async () => {
    await h.start();
    await h.registerCluster('local');
    await h.startInProcessScheduler();
    // The scheduler probes the cluster at first contact: MaxArraySize comes from scontrol show config.
    await waitFor(async () => (await h.call('GET', '/v1/clusters/local')).body.capabilities?.maxArraySize > 0, {
      timeoutMs: 30_000, what: 'the probe to read MaxArraySize',
    });
  });
  afterAll(async () => {
    await h.stop();
  });

  test('runs that ask for the same resources are one array job; each task runs its own run directory', async () => {
    const cluster = (await h.call('GET', '/v1/clusters/local')).body;
    expect(cluster.capabilities.maxArraySize).toBe(1001);
    const campaign = await h.submit({
      name: 'array', cluster: 'local', parameters: { i: [1, 2, 3, 4, 5] }, resources: { time: '00:05:00' },
      run: 'echo "run {{i}} task $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_JOB_ID in $PWD"',
    });
    const runs = await h.waitForCampaignEnd(campaign.id);
    expect(runs.map((r) => r.state)).toEqual(Array(5).fill('completed'));
    const arrays = new Set(runs.map((r) => arrayOf(r.slurmJobId)?.[1]));
    expect(arrays.size).toBe(1);
    const [arrayJobId] = [...arrays];
    expect(arrayJobId).toMatch(/^\d+$/);
    for (const run of runs) {
      const [, , task] = arrayOf(run.slurmJobId)!;
      const detail = (await h.call('GET', `/v1/runs/${run.id}`)).body;
      expect(detail).toMatchObject({ arrayJobId, arrayTaskId: Number(task) });
      const logs = (await h.call('GET', `/v1/runs/${run.id}/logs`)).body;
      // The task ran this run's own configuration, in this run's own directory.
      expect(logs.stdout.trim()).toBe(`run ${run.parameters.i} task ${task} of ${arrayJobId} in ${detail.runDir}`);
    }
    // Task order is the campaign's run order: task k is the k-th run of the seed's shuffle (i = configuration + 1).
    const order = [...campaignRunOrder(5, 1, campaign.design)].map((r) => r.configuration + 1);
    expect(runs.map((r) => [Number(arrayOf(r.slurmJobId)![2]), r.parameters.i])).toEqual(order.map((i, k) => [k, i]));
    await h.expectOneJobPerRun(runs);
  });

  test('arrays are chunked to the cluster\'s MaxArraySize; a run left alone is a job of its own', async () => {
    // As if the probe had read MaxArraySize=2 (a site with small arrays).
    await h.sql(`UPDATE clusters SET capabilities = jsonb_set(capabilities, '{maxArraySize}', '2') WHERE name = 'local'`);
    try {
      const campaign = await h.submit({ name: 'chunked', cluster: 'local', parameters: { i: [1, 2, 3, 4, 5] }, run: 'echo {{i}}' });
      const runs = await h.waitForCampaignEnd(campaign.id);
      expect(runs.map((r) => r.state)).toEqual(Array(5).fill('completed'));
      const byArray = new Map<string, number[]>();
      const single: string[] = [];
      for (const r of runs) {
        const m = arrayOf(r.slurmJobId);
        if (m) byArray.set(m[1]!, [...(byArray.get(m[1]!) ?? []), Number(m[2])].sort());
        else single.push(r.slurmJobId);
      }
      expect([...byArray.values()]).toEqual([[0, 1], [0, 1]]);
      expect(single).toHaveLength(1);
      expect(single[0]).toMatch(/^\d+$/);
      await h.expectOneJobPerRun(runs);
    } finally {
      await h.sql(`UPDATE clusters SET capabilities = jsonb_set(capabilities, '{maxArraySize}', '1001') WHERE name = 'local'`);
    }
  });

  test('cancelling one run cancels its task alone; the other tasks of the array run to the end', async () => {
    const campaign = await h.submit({ name: 'cancel-one', cluster: 'local', parameters: { i: [1, 2, 3] }, resources: { time: '00:05:00' }, run: 'sleep 8\necho {{i}}' });
    const victim = campaign.runs[1]!.id;
    // Running, so that Slurm keeps a record of its task (a pending task cancelled alone leaves none: next test).
    await waitFor(async () => (await h.call('GET', `/v1/runs/${victim}`)).body.state === 'running', { timeoutMs: 60_000, what: 'the victim\'s task to run' });
    expect(arrayOf((await h.call('GET', `/v1/runs/${victim}`)).body.slurmJobId)).not.toBeNull();
    const cancel = await h.call('POST', `/v1/runs/${victim}/cancel`);
    expect(cancel).toMatchObject({ status: 202, body: { id: victim, outcome: 'cancelling' } });
    const runs = await h.waitForCampaignEnd(campaign.id);
    const states = Object.fromEntries(runs.map((r) => [r.id, r.state]));
    expect(states[victim]).toBe('cancelled');
    expect(runs.filter((r) => r.id !== victim).map((r) => r.state)).toEqual(['completed', 'completed']);
    // Slurm's own view: that task cancelled, its siblings completed.
    const jobs = await h.slurmJobsFor(runs.map((r) => r.id));
    expect(jobs.get(victim)!.map((j) => j.state)).toEqual(['CANCELLED']);
    for (const r of runs.filter((x) => x.id !== victim)) expect(jobs.get(r.id)!.map((j) => j.state)).toEqual(['COMPLETED']);
    expect((await h.call('GET', `/v1/runs/${victim}`)).body.cancelRequestedAt).not.toBeNull();
    // Cancelling again, or a run that ended, changes nothing.
    expect((await h.call('POST', `/v1/runs/${victim}/cancel`)).body.outcome).toBe('ended');
  });

  test('a task cancelled while still pending in Slurm (which then keeps no record of it) ends cancelled', async () => {
    // Each task takes all 4 of the node's GPUs: one runs, the others wait in the array's pending rest.
    const campaign = await h.submit({ name: 'cancel-pending-task', cluster: 'local', parameters: { i: [1, 2, 3] }, resources: { gpusPerNode: 4, time: '00:05:00' }, run: 'sleep 4' });
    const victim = campaign.runs[2]!.id;
    // All 4 GPUs free at once can take minutes: the files beside this one (the CLI's quickstart, 5
    // repetitions of 1-GPU runs) keep some busy, and Slurm backfills their small jobs first.
    await waitFor(async () => (await h.call('GET', `/v1/runs/${campaign.runs[0]!.id}`)).body.state === 'running', { timeoutMs: 240_000, what: 'the first task to run' });
    expect((await h.call('GET', `/v1/runs/${victim}`)).body.state).toBe('queued');
    expect((await h.call('POST', `/v1/runs/${victim}/cancel`)).body.outcome).toBe('cancelling');
    const runs = await h.waitForCampaignEnd(campaign.id);
    expect(runs.map((r) => [r.id, r.state])).toEqual(campaign.runs.map((r) => [r.id, r.id === victim ? 'cancelled' : 'completed']));
    expect(runs.find((r) => r.id === victim)!.reason).toMatch(/cancelled before it started/);
  }, 420_000);

  test('a pending run cancelled before submission ends at once', async () => {
    // A campaign on a cluster the scheduler cannot reach keeps its runs pending.
    await h.registerCluster('away', { port: 1 });
    const campaign = await h.submit({ name: 'cancel-pending', cluster: 'away', parameters: { i: [1, 2] }, run: 'true' });
    const cancel = await h.call('POST', `/v1/runs/${campaign.runs[0]!.id}/cancel`);
    // Pending: cancelled at once. Caught in a claim (the scheduler tries the cluster and gives the
    // runs back): marked, never claimed again, and ended by the scheduler's next sweep.
    expect(['cancelled', 'cancelling']).toContain(cancel.body.outcome);
    await waitFor(async () => (await h.call('GET', `/v1/runs/${campaign.runs[0]!.id}`)).body.state === 'cancelled', { timeoutMs: 30_000, what: 'the run to end cancelled' });
    expect((await h.call('GET', `/v1/runs/${campaign.runs[0]!.id}`)).body).toMatchObject({ state: 'cancelled', reason: 'cancelled before submission' });
    // The other run stays pending: the scheduler keeps trying the cluster (a claim shows it
    // 'submitting' for a moment, then gives it back), and never cancels or submits it.
    // Every look at it, not only the one that sees it pending (the next claim can come between two
    // requests): never cancelled, never handed to Slurm.
    const seen: { state: string; slurmJobId: unknown; cancelRequestedAt: unknown }[] = [];
    await waitFor(
      async () => {
        const { body } = await h.call('GET', `/v1/runs/${campaign.runs[1]!.id}`);
        seen.push({ state: body.state, slurmJobId: body.slurmJobId, cancelRequestedAt: body.cancelRequestedAt });
        return body.state === 'pending';
      },
      { timeoutMs: 30_000, what: 'the other run back in pending' },
    );
    for (const look of seen) expect(look).toEqual({ state: expect.stringMatching(/^(pending|submitting)$/), slurmJobId: null, cancelRequestedAt: null });
    expect(seen.at(-1)?.state).toBe('pending');
  });

  test('sbatch refusing an array fails every run in it with sbatch\'s message', async () => {
    const campaign = await h.submit({ name: 'badpart-array', cluster: 'local', parameters: { i: [1, 2, 3] }, run: 'true', resources: { partition: 'nosuchpartition' } });
    const runs = await h.waitForCampaignEnd(campaign.id);
    for (const run of runs) {
      expect(run).toMatchObject({ state: 'failed', slurmJobId: null });
      expect(run.reason).toMatch(/sbatch refused the job: .*partition/i);
    }
  });
});
