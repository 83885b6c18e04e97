// clusters.max_concurrent_runs on the real local Slurm cluster: a campaign of 6 short runs on a
// cluster limited to 2 never has more than 2 runs active (in erg or in Slurm), and all complete.
import { listCampaignRuns } from '@erg/db';
import { RUN_STATES_HOLDING_A_SLOT, TERMINAL_RUN_STATES } from '@erg/spec';
import { waitFor } from '@erg/testkit';
import { Harness } from './harness';

jest.setTimeout(300_000);

const SLURM_ACTIVE = new Set(['PENDING', 'CONFIGURING', 'RUNNING', 'COMPLETING', 'SUSPENDED', 'REQUEUED', 'RESIZING', 'SIGNALING', 'STAGE_OUT']);

describe('concurrency limits on the local Slurm cluster', () => {
  const h = new Harness();

  beforeAll(async () => {
    await h.start();
    await h.registerCluster('limited', { maxConcurrentRuns: 2 });
    await h.startInProcessScheduler();
  });
  afterAll(async () => {
    await h.stop();
  });

  test('a cluster limited to 2: never more than 2 runs active at once, the rest wait with the reason, all complete', async () => {
    const campaign = await h.submit({
      name: 'limited', cluster: 'limited', parameters: { i: [1, 2, 3, 4, 5, 6] },
      resources: { cpusPerTask: 1, time: '00:05:00' }, run: 'sleep 2; echo done {{i}}',
    });
    const runIds = campaign.runs.map((r) => r.id);
    let maxInDb = 0;
    let maxInSlurm = 0;
    const reasons = new Set<string>();
    const { slurm } = h.slurmLink();
    // Sample erg's database and Slurm's queue every 200 ms until the campaign ends.
    await waitFor(
      async () => {
        const rows = (await listCampaignRuns(h.db, campaign.id)).items;
        maxInDb = Math.max(maxInDb, rows.filter((r) => (RUN_STATES_HOLDING_A_SLOT as readonly string[]).includes(r.state)).length);
        for (const r of rows) if (r.state === 'pending' && r.reason) reasons.add(r.reason);
        // squeue --me lists recently ended jobs too: count only those holding or waiting for a place.
        const queued = (await slurm.squeue()).filter((j) => j.runId && runIds.includes(j.runId) && SLURM_ACTIVE.has(j.state));
        maxInSlurm = Math.max(maxInSlurm, queued.length);
        return rows.every((r) => (TERMINAL_RUN_STATES as readonly string[]).includes(r.state));
      },
      { timeoutMs: 180_000, intervalMs: 200, what: `campaign ${campaign.id} to end` },
    );
    expect(maxInDb).toBe(2);
    expect(maxInSlurm).toBeLessThanOrEqual(2);
    expect([...reasons]).toContain('waiting: cluster "limited" is at its limit of 2 concurrent runs');
    const runs = await h.runsOf(campaign.id);
    expect(runs.map((r) => r.state)).toEqual(Array(6).fill('completed'));
    // Exactly one Slurm job per run: holding runs back did not submit anything twice.
    const jobs = await h.slurmJobsFor(runIds);
    for (const id of runIds) expect(jobs.get(id)).toHaveLength(1);
  });
});
