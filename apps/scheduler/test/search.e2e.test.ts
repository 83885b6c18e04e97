// A search campaign end to end on the local Slurm cluster (issue 16 §1, `strategy: search`):
// examples/search-cpu.yaml as a user submits it — a space of 1,000 configurations, a budget of 12
// runs, 4 in flight. The scheduler proposes batches as results land, never more than 4 runs in
// flight, each configuration once, each run submitted to Slurm once; the search stops at its
// budget once nothing is in flight and shows the front of what it measured.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { decodeCampaignText } from '@erg/spec';
import { repoRoot, waitFor } from '@erg/testkit';
import { localClusterHarness } from './harness';

jest.setTimeout(300_000);

describe('a search campaign on the local Slurm cluster (examples/search-cpu.yaml)', () => {
  const h = localClusterHarness();

  test('batches of at most 4 in flight, 12 configurations tried once each, stopped at the budget with its front', async () => {
    const decoded = decodeCampaignText(readFileSync(path.join(repoRoot(), 'examples', 'search-cpu.yaml'), 'utf8'), 'yaml');
    if (!decoded.ok) throw new Error(JSON.stringify(decoded.issues));
    const campaign = await h.submit(decoded.raw as object);
    expect((await h.runsOf(campaign.id)).length).toBe(0);

    // While it runs, never more than `parallel` (4) runs in flight.
    let mostInFlight = 0;
    await waitFor(
      async () => {
        const { body } = await h.call('GET', `/v1/campaigns/${campaign.id}/runs?limit=1000`);
        mostInFlight = Math.max(mostInFlight, body.items.filter((r: { state: string }) => !['completed', 'failed', 'cancelled', 'timeout'].includes(r.state)).length);
        const c = await h.call('GET', `/v1/campaigns/${campaign.id}`);
        return !['pending', 'running', 'cancelling'].includes(c.body.state);
      },
      { timeoutMs: 240_000, intervalMs: 500, what: 'the search campaign to end' },
    );
    expect(mostInFlight).toBeGreaterThan(0);
    expect(mostInFlight).toBeLessThanOrEqual(4);
    const runs = await h.runsOf(campaign.id);
    expect(runs).toHaveLength(12);
    expect(runs.every((r) => r.state === 'completed' && r.repetition === 1)).toBe(true);
    expect(new Set(runs.map((r) => r.configurationKey)).size).toBe(12);
    expect(new Set(runs.map((r) => r.slurmJobId)).size).toBe(12);

    const { status, body } = await h.call('GET', `/v1/campaigns/${campaign.id}/decisions`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ open: false, strategy: { kind: 'search', parallel: 4, budget: { maxRuns: 12 } }, runsUsed: 12, gridRuns: 1000, undecided: [], budget: { maxRuns: 12, runsLeft: 0 } });
    expect(body.stop).toMatch(/budget/);
    expect(body.decisions).toHaveLength(12);
    const front = body.decisions.filter((d: { status: string }) => d.status === 'front');
    expect(front.length).toBeGreaterThan(0);
    for (const d of body.decisions.filter((x: { status: string }) => x.status === 'dropped')) {
      expect(front.map((f: { key: string }) => f.key)).toContain(d.by);
      expect(d.reason).toContain(`dominated by ${d.by} on time and energy`);
    }
    // The campaign's results have the 12 measured configurations.
    const results = await h.call('GET', `/v1/campaigns/${campaign.id}/results`);
    expect(results.status).toBe(200);
    expect(results.body.configurations.filter((c: { n: number }) => c.n > 0)).toHaveLength(12);
    // Its Pareto front is the front the decisions show.
    expect(results.body.configurations.filter((c: { paretoOptimal: boolean }) => c.paretoOptimal).map((c: { key: string }) => c.key).sort()).toEqual(front.map((f: { key: string }) => f.key).sort());
  });
});
