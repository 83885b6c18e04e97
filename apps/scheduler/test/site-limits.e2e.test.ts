// Site limits on the local clusters (deploy/local-slurm enforces associations and QOS limits; QOS
// erg-limit10 caps a user at 10 jobs queued or running, every array task counting): a campaign of
// three times the limit (RUNS) under it finishes with every run exactly once, the runs Slurm refused waiting with the
// limit's name meanwhile; with the cluster's maxQueuedJobs at the limit, Slurm never refuses one;
// an unknown account fails the runs with Slurm's own message.
import { waitFor } from '@erg/testkit';
import { Harness } from './harness';

jest.setTimeout(420_000);

/** Runs per campaign: three times the QOS limit, so that runs wait, and refill it, twice over. */
const RUNS = 30;

describe('site limits', () => {
  const h = new Harness();

  beforeAll(async () => {
    await h.start();
    await h.registerCluster('local');
    await h.registerCluster('capped', { maxQueuedJobs: 10 });
    await h.startInProcessScheduler();
  });
  afterAll(async () => {
    await h.stop();
  });

  // First: the other test leaves jobs that Slurm may count against the QOS for a moment after
  // they ended, and this one holds erg to exactly the limit.
  test(`with the cluster's maxQueuedJobs at the QOS limit, Slurm never refuses a run and all ${RUNS} complete once`, async () => {
    const campaign = await h.submit({
      name: 'capped', cluster: 'capped', parameters: { i: Array.from({ length: RUNS }, (_, k) => k + 1) },
      slurm: { qos: 'erg-limit10' }, resources: { time: '00:05:00' }, run: 'echo {{i}}',
    });
    // The waiting runs name erg's own cap, not Slurm's refusal.
    await waitFor(
      async () => {
        const page = (await h.call('GET', `/v1/campaigns/${campaign.id}/runs?limit=100`)).body;
        return page.items.some((r: { reason: string | null }) => r.reason === 'waiting: cluster "capped" has 10 Slurm jobs of erg queued or running, its maxQueuedJobs');
      },
      { timeoutMs: 60_000, intervalMs: 200, what: "a run waiting for the cluster's maxQueuedJobs" },
    );
    const runs = await h.waitForCampaignEnd(campaign.id, 360_000);
    expect(runs.map((r) => r.state)).toEqual(Array(RUNS).fill('completed'));
    // A run Slurm refused goes back to pending and is claimed again: one claim each means no refusal.
    expect(runs.map((r) => r.submitAttempts)).toEqual(Array(RUNS).fill(1));
    await h.expectOneJobPerRun(runs);
    expect((await h.call('GET', '/v1/clusters/capped')).body.maxQueuedJobs).toBe(10);
  });

  test('a campaign of three times a QOS\'s MaxSubmitJobs=10 completes, every run exactly once', async () => {
    const campaign = await h.submit({
      name: 'qos-limited', cluster: 'local', parameters: { i: Array.from({ length: RUNS }, (_, k) => k + 1) },
      slurm: { qos: 'erg-limit10' }, resources: { time: '00:05:00' }, run: 'echo {{i}}',
    });
    // While Slurm refuses more, the waiting runs say why, in the limit's own name.
    const ids = campaign.runs.map((r) => r.id);
    await waitFor(
      async () => {
        const page = (await h.call('GET', `/v1/campaigns/${campaign.id}/runs?limit=100`)).body;
        return page.items.some((r: { reason: string | null }) => /QOSMaxSubmitJobPerUserLimit/.test(r.reason ?? ''));
      },
      { timeoutMs: 60_000, intervalMs: 200, what: 'a run waiting with the QOS limit as its reason' },
    );
    const runs = await h.waitForCampaignEnd(campaign.id, 360_000);
    expect(runs.map((r) => r.state)).toEqual(Array(RUNS).fill('completed'));
    expect(runs.map((r) => r.parameters.i).sort((a, b) => a - b)).toEqual(Array.from({ length: RUNS }, (_, k) => k + 1));
    await h.expectOneJobPerRun(runs);
    expect(new Set(runs.map((r) => r.id))).toEqual(new Set(ids));
  });

  test('an account the site does not know fails the runs with Slurm\'s message', async () => {
    const campaign = await h.submit({ name: 'bad-account', cluster: 'local', parameters: { i: [1, 2] }, slurm: { account: 'nosuchaccount' }, run: 'true' });
    const runs = await h.waitForCampaignEnd(campaign.id);
    for (const run of runs) {
      expect(run).toMatchObject({ state: 'failed', slurmJobId: null });
      expect(run.reason).toMatch(/sbatch refused the job: .*Invalid account or account\/partition combination specified/);
    }
  });
});
