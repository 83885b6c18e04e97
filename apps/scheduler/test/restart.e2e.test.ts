// A scheduler killed at the worst moments — after staging files, and after sbatch accepted the
// jobs but before the database heard of them — and restarted, neither loses nor duplicates a run.
import { listCampaignRuns } from '@erg/db';
import { slurmJobKey } from '@erg/slurm';
import { waitFor } from '@erg/testkit';
import { Harness } from './harness';

jest.setTimeout(300_000);

describe('scheduler crash and restart', () => {
  const h = new Harness();

  beforeAll(async () => {
    await h.start();
    await h.registerCluster('local');
  });
  afterAll(async () => {
    await h.stop();
  });

  /** arrays on: the six runs share resources, so they are one array job of six tasks; off: six jobs. */
  async function crashThenRecover(fault: 'exit-after-staging' | 'exit-after-sbatch', arrays: 'on' | 'off') {
    const campaign = await h.submit({ name: `${fault}-${arrays}`, cluster: 'local', parameters: { i: [1, 2, 3, 4, 5, 6] }, run: 'echo run {{i}}\nsleep 1' });
    const runIds = campaign.runs.map((r) => r.id);

    const crashing = h.spawnScheduler(`${fault}-${arrays}-1`, { ERG_FAULT: fault, ERG_SUBMIT_ARRAYS: arrays });
    expect(await crashing.exited).toBe(137);
    const inDoubt = (await listCampaignRuns(h.db, campaign.id)).items;
    expect(inDoubt.map((r) => r.state)).toEqual(Array(6).fill('submitting'));
    expect(inDoubt.every((r) => r.slurmJobId === null)).toBe(true);

    const jobsBefore = await h.slurmJobsFor(runIds);
    const submittedBeforeCrash = [...jobsBefore.values()].filter((j) => j.length > 0).length;
    expect(submittedBeforeCrash).toBe(fault === 'exit-after-sbatch' ? 6 : 0);

    const healthy = h.spawnScheduler(`${fault}-${arrays}-2`, { ERG_SUBMIT_ARRAYS: arrays });
    try {
      const runs = await h.waitForCampaignEnd(campaign.id, 120_000);
      expect(runs.map((r) => r.state)).toEqual(Array(6).fill('completed'));
      const jobs = await waitFor(async () => {
        const found = await h.slurmJobsFor(runIds);
        return [...found.values()].every((j) => j.length >= 1) ? found : undefined;
      }, { timeoutMs: 30_000, what: 'sacct to list every job' });
      // Exactly one Slurm job (or array task) per run, and it is the one the run records.
      for (const run of runs) {
        expect(jobs.get(run.id)!.map(slurmJobKey)).toEqual([run.slurmJobId]);
      }
      const arrayJobs = new Set(runs.map((r) => /^(\d+)_\d+$/.exec(r.slurmJobId ?? '')?.[1] ?? null));
      expect([...arrayJobs]).toHaveLength(1);
      expect(arrayJobs.has(null)).toBe(arrays === 'off');
      if (fault === 'exit-after-sbatch') {
        // The jobs found after the restart are the ones created before the crash.
        for (const run of runs) expect(jobsBefore.get(run.id)!.map(slurmJobKey)).toEqual([run.slurmJobId]);
      }
    } finally {
      healthy.kill('SIGTERM');
      await healthy.exited;
    }
  }

  describe.each(['on', 'off'] as const)('arrays %s', (arrays) => {
    test('killed after staging, before sbatch: runs are submitted once after the restart', async () => {
      await crashThenRecover('exit-after-staging', arrays);
    });

    test('killed after sbatch, before recording the job ids: the restart finds the jobs instead of submitting again', async () => {
      await crashThenRecover('exit-after-sbatch', arrays);
    });
  });
});
