// Energy per phase end to end on the local Slurm cluster: examples/phases-cpu.yaml as a user
// submits it — each run alternates a CPU-bound "compute" phase (awk workers, marked with the
// erg-mark shell command) and an idle "wait" phase (marked with the erg Python module) — and
// the phases' energies come back through the API, ranked as the loads were. The node has no
// power sensors: its power is the model's, from CPU utilisation (method model).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { decodeCampaignText } from '@erg/spec';
import { repoRoot } from '@erg/testkit';
import { localClusterHarness } from './harness';

jest.setTimeout(300_000);

describe('energy per phase on the local Slurm cluster (examples/phases-cpu.yaml)', () => {
  const h = localClusterHarness();

  test('marks from the shell and from Python reach erg; the compute phase draws more power than the wait phase; steps and the campaign view are there', async () => {
    // As written (decoded, not normalised): what `erg submit examples/phases-cpu.yaml` sends.
    const decoded = decodeCampaignText(readFileSync(path.join(repoRoot(), 'examples', 'phases-cpu.yaml'), 'utf8'), 'yaml');
    if (!decoded.ok) throw new Error(JSON.stringify(decoded.issues));
    const spec = decoded.raw as object;
    const campaign = await h.submit(spec);
    const runs = await h.waitForCampaignEnd(campaign.id);
    expect(runs.map((r) => r.state)).toEqual(Array(4).fill('completed'));

    for (const run of runs) {
      const { status, body } = await h.call('GET', `/v1/runs/${run.id}/phases`);
      expect(status).toBe(200);
      // 4 steps × (compute begin/end from sh + wait begin/end and a step from py).
      expect(body.marks).toEqual({ count: 20, nodes: [expect.any(String)], writers: ['py', 'sh'] });
      const phases = body.phases;
      expect(phases).not.toBeNull();
      const compute = phases.phases.find((p: { name: string }) => p.name === 'compute');
      const wait = phases.phases.find((p: { name: string }) => p.name === 'wait');
      expect({ compute: compute.occurrences, wait: wait.occurrences }).toEqual({ compute: 4, wait: 4 });
      // The ranking the loads make: awk workers keep CPUs busy, sleep does not.
      expect(compute.meanPowerW).toBeGreaterThan(wait.meanPowerW);
      // Each phase's time is what the marks bracket: wait sleeps 0.8 s four times.
      expect(wait.timeS).toBeGreaterThan(4 * 0.8 * 0.95);
      expect(wait.timeS).toBeLessThan(4 * 0.8 + 1);
      // The self energies and unmarked partition the run's energy (the figure GET /energy shows).
      const energy = (await h.call('GET', `/v1/runs/${run.id}/energy`)).body;
      const parts = phases.phases.reduce((s: number, p: { selfEnergyJ: number }) => s + p.selfEnergyJ, 0) + phases.unmarked.energyJ;
      expect(parts).toBeCloseTo(energy.energyJ, 6);
      expect(energy.phases.energyJ).toBeCloseTo(energy.energyJ, 6);
      // Python's step marks: 4 of them, so 3 steps between consecutive ones.
      expect(phases.steps).toEqual([expect.objectContaining({ name: 'step', count: 4 })]);
      expect(phases.steps[0].energyJ.n).toBe(3);
      // The bands for the web: compute and wait alternate on the node.
      const labels = body.segments.map((s: { phase: string | null }) => s.phase).filter((p: string | null) => p !== null);
      expect(labels.slice(0, 4)).toEqual(['compute', 'wait', 'compute', 'wait']);
    }

    const results = (await h.call('GET', `/v1/campaigns/${campaign.id}/results`)).body;
    expect(results.phases.configurations.map((c: { key: string; n: number }) => [c.key, c.n])).toEqual([['workers=2', 2], ['workers=4', 2]]);
    for (const c of results.phases.configurations) {
      expect(c.phases.map((p: { name: string }) => p.name)).toEqual(['compute', 'wait', '(unmarked)']);
    }
  });
});
