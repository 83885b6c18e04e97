// The cooldown end to end on the local Slurm cluster: each run's job waits, after its agents are
// ready and before its idle baseline and workload, until its node's agent says the node is back
// near idle (or maxWaitS passed); the wait is recorded with the run and is not in its time. The
// local node's only power sensor is the CPU model from /proc/stat (method: model), and a fresh
// database knows no idle baseline of it yet, so each node waits by the settled criterion.
import { hostname } from 'node:os';
import { findClusterByName, listIdleReferences } from '@erg/db';
import { COOLDOWN_WAIT_SLACK_S, parseCooldownPlan, RUN_DIR_FILES, RunCooldown } from '@erg/spec';
import { waitFor } from '@erg/testkit';
import { localClusterHarness } from './harness';

jest.setTimeout(180_000);

describe('the cooldown before each run', () => {
  const h = localClusterHarness();

  test('each run waits for its node before the idle baseline, the wait is recorded, and its time is the workload\'s alone', async () => {
    const maxWaitS = 10;
    const campaign = await h.submit({
      name: 'cooled', cluster: 'local', repetitions: 2, cooldown: { maxWaitS, settleS: 1 },
      telemetry: { intervalMs: 100, idleBaselineS: 1 }, run: 'sleep 1',
    });
    const runs = await h.waitForCampaignEnd(campaign.id);
    expect(runs).toHaveLength(2);
    for (const run of runs) {
      expect(run.state).toBe('completed');
      // The plan the agents read: the block's thresholds, and no idle reference yet on this cluster.
      const staged = await h.slurmLink().connection.exec(`cat '${run.runDir}/${RUN_DIR_FILES.cooldown}'`);
      expect(parseCooldownPlan(staged.stdout)).toEqual({ ok: true, plan: { ergCooldown: 1, powerMargin: 0.1, tempMarginC: 5, settleS: 1, maxWaitS, references: [] } });

      const cooldown = RunCooldown.parse(run.cooldown);
      expect(cooldown.nodes).toEqual([expect.objectContaining({ node: hostname(), criterion: 'settled', referenceW: null, maxGpuTempC: null })]);
      const [node] = cooldown.nodes;
      // Cooled (two 1 s means of the modelled power agreed), or maxWaitS passed on a busy machine: either way within the bound.
      expect(node!.waitedS).toBeLessThanOrEqual(maxWaitS + COOLDOWN_WAIT_SLACK_S);
      if (node!.reached) expect(node!.powerW).toBeGreaterThan(0);
      expect(cooldown.reached).toBe(node!.reached);
      // The job's own wait: bounded by its deadline (bash counts whole seconds), then the idle baseline, then the workload.
      expect(cooldown.waitedS).toBeLessThanOrEqual(maxWaitS + COOLDOWN_WAIT_SLACK_S + 1);
      expect(cooldown.window).not.toBeNull();
      expect(cooldown.waitedS).toBeCloseTo((cooldown.window!.endMs - cooldown.window!.startMs) / 1000, 6);
      expect(Math.floor(cooldown.window!.endMs)).toBeLessThanOrEqual(Date.parse(run.idleStart));
      expect(Date.parse(run.idleEnd)).toBeLessThanOrEqual(Date.parse(run.workloadStart));

      // Its time-to-solution is the workload's window, which starts after the wait; the figures show the same cooldown.
      // The scheduler's energy worker computes them right after the run ends (409 "being computed" until then).
      await waitFor(async () => (await h.call('GET', `/v1/runs/${run.id}/energy`)).status === 200, { timeoutMs: 30_000, what: "the run's energy" });
      const { body: e } = await h.call('GET', `/v1/runs/${run.id}/energy`);
      expect(e.timeS).toBeCloseTo((Date.parse(run.workloadEnd) - Date.parse(run.workloadStart)) / 1000, 2);
      expect(e.window.startMs).toBeGreaterThan(cooldown.window!.endMs);
      expect(e.cooldown).toEqual(run.cooldown);
      // Its idle baseline per node: what the next run's cooldown on this node compares with.
      expect(e.idle.nodes).toEqual([expect.objectContaining({ node: hostname(), method: 'model' })]);
      expect(e.idle.nodes[0].powerW).toBeGreaterThan(0);
    }
    // Those baselines are now this cluster's idle references: a later run's plan carries this node's.
    const cluster = await findClusterByName(h.db, 'local');
    expect((await listIdleReferences(h.db, cluster!.id)).map((r) => [r.node, runs.map((x) => x.id).includes(r.runId)])).toEqual([[hostname(), true]]);
  });
});
