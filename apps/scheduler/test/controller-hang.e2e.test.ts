// A sbatch that times out waiting for a hung slurmctld cannot tell whether its job was created:
// the request sits in the controller's socket and is carried out when the controller wakes up.
// Such runs are in doubt (settled by asking Slurm), never "busy, submit again" — otherwise the
// run gets a second job. Runs the loop had not reached yet are returned untouched.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot, waitFor } from '@erg/testkit';
import { Harness } from './harness';

jest.setTimeout(300_000);

describe('a slurmctld that hangs while sbatch calls are in flight', () => {
  const h = new Harness();

  beforeAll(async () => {
    await h.start();
    // Through the cluster's second sshd port every sbatch first waits 4 s: the hang can be timed
    // to fall inside the loop.
    await h.registerCluster('slow', { port: h.local.slowSbatchPort });
  });
  afterAll(async () => {
    await h.stop();
  });

  test('runs whose sbatch timed out get exactly one job; the rest of the loop is not sent into the hang', async () => {
    const campaign = await h.submit({ name: 'hang', cluster: 'slow', parameters: { i: [1, 2, 3, 4] }, run: 'echo run {{i}}' });
    const runIds = campaign.runs.map((r) => r.id);
    const logFile = path.join(repoRoot(), 'test-artifacts', `${h.prefix}-hang.log`);
    // Arrays off: the four runs must be four sbatch calls of one loop, for the hang to fall inside it.
    const scheduler = h.spawnScheduler('hang', { ERG_SUBMIT_LOOPS: '1', LOG_LEVEL: 'info', ERG_SUBMIT_ARRAYS: 'off' });
    // The cluster's slurmctld, by its pid file on this machine (deploy/local-slurm's cluster.json).
    const ctld = Number(readFileSync(h.local.slurmctldPidFile, 'utf8').trim());
    // Whatever happens to this test, the controller wakes up again.
    const guard = spawn('sh', ['-c', `sleep 120; kill -CONT ${ctld}`], { detached: true, stdio: 'ignore' });
    guard.unref();
    try {
      // The first job exists: the loop is in the second run's 4-second wait, so its sbatch will
      // meet the hung controller.
      await h.waitForFirstJob(runIds);
      process.kill(ctld, 'SIGSTOP');
      try {
        // sbatch gives up after MessageTimeout (20 s on the local cluster) with "Socket timed out".
        await waitFor(() => (readFileSync(logFile, 'utf8').includes('Socket timed out') ? true : undefined), {
          timeoutMs: 90_000, intervalMs: 250, what: 'a sbatch to time out against the hung controller',
        });
      } finally {
        process.kill(ctld, 'SIGCONT');
      }

      const runs = await h.waitForCampaignEnd(campaign.id, 180_000);
      expect(runs.map((r) => r.state)).toEqual(Array(4).fill('completed'));
      await h.expectOneJobPerRun(runs);

      // One sbatch met the hang; the loop sent nothing more into it, and returned the runs it had not reached.
      const lines = readFileSync(logFile, 'utf8').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
      const timedOut = lines.filter((l) => typeof l.err === 'string' && l.err.includes('Socket timed out'));
      expect(timedOut).toHaveLength(1);
      expect(timedOut[0].msg).toBe('sbatch lost its answer; the runs are in doubt until Slurm is asked');
      const batch = lines.find((l) => l.msg === 'submitted batch' && l.inDoubt === 1);
      expect(batch).toMatchObject({ cluster: 'slow', queued: 1, inDoubt: 1, retry: 2 });
    } finally {
      process.kill(ctld, 'SIGCONT');
      scheduler.kill('SIGTERM');
      await scheduler.exited;
    }
  });
});
