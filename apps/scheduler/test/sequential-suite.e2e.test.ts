// A sequential suite end to end on the local Slurm cluster (issue 16 §2): the first run has no
// baseline and runs the maximum; the next starts at minRepetitions, and the scheduler's tick
// judges each look — here the unchanged workload rules out a regression of `detect` at the first
// look, so it stops with `pass` having used fewer runs than the fixed design, each run submitted
// to Slurm once.
import { waitFor } from '@erg/testkit';
import { localClusterHarness } from './harness';

jest.setTimeout(300_000);

describe('a sequential suite on the local Slurm cluster', () => {
  const h = localClusterHarness();

  const judged = (id: string) =>
    waitFor(
      async () => {
        const { body } = await h.call('GET', `/v1/suites/sequential/runs/${id}`);
        return body.status !== 'running' ? body : undefined;
      },
      { timeoutMs: 200_000, intervalMs: 500, what: `suite run ${id} to be judged` },
    );

  test('no baseline: the maximum; then the first look stops with pass on fewer runs than the fixed design', async () => {
    const created = await h.call('POST', '/v1/suites', {
      name: 'sequential',
      // A regression of 50 % counts; futility rules out one of 100 % (detect) at the first look.
      regression: { threshold: 0.5, minRepetitions: 2, sequential: { maxRepetitions: 4, detect: 1 } },
      campaign: {
        name: 'steady', cluster: 'local', repetitions: 4, parameters: { secs: [1] },
        resources: { time: '00:02:00' }, run: 'sleep {{secs}}', telemetry: { intervalMs: 200 },
      },
    });
    expect(created.status).toBe(201);

    const first = (await h.call('POST', '/v1/suites/sequential/trigger')).body;
    const baseline = await judged(first.id);
    expect(baseline).toMatchObject({ status: 'pass', reasons: ['no_baseline'], campaign: { runCounts: { completed: 4 } } });

    const second = (await h.call('POST', '/v1/suites/sequential/trigger')).body;
    expect((await h.runsOf(second.campaignId)).length).toBe(2);
    const run = await judged(second.id);
    expect(run).toMatchObject({ status: 'pass', baselineId: baseline.campaignId, sequential: { maxRepetitions: 4, runsFixed: 4 } });
    expect(run.sequential.look).toBeGreaterThanOrEqual(1);
    expect(run.sequential.runsUsed).toBeLessThan(run.sequential.runsFixed);
    expect(run.sequential.stop).not.toBeNull();
    const runs = await h.runsOf(second.campaignId);
    expect(runs).toHaveLength(run.sequential.runsUsed);
    expect(runs.every((r) => r.state === 'completed')).toBe(true);
    expect(new Set(runs.map((r) => r.slurmJobId)).size).toBe(runs.length);
  });
});
