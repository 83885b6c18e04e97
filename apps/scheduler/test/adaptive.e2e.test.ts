// An adaptive campaign end to end on the local Slurm cluster (issue 16 §3): examples/adaptive-cpu.yaml
// as a user submits it. The clearly worse configuration (32 million iterations: 8× the time and
// energy of the others) is dropped before the grid's repetitions are spent, naming what dominates
// it — after its first 2 runs on a quiet machine, after 3 or 4 when a loaded one leaves a look
// undecided (the design promises the drop with confidence, not at which look). A repetition
// already handed to Slurm when the drop is decided runs to its end; one still pending is withdrawn
// (docs/adaptive.md) — which of the two happens is timing too. The campaign finishes with fewer
// runs than the full grid at maxRepetitions; no configuration goes beyond it; every run is exactly
// once (one run per configuration and repetition, each submitted once).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { decodeCampaignText } from '@erg/spec';
import { repoRoot } from '@erg/testkit';
import { localClusterHarness } from './harness';

jest.setTimeout(300_000);

describe('an adaptive campaign on the local Slurm cluster (examples/adaptive-cpu.yaml)', () => {
  const h = localClusterHarness();

  test('the clearly worse configuration stops after its first runs; fewer runs than the grid; each decision with its reason', async () => {
    const decoded = decodeCampaignText(readFileSync(path.join(repoRoot(), 'examples', 'adaptive-cpu.yaml'), 'utf8'), 'yaml');
    if (!decoded.ok) throw new Error(JSON.stringify(decoded.issues));
    const campaign = await h.submit(decoded.raw as object);
    // Created with the first runs only: 3 configurations × 2.
    expect((await h.runsOf(campaign.id)).length).toBe(6);
    const runs = await h.waitForCampaignEnd(campaign.id, 240_000);
    expect((await h.call('GET', `/v1/campaigns/${campaign.id}`)).body.state).toBe('completed');
    // Every run completed, but for a repetition withdrawn before it reached Slurm.
    const withdrawn = runs.filter((r) => r.state !== 'completed');
    for (const r of withdrawn) expect(r).toMatchObject({ state: 'cancelled', slurmJobId: null, reason: expect.stringMatching(/^not needed: its configuration was decided/) });

    const { status, body } = await h.call('GET', `/v1/campaigns/${campaign.id}/decisions`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ campaignId: campaign.id, open: false, strategy: { kind: 'adaptive', minRepetitions: 2, maxRepetitions: 5 }, gridRuns: 15, undecided: [] });
    expect(body.stop).toMatch(/^every configuration is decided after \d+ runs$/);
    const byKey = new Map(body.decisions.map((d: { key: string }) => [d.key, d]));
    const worse = byKey.get('iterations=32000000') as { status: string; n: number; by: string; reason: string; decidedAt: string };
    expect(worse.status).toBe('dropped');
    // At least its first runs (minRepetitions), fewer than the grid's 5.
    expect(worse.n).toBeGreaterThanOrEqual(2);
    expect(worse.n).toBeLessThan(5);
    expect(['iterations=4000000', 'iterations=4400000']).toContain(worse.by);
    expect(worse.reason).toMatch(new RegExp(`^iterations=32000000 dropped after ${worse.n} runs: dominated by ${worse.by} on time and energy, p < 0\\.0\\d+$`));

    // Runs: the dropped one the n it was decided on, then at most the one repetition that was
    // asked for while it was undecided: handed to Slurm before the decision (it ran to its end), or
    // withdrawn; none beyond 5; fewer than the grid's 15; each repetition once, numbered 1…n
    // without gaps.
    const ofWorse = runs.filter((r) => r.configurationKey === 'iterations=32000000').sort((a, b) => a.repetition - b.repetition);
    expect(ofWorse.slice(0, worse.n).every((r) => r.state === 'completed')).toBe(true);
    const after = ofWorse.slice(worse.n);
    expect(after.length).toBeLessThanOrEqual(1);
    for (const r of after) {
      if (r.state === 'completed') expect(Date.parse(r.submittedAt)).toBeLessThanOrEqual(Date.parse(worse.decidedAt));
      else expect(r.state).toBe('cancelled');
    }
    const perConfiguration = new Map<string, number[]>();
    for (const r of runs) perConfiguration.set(r.configurationKey, [...(perConfiguration.get(r.configurationKey) ?? []), r.repetition]);
    for (const reps of perConfiguration.values()) {
      expect(reps.length).toBeLessThanOrEqual(5);
      expect([...reps].sort((a, b) => a - b)).toEqual(Array.from({ length: reps.length }, (_, i) => i + 1));
    }
    expect(runs.length).toBe(body.runsUsed);
    expect(runs.length).toBeLessThan(body.gridRuns);
    // Each run that went to Slurm went once.
    const submitted = runs.filter((r) => r.slurmJobId !== null);
    expect(submitted.length).toBe(runs.length - withdrawn.length);
    expect(new Set(submitted.map((r) => r.slurmJobId)).size).toBe(submitted.length);
  });
});
