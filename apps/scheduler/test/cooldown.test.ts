import type { ClusterRecord } from '@erg/db';
import { renderRunFiles } from '@erg/slurm';
import { CampaignSpec, cooldownWaitLines, parseCooldownPlan, RUN_DIR_FILES, type CooledFile, type IdleReference, type NodeCooldown } from '@erg/spec';
import { agentHook } from '../src/agent-hook';
import { cooldownFile, runCooldownOf } from '../src/cooldown';

// The cooldown at the scheduler's two ends: what job.sh and the staged plan say when a run is
// submitted, and what the run records from erg.cooled when it is finalized.

const cluster = { agentCommand: 'node', agentApiUrl: null, modelIdleW: 60, modelMaxW: 250 } as unknown as ClusterRecord;
const staged = { bundle: '/w/.erg-agent/a.js', markTools: '/w/.erg-agent/marks' };
const spec = (extra: Record<string, unknown> = {}) =>
  CampaignSpec.parse({ name: 'c', cluster: 'local', run: 'sleep 1', resources: { nodes: 1, time: '00:05:00' }, telemetry: { idleBaselineS: 2 }, ...extra });
const references: IdleReference[] = [{ node: 'node1', powerW: 42.5, gpus: [{ gpu: 0, tempC: 31 }], runId: 'r0', measuredAt: '2026-12-08T09:00:00.000Z' }];

function render(s: CampaignSpec) {
  const files = renderRunFiles({
    runId: 'r1', campaignId: 'c1', repetition: 1, configKey: 'k', parameters: {}, spec: s, runDir: '/w/c1/r1', agent: agentHook(cluster, s, staged),
  });
  const plan = cooldownFile(s, references);
  return { jobScript: files.find((f) => f.name === RUN_DIR_FILES.jobScript)!.content, plan };
}

describe('submitting a run of a campaign with a cooldown', () => {
  test('job.sh: agents ready → cooldown wait → idle baseline → timed workload, so the wait is in neither window', () => {
    const { jobScript } = render(spec({ cooldown: { maxWaitS: 10, settleS: 1 } }));
    const at = (text: string) => {
      const i = jobScript.indexOf(text);
      expect(i).toBeGreaterThanOrEqual(0);
      return i;
    };
    const order = [at("grep -c '\\.ready$'"), at(cooldownWaitLines(10).join('\n')), at('erg_idle_start_ns='), at('erg_idle_end_ns='), at('erg_start_ns='), at('erg_end_ns=')];
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(jobScript).toContain(`--cooldown "$ERG_RUN_DIR/${RUN_DIR_FILES.cooldown}"`);
  });

  test("the plan staged beside job.sh holds the block's thresholds and the cluster's idle references", () => {
    const { plan } = render(spec({ cooldown: { maxWaitS: 10, settleS: 1 } }));
    expect(plan).toMatchObject({ name: RUN_DIR_FILES.cooldown, mode: 0o644 });
    expect(parseCooldownPlan(plan!.content)).toEqual({
      ok: true, plan: { ergCooldown: 1, powerMargin: 0.1, tempMarginC: 5, settleS: 1, maxWaitS: 10, references },
    });
  });

  test('without a cooldown: no plan, no option, no wait', () => {
    const { jobScript, plan } = render(spec());
    expect(plan).toBeNull();
    expect(jobScript).not.toContain('--cooldown');
    expect(jobScript).not.toContain(RUN_DIR_FILES.cooled);
  });
});

describe("finalizing: the run's cooldown from erg.cooled", () => {
  const record = (node: string, reached = true, waitedS = 3.2): NodeCooldown => ({
    node, waitedS, reached, criterion: 'idle_baseline', powerW: 44, referenceW: 42.5, maxGpuTempC: 33, referenceTempC: 31, gpus: [{ gpu: 0, tempC: 33, referenceTempC: 31 }],
  });
  const cooled = (records: unknown[], extra: Partial<CooledFile> = {}): CooledFile => ({
    waitStartNs: 1_796_000_000_000_000_000n, waitEndNs: 1_796_000_002_500_000_000n, records, unreadable: 0, ...extra,
  });

  test("every node cooled: the job's own wait, its window, and each node's record", () => {
    expect(runCooldownOf(cooled([record('n1'), record('n2', true, 1)]), 2)).toEqual({
      cooldown: { waitedS: 2.5, reached: true, window: { startMs: 1_796_000_000_000, endMs: 1_796_000_002_500 }, nodes: [record('n1'), record('n2', true, 1)] },
      warnings: [],
    });
  });

  test('a node that gave up at maxWaitS, or left no record, makes the run not reached; the missing one is said', () => {
    expect(runCooldownOf(cooled([record('n1'), record('n2', false)]), 2).cooldown!.reached).toBe(false);
    const short = runCooldownOf(cooled([record('n1')]), 2);
    expect(short.cooldown).toMatchObject({ reached: false, nodes: [record('n1')] });
    expect(short.warnings).toEqual([expect.stringContaining("1 of the job's 2 node(s) wrote no cooldown record")]);
  });

  test('lines that are not records are left out and counted; a node is kept once; without the window the longest node wait', () => {
    const r = runCooldownOf(cooled([record('n1', true, 4), { node: 'n2' }, record('n1', false)], { waitStartNs: null, unreadable: 1 }), null);
    expect(r.cooldown).toEqual({ waitedS: 4, reached: true, window: null, nodes: [record('n1', true, 4)] });
    expect(r.warnings).toEqual(["cooldown: 2 line(s) of the nodes' records were not cooldown records and were left out"]);
  });

  test('no erg.cooled (the job ended before its wait did): no cooldown', () => {
    expect(runCooldownOf(null, 1)).toEqual({ cooldown: null, warnings: [] });
  });
});
