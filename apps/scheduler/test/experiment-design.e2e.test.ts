// The experiment's design on the local Slurm cluster (issue 26): an A/A campaign — two identical
// configurations, four repetitions — runs one run at a time while drift is injected halfway: once
// the first two blocks have finished, the node's work takes 1.6× as long (the workload reads a drift
// file the test writes on the cluster, as a node that got busier would be slower; a CPU hog would
// slow every other test file sharing this machine too). The runs interleave in the seed's
// randomized blocks, and the results report no distinguishable difference between the twins —
// where configuration-major order ran them 1 1 1 1 2 2 2 2 and named one of them faster by 1.3–1.8×.
import { campaignRunOrder } from '@erg/sweep';
import { CampaignResults } from '@erg/spec';
import { uniqueName, waitFor } from '@erg/testkit';
import { Harness } from './harness';

jest.setTimeout(300_000);

describe('an A/A campaign with drift injected halfway', () => {
  const h = new Harness();

  beforeAll(async () => {
    await h.start();
    // One run at a time: the order they ran in is the order erg submitted them in.
    await h.registerCluster('one-at-a-time', { maxConcurrentRuns: 1 });
    await h.startInProcessScheduler();
  });
  afterAll(async () => {
    await h.stop();
  });

  test('the runs interleave in the seed\'s blocks, and the twins are reported not distinguishable', async () => {
    const driftFile = `${h.workDir}/${uniqueName('drift')}`;
    const campaign = await h.submit({
      name: 'a-a-drift', cluster: 'one-at-a-time', repetitions: 4,
      parameters: { twin: ['a', 'b'] },
      // 99 %: the test must not fail on the 1 in 20 A/A campaigns a 95 % claim may call different.
      design: { confidence: 0.99 },
      resources: { cpusPerTask: 1, time: '00:05:00' },
      telemetry: { intervalMs: 100 },
      run: `echo twin {{twin}}; if [ -e '${driftFile}' ]; then sleep 1.6; else sleep 1; fi`,
    });
    expect(campaign.design.order).toBe('randomized-blocks');
    const seed = campaign.design.seed!;
    expect(Number.isInteger(seed)).toBe(true);

    // Drift from the middle on: once two blocks (4 runs) have completed, the node gets slower.
    await waitFor(
      async () => (await h.runsOf(campaign.id)).filter((r) => r.state === 'completed').length >= 4,
      { timeoutMs: 150_000, intervalMs: 250, what: 'the first two blocks to complete' },
    );
    await h.slurmLink().connection.exec(`touch '${driftFile}'`);
    const runs = await h.waitForCampaignEnd(campaign.id, 180_000);
    expect(runs.map((r) => r.state)).toEqual(Array(8).fill('completed'));

    // The order they ran in is the seed's randomized complete blocks: each block holds both twins.
    const ran = [...runs].sort((x, y) => Date.parse(x.workloadStart) - Date.parse(y.workloadStart));
    const keys = ['twin=a', 'twin=b'];
    const expected = [...campaignRunOrder(2, 4, { order: 'randomized-blocks', seed })].map((r) => `${keys[r.configuration]}#${r.repetition}`);
    expect(ran.map((r) => `${r.configurationKey}#${r.repetition}`)).toEqual(expected);
    for (let block = 0; block < 4; block++) expect(new Set(ran.slice(2 * block, 2 * block + 2).map((r) => r.configurationKey)).size).toBe(2);

    // The drift was real: the runs after it took about 1.6× as long as those before.
    const times = ran.map((r) => r.timeS as number);
    expect(Math.max(...times)).toBeGreaterThan(1.35 * Math.min(...times));
    expect(times.at(-1)!).toBeGreaterThan(1.35 * times[0]!);

    // Every run's figures are in before the results are read (the scheduler computes them after each run ends).
    await waitFor(async () => {
      for (const r of runs) if ((await h.call('GET', `/v1/runs/${r.id}/energy`)).status !== 200) return false;
      return true;
    }, { timeoutMs: 60_000, intervalMs: 500, what: 'every run\'s energy figures' });
    const { status, body } = await h.call('GET', `/v1/campaigns/${campaign.id}/results`);
    expect(status).toBe(200);
    const results = CampaignResults.parse(body);
    expect(results.design).toMatchObject({ order: 'randomized-blocks', seed, confidence: 0.99 });
    const claims = results.claims!;
    expect(claims.distinguishable).toBe(false);
    expect(claims.summary).toMatch(/^no distinguishable difference between the 2 configurations at 99 %/);
    // Compared block by block, every twin tied with the other on every objective.
    expect(claims.comparisons.length).toBeGreaterThanOrEqual(3);
    for (const c of claims.comparisons) {
      expect(c.paired).toBe(true);
      expect(c.n).toEqual([4, 4]);
      expect(c.distinguishable).toBe(false);
    }
    for (const rank of claims.ranks) expect(rank.tiedWith).toHaveLength(1);
  });
});
