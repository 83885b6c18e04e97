// The node effects: a node planted to measure more energy is found, its interval agrees with
// @stdlib's t at 1e-12, and a configuration that ran on one node only is named as confounded.
import tQuantile from '@stdlib/stats-base-dists-t-quantile';
import { seededRandom } from '@erg/testkit';
import { CampaignNodes } from '@erg/spec';
import { campaignNodes, campaignResults, MAX_NODE_EFFECTS, type RunFigures } from '../src';

const run = (timeS: number | null, energyJ: number | null, node: string | null): RunFigures => ({
  timeS, energyJ, edpJs: timeS !== null && energyJ !== null ? timeS * energyJ : null, ed2pJs2: null, avgPowerW: null, metrics: {}, node,
});

function normals(seed: number): () => number {
  const uniform = seededRandom(seed);
  return () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
}

const NODES = ['gpu-01', 'gpu-02', 'gpu-03'];

/**
 * Four configurations × six repetitions spread over three nodes (repetition r of configuration i
 * on node (i + r) mod 3), 1 % noise; gpu-03 draws 8 % more energy than the others, at the same time.
 */
function plantedCampaign(seed: number) {
  const z = normals(seed);
  return [100, 120, 140, 160].map((t, i) => ({
    key: `c${i}`,
    runs: Array.from({ length: 6 }, (_, r) => {
      const node = NODES[(i + r) % 3]!;
      return run(t * (1 + 0.01 * z()), 10 * t * (node === 'gpu-03' ? 1.08 : 1) * (1 + 0.01 * z()), node);
    }),
  }));
}

describe('campaignNodes', () => {
  it('finds the node planted to measure more energy, and not a time effect', () => {
    const nodes = campaignNodes(plantedCampaign(1), { confidence: 0.95 })!;
    expect(CampaignNodes.parse(nodes)).toEqual(nodes);
    expect(nodes.nodes).toBe(3);
    expect(nodes.effects.map((e) => e.node)).toEqual(NODES);
    const hot = nodes.effects.find((e) => e.node === 'gpu-03')!;
    expect(hot.runs).toBe(8);
    // Its runs lie ~8 % × 2/3 above their configurations' means (which hold a third of its runs).
    expect(hot.energy.mean!).toBeGreaterThan(0.04);
    expect(hot.energy.interval![0]).toBeGreaterThan(0);
    expect(hot.distinguishable).toBe(true);
    for (const e of nodes.effects) {
      expect(e.time.interval![0]).toBeLessThan(0);
      expect(e.time.interval![1]).toBeGreaterThan(0);
      if (e.node !== 'gpu-03') expect(e.energy.mean!).toBeLessThan(0);
    }
    expect(nodes.confounded).toEqual([]);
    expect(nodes.note).toMatch(/^relative residuals \(a run's figure \/ its configuration's mean − 1\) of 24 runs of 4 configurations with at least 2 runs, on 3 nodes, at 95 %; /);
    expect(nodes.note).toMatch(/gpu-03 measures \+[\d.]+ % energy \[\+[\d.]+ %, \+[\d.]+ %\]/);
  });

  it("a node's interval is the t-interval of its runs' residuals, as @stdlib computes it, to 1e-12", () => {
    const configs = plantedCampaign(2);
    const nodes = campaignNodes(configs, { confidence: 0.9 })!;
    for (const e of nodes.effects) {
      const residuals = configs.flatMap((c) => {
        const m = c.runs.reduce((s, r) => s + r.energyJ!, 0) / c.runs.length;
        return c.runs.filter((r) => r.node === e.node).map((r) => r.energyJ! / m - 1);
      });
      const n = residuals.length;
      const mean = residuals.reduce((s, x) => s + x, 0) / n;
      const sd = Math.sqrt(residuals.reduce((s, x) => s + (x - mean) ** 2, 0) / (n - 1));
      const half = tQuantile(0.95, n - 1) * (sd / Math.sqrt(n));
      expect(Math.abs(e.energy.mean! - mean)).toBeLessThanOrEqual(1e-12);
      expect(Math.abs(e.energy.interval![0] - (mean - half))).toBeLessThanOrEqual(1e-12);
      expect(Math.abs(e.energy.interval![1] - (mean + half))).toBeLessThanOrEqual(1e-12);
    }
  });

  it('names a configuration whose runs all ran on one node while the campaign used several', () => {
    const configs = [
      { key: 'spread', runs: [run(10, 100, 'n1'), run(10.1, 101, 'n2'), run(9.9, 99, 'n1'), run(10, 100, 'n2')] },
      { key: 'stuck', runs: [run(20, 200, 'n2'), run(20.2, 202, 'n2'), run(19.8, 198, 'n2')] },
      // One run on one node cannot be told apart from anything, so it is not named.
      { key: 'once', runs: [run(30, 300, 'n1')] },
    ];
    const nodes = campaignNodes(configs, { confidence: 0.95 })!;
    expect(nodes.confounded).toEqual([{ key: 'stuck', node: 'n2', runs: 3 }]);
    expect(nodes.note).toContain("1 configuration ran on one node only (stuck on n2): its figures cannot be told apart from that node's effect");
  });

  it('is null when the counted runs ran on fewer than two known nodes', () => {
    expect(campaignNodes([{ key: 'a', runs: [run(1, 1, 'n1'), run(1, 1, 'n1'), run(1, 1, null)] }, { key: 'b', runs: [run(1, 1, 'n1'), run(null, null, 'n2')] }], { confidence: 0.95 })).toBeNull();
    expect(campaignNodes([{ key: 'a', runs: [run(1, 1, null), run(1, 1, undefined as unknown as null)] }], { confidence: 0.95 })).toBeNull();
  });

  it(`gives effects for at most ${MAX_NODE_EFFECTS} nodes, those with the most runs, and says so`, () => {
    const runs = Array.from({ length: MAX_NODE_EFFECTS + 10 }, (_, i) => run(10 + (i % 3) * 0.1, 100, `n${String(i).padStart(3, '0')}`));
    runs.push(run(10, 100, 'n109'));
    const nodes = campaignNodes([{ key: 'a', runs }], { confidence: 0.95 })!;
    expect(nodes.nodes).toBe(MAX_NODE_EFFECTS + 10);
    expect(nodes.effects).toHaveLength(MAX_NODE_EFFECTS);
    expect(nodes.effects[0]).toMatchObject({ node: 'n109', runs: 2 });
    expect(nodes.note).toContain(`effects shown for the ${MAX_NODE_EFFECTS} nodes with the most runs`);
  });

  it('campaignResults gives them over configurations, whatever the grouping', () => {
    const configs = plantedCampaign(3).map((c) => ({ ...c, parameters: {}, runs: c.runs.map((r, k) => ({ ...r, fingerprintClass: k % 2 === 0 ? 'a'.repeat(64) : 'b'.repeat(64) })) }));
    const byConfiguration = campaignResults(configs).nodes;
    expect(byConfiguration!.effects.find((e) => e.node === 'gpu-03')!.distinguishable).toBe(true);
    expect(campaignResults(configs, { groupBy: 'fingerprint' }).nodes).toEqual(byConfiguration);
    expect(campaignResults(configs.map((c) => ({ ...c, runs: c.runs.map((r) => ({ ...r, node: null })) }))).nodes).toBeNull();
  });
});
