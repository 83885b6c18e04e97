// End to end on the real local Slurm cluster over SSH: REST API → BullMQ scheduler → SFTP →
// sbatch → squeue/sacct → stored results.
import { existsSync } from 'node:fs';
import { requestCampaignCancel } from '@erg/db';
import { clusterHostPath, uniqueName, waitFor } from '@erg/testkit';
import { localClusterHarness, Relay } from './harness';

jest.setTimeout(300_000);

describe('campaigns on the local Slurm cluster', () => {
  const h = localClusterHarness();

  /** A run that cannot be submitted stays pending, with the reason shown by GET /v1/runs/:id. */
  function waitForPendingReason(runId: string): Promise<{ state: string; reason: string }> {
    return waitFor(
      async () => {
        const { body } = await h.call('GET', `/v1/runs/${runId}`);
        return body.state === 'pending' && body.reason ? body : undefined;
      },
      { timeoutMs: 30_000, what: `a pending reason on run ${runId}` },
    );
  }

  test('a 2 × 2 sweep with 2 repetitions runs to completion with times, metrics, logs and one job per run', async () => {
    const campaign = await h.submit({
      name: 'sweep', cluster: 'local', repetitions: 2,
      parameters: { a: [1, 2], mode: ['x', 'y'] },
      resources: { cpusPerTask: 1, gpusPerNode: 1, time: '00:05:00' },
      files: { 'input.cfg': 'mode={{mode}}\n' },
      run: 'cat input.cfg\necho "steps=$(( {{a}} * 10 ))"\necho "gpus=$SLURM_GPUS_ON_NODE" \nsleep 1\necho done >&2',
      metrics: [{ name: 'steps', regex: 'steps=([0-9]+)' }],
    });
    expect(campaign.runs).toHaveLength(8);
    const runs = await h.waitForCampaignEnd(campaign.id);
    for (const run of runs) {
      expect(run).toMatchObject({ state: 'completed', exitCode: 0, reason: null });
      // The eight runs ask for the same resources: one array job, each run one task of it.
      expect(run.slurmJobId).toMatch(/^\d+_[0-7]$/);
      expect(run.timeS).toBeGreaterThan(0.9);
      expect(run.timeS).toBeLessThan(60);
      expect(run.metrics).toEqual({ steps: Number(run.parameters.a) * 10 });
      expect(run.nodeList).toBeTruthy();
      expect(new Date(run.endedAt).getTime()).toBeGreaterThanOrEqual(new Date(run.startedAt).getTime());
      expect(run.jobScript).toContain(`#SBATCH --job-name=erg-${run.id}`);
      expect(run.jobScript).toContain('#SBATCH --gpus-per-node=1');
    }
    expect(new Set(runs.map((r) => r.slurmJobId.split('_')[0])).size).toBe(1);
    expect(new Set(runs.map((r) => r.slurmJobId)).size).toBe(8);
    const detail = (await h.call('GET', `/v1/runs/${runs[0].id}`)).body;
    expect(detail).toMatchObject({ arrayJobId: runs[0].slurmJobId.split('_')[0], arrayTaskId: Number(runs[0].slurmJobId.split('_')[1]) });
    const logs = await h.call('GET', `/v1/runs/${runs[0].id}/logs`);
    expect(logs.body.source).toBe('cluster');
    expect(logs.body.stdout).toContain(`mode=${runs[0].parameters.mode}`);
    expect(logs.body.stdout).toContain('gpus=1');
    expect(logs.body.stderr).toContain('done');
    const summary = await h.call('GET', `/v1/campaigns/${campaign.id}`);
    expect(summary.body).toMatchObject({ state: 'completed', runCounts: { completed: 8 } });
    // Exactly once: Slurm holds exactly one job (array task) per run.
    const jobs = await h.slurmJobsFor(runs.map((r) => r.id));
    expect([...jobs.values()].map((j) => j.length)).toEqual(Array(8).fill(1));
  });

  test('a failing job ends failed with its exit code and a reason', async () => {
    const campaign = await h.submit({ name: 'fail', cluster: 'local', run: 'echo about to fail\nexit 3', resources: { time: '2' } });
    const [run] = await h.waitForCampaignEnd(campaign.id);
    expect(run).toMatchObject({ state: 'failed', exitCode: 3, slurmState: 'FAILED' });
    expect(run.reason).toMatch(/code 3/);
    expect((await h.call('GET', `/v1/campaigns/${campaign.id}`)).body.state).toBe('failed');
  });

  test('sbatch refusing a job (no such partition) fails the run with sbatch\'s message', async () => {
    const campaign = await h.submit({ name: 'badpart', cluster: 'local', run: 'true', resources: { partition: 'nosuchpartition' } });
    const [run] = await h.waitForCampaignEnd(campaign.id);
    expect(run.state).toBe('failed');
    expect(run.slurmJobId).toBeNull();
    expect(run.reason).toMatch(/partition/i);
  });

  test('cancel: queued and running jobs are scancelled and end cancelled', async () => {
    const campaign = await h.submit({ name: 'cancel', cluster: 'local', repetitions: 2, run: 'sleep 600', resources: { time: '00:20:00' } });
    await waitFor(async () => (await h.runsOf(campaign.id)).every((r) => r.state === 'running'), { timeoutMs: 60_000, what: 'runs to start' });
    const res = await h.call('POST', `/v1/campaigns/${campaign.id}/cancel`);
    expect(res.status).toBe(202);
    const runs = await h.waitForCampaignEnd(campaign.id, 60_000);
    expect(runs.map((r) => r.state)).toEqual(['cancelled', 'cancelled']);
    const live = await h.slurmLink().slurm.squeue();
    expect(live.filter((j) => runs.some((r) => r.id === j.runId) && j.runState === 'running')).toEqual([]);
  });

  test('a cancel whose pending runs the API did not get to end (it stopped after answering) is finished by the scheduler', async () => {
    await h.stopInProcessScheduler();
    const campaign = await h.submit({ name: 'cancel-later', cluster: 'local', repetitions: 3, run: 'true' });
    // What POST /cancel records before it answers; the API "dies" before cancelling the runs.
    expect(await requestCampaignCancel(h.db, campaign.id)).toEqual({ pending: 3, active: 0 });
    await h.startInProcessScheduler();
    const runs = await h.waitForCampaignEnd(campaign.id, 60_000);
    expect(runs.map((r) => r.state)).toEqual(['cancelled', 'cancelled', 'cancelled']);
    expect(runs.every((r) => r.slurmJobId === null)).toBe(true);
  });

  test('parameter values reach the workload literally and a shell payload never runs', async () => {
    const canary = `/tmp/${uniqueName('erg-pwned')}`;
    for (const payload of [`$(touch ${canary})`, `; touch ${canary}`, `\`touch ${canary}\``, `x' ; touch ${canary} ; '`]) {
      const refused = await h.call('POST', '/v1/campaigns', { name: 'inj', cluster: 'local', parameters: { v: [payload] }, run: 'echo {{v}}' });
      expect(refused.status).toBe(400);
      expect(refused.body.error.issues.map((i: { path: string }) => i.path)).toContain('parameters.v[0]');
    }
    const tricky = 'a,b:c=d/e@f%g^h+i-j.k_l';
    const campaign = await h.submit({
      name: 'literal', cluster: 'local', parameters: { v: [tricky, '-n', 42] },
      files: { 'v.json': '{ "v": "{{v}}" }\n' },
      run: [
        'echo "unquoted=[" {{v}} "]"', 'echo "double=[{{v}}]"', "echo 'single=[{{v}}]'",
        'cat <<EOF\nheredoc=[{{v}}]\nEOF', 'echo "env=[$ERG_PARAM_v]"', 'cat v.json',
      ].join('\n'),
    });
    const runs = await h.waitForCampaignEnd(campaign.id);
    for (const run of runs) {
      const v = String(run.parameters.v);
      const { body } = await h.call('GET', `/v1/runs/${run.id}/logs`);
      expect(run.state).toBe('completed');
      expect(body.stdout).toContain(`double=[${v}]`);
      expect(body.stdout).toContain(`single=[${v}]`);
      expect(body.stdout).toContain(`heredoc=[${v}]`);
      expect(body.stdout).toContain(`env=[${v}]`);
      expect(body.stdout).toContain(`{ "v": "${v}" }`);
    }
    // The canary names a path on the cluster; here it is under the cluster's root.
    expect(existsSync(clusterHostPath(h.local, canary))).toBe(false);
  });

  test('an unreachable cluster keeps runs pending with the reason; submission resumes when it is back', async () => {
    const relay = new Relay({ host: h.local.host, port: h.local.port });
    await relay.open();
    const port = relay.port;
    await relay.cut();
    await h.registerCluster('flaky', { port });
    const campaign = await h.submit({ name: 'flaky', cluster: 'flaky', repetitions: 2, run: 'echo hello' });
    const runId = campaign.runs[0]!.id;
    const pending = await waitForPendingReason(runId);
    expect(pending.reason).toMatch(/flaky/);
    expect(pending.reason).toMatch(/unreachable|refused|connect/i);
    expect((await h.call('GET', '/v1/clusters/flaky')).body.lastError).toBeTruthy();
    expect((await fetch(`${h.url}/healthz`)).status).toBe(200); // the API keeps serving

    relay.port = port;
    await relay.open(); // the cluster comes back on the same address
    try {
      const runs = await h.waitForCampaignEnd(campaign.id, 90_000);
      expect(runs.map((r) => r.state)).toEqual(['completed', 'completed']);
      expect((await h.call('GET', '/v1/clusters/flaky')).body.lastError).toBeNull();
    } finally {
      await relay.cut();
    }
  });

  test('a host key that does not match the pinned fingerprint is refused; runs wait with that reason', async () => {
    await h.registerCluster('impostor', { hostKeySha256: `SHA256:${'Z'.repeat(43)}` });
    const campaign = await h.submit({ name: 'impostor', cluster: 'impostor', run: 'echo should-not-run' });
    const runId = campaign.runs[0]!.id;
    const pending = await waitForPendingReason(runId);
    expect(pending.reason).toMatch(/host key/i);
    // Re-registering with the right fingerprint lets the run go through.
    await h.registerCluster('impostor');
    const [run] = await h.waitForCampaignEnd(campaign.id, 90_000);
    expect(run.state).toBe('completed');
  });
});
