import { cooldownPlanFile, cooldownPlanText, NodeCooldown, type CampaignSpec, type CooledFile, type IdleReference, type RunCooldown } from '@erg/spec';
import type { RenderedFile } from '@erg/slurm';

// The cooldown before each run (the spec's `cooldown` block), at its two ends in the scheduler:
// the plan staged in the run's directory when it is submitted (the thresholds and the cluster's
// idle references, which every node's agent reads), and the run's record read back from
// erg.cooled when it is finalized (the job's wait and every node's record). @erg/spec's run-dir
// owns the names and job.sh's lines; the agent decides (apps/agent, cooldown-watch.ts).

/** erg.cooldown for a run of `spec` on a cluster whose nodes' idle references are `references`; null without a cooldown. */
export function cooldownFile(spec: Pick<CampaignSpec, 'cooldown'>, references: readonly IdleReference[]): RenderedFile | null {
  if (!spec.cooldown) return null;
  const { powerMargin, tempMarginC, settleS, maxWaitS } = spec.cooldown;
  return cooldownPlanFile(cooldownPlanText({ ergCooldown: 1, powerMargin, tempMarginC, settleS, maxWaitS, references: [...references] }));
}

/**
 * The run's cooldown from what job.sh wrote to erg.cooled: the job's own wait (its window) and
 * each node's record, validated (a line that is no record is left out, with a warning). A node of
 * the job without a record did not cool: the run's `reached` is false, and a warning says how many
 * were missing. `jobNodes`: how many nodes Slurm gave the job (null: unknown). Null when the job
 * never reached the wait (no erg.cooled: it ended or was killed before).
 */
export function runCooldownOf(cooled: CooledFile | null, jobNodes: number | null): { cooldown: RunCooldown | null; warnings: string[] } {
  if (cooled === null) return { cooldown: null, warnings: [] };
  const warnings: string[] = [];
  const nodes: NodeCooldown[] = [];
  let refused = cooled.unreadable;
  for (const value of cooled.records) {
    const record = NodeCooldown.safeParse(value);
    if (!record.success) refused += 1;
    else if (!nodes.some((n) => n.node === record.data.node)) nodes.push(record.data);
  }
  if (refused > 0) warnings.push(`cooldown: ${refused} line(s) of the nodes' records were not cooldown records and were left out`);
  const missing = jobNodes === null ? 0 : Math.max(0, jobNodes - nodes.length);
  if (missing > 0) {
    warnings.push(`cooldown: ${missing} of the job's ${jobNodes} node(s) wrote no cooldown record before the job's deadline; the workload ran without knowing they had cooled`);
  }
  const { waitStartNs, waitEndNs } = cooled;
  const window = waitStartNs !== null && waitEndNs !== null && waitEndNs >= waitStartNs ? { startMs: nsToMs(waitStartNs), endMs: nsToMs(waitEndNs) } : null;
  const waitedS = window ? (window.endMs - window.startMs) / 1000 : Math.max(0, ...nodes.map((n) => n.waitedS));
  const reached = nodes.length > 0 && missing === 0 && nodes.every((n) => n.reached);
  return { cooldown: { waitedS, reached, window, nodes }, warnings };
}

function nsToMs(ns: bigint): number {
  return Number(ns / 1000n) / 1000;
}
