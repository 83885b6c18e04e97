// Exactly once rests on a fence, not on timing: a scheduler killed while its remote sbatch loop is
// mid-flight, and taken over at once by another, leaves exactly one Slurm job per run — the killed
// one's loop submits nothing after the takeover has settled the runs it left in doubt.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { listCampaignRuns } from '@erg/db';
import { repoRoot, waitFor } from '@erg/testkit';
import { Harness } from './harness';

jest.setTimeout(300_000);

describe('fencing the sbatch loop of a killed scheduler', () => {
  const h = new Harness();

  beforeAll(async () => {
    await h.start();
    // Through the cluster's second sshd port every sbatch takes 4 s: a loaded controller.
    await h.registerCluster('slow', { port: h.local.slowSbatchPort });
  });
  afterAll(async () => {
    await h.stop();
  });

  test('killed mid-sbatch and taken over at once: one Slurm job per run, the recorded one', async () => {
    const campaign = await h.submit({ name: 'fence', cluster: 'slow', parameters: { i: [1, 2, 3, 4] }, run: 'echo run {{i}}' });
    const runIds = campaign.runs.map((r) => r.id);
    // One loop, so its four sbatch calls run one after another (16 s in all).
    // Arrays off: the four runs must be four sbatch calls of one loop, for the kill to fall inside it
    // (an array is one sbatch; restart.e2e.test.ts kills array submissions).
    const first = h.spawnScheduler('fence-first', { ERG_SUBMIT_LOOPS: '1', ERG_SUBMIT_ARRAYS: 'off' });
    const standby = await waitFor(
      async () => {
        const runs = (await listCampaignRuns(h.db, campaign.id)).items;
        return runs.every((r) => r.state === 'submitting') ? h.spawnScheduler('fence-standby', { ERG_SUBMIT_LOOPS: '1', ERG_SUBMIT_ARRAYS: 'off' }) : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 50, what: 'the first scheduler to claim the runs' },
    );
    try {
      // The first job exists: the loop has just started the second run's 4-second sbatch.
      await h.waitForFirstJob(runIds);
      first.kill('SIGKILL');
      expect(await first.exited).toBe(null);

      const runs = await h.waitForCampaignEnd(campaign.id, 180_000);
      expect(runs.map((r) => r.state)).toEqual(Array(4).fill('completed'));
      await h.expectOneJobPerRun(runs);
      // The race was really run: the standby settled the runs while the killed loop still had some to submit.
      const settled = readFileSync(path.join(repoRoot(), 'test-artifacts', `${h.prefix}-fence-standby.log`), 'utf8')
        .split('\n').filter((l) => l.includes('settled runs in doubt')).map((l) => JSON.parse(l));
      // A run found absent is submitted again only once a second reconcile confirms it, so the
      // settling may take two polls.
      expect(settled.length).toBeGreaterThanOrEqual(1);
      for (const line of settled) expect(line).toMatchObject({ cluster: 'slow' });
      const sum = (k: 'found' | 'resubmit') => settled.reduce((n, l) => n + l[k], 0);
      expect(sum('found') + sum('resubmit')).toBe(4);
      expect(sum('resubmit')).toBeGreaterThan(0);
    } finally {
      standby.kill('SIGTERM');
      await standby.exited;
    }
  });
});
