// A job past its time limit, end to end on the local Slurm cluster: Slurm's smallest limit is one
// minute, and slurmctld notices an overrun on its own timer, so this one test takes a minute or
// more — a file of its own, so that it runs beside the others instead of after them.
import { localClusterHarness } from './harness';

jest.setTimeout(300_000);

describe('a job over its time limit on the local Slurm cluster', () => {
  const h = localClusterHarness();

  test('a job over its time limit ends as timeout', async () => {
    const campaign = await h.submit({ name: 'slow', cluster: 'local', run: 'sleep 600', resources: { time: '1' } });
    const [run] = await h.waitForCampaignEnd(campaign.id, 240_000);
    expect(run.state).toBe('timeout');
    expect(run.slurmState).toBe('TIMEOUT');
    expect(run.reason).toMatch(/time limit/);
  });
});
