import { recordClusterCapabilities, type ClusterRecord } from '@erg/db';
import { SlurmCommandError } from '@erg/slurm';
import { agentRuntimeSettingOf, type ClusterCapabilities } from '@erg/spec';
import { chooseAgentRuntime } from './agent-runtime';
import type { ClusterLink } from './connections';
import type { SchedulerContext } from './context';

/** How long what a probe found is trusted before the cluster is asked again (a site may install the helper later). */
export const PROBE_EVERY_MS = 10 * 60_000;

/**
 * What erg knows of a cluster by itself — its Slurm version, whether the site's node helper
 * answers and which power knobs it allows, which runtime its agents start with (agent-runtime.ts) — found out when the scheduler first reaches the
 * cluster (capabilities null: new, or its login or helper path changed) and again every
 * PROBE_EVERY_MS, at the end of a cycle. The API refuses campaigns with a `power` block on clusters whose probe found no
 * helper (422), instead of running them at whatever state the nodes are in. Returns the
 * capabilities now recorded. SSH failures propagate (the cycle reports them); a probe that ran
 * and failed is recorded as such.
 */
export async function probeClusterIfDue(ctx: SchedulerContext, cluster: ClusterRecord, link: ClusterLink, now = Date.now()): Promise<ClusterCapabilities | null> {
  const known = cluster.capabilities;
  if (known && now - Date.parse(known.probedAt) < PROBE_EVERY_MS) return known;
  let probe: Omit<ClusterCapabilities, 'probedAt'>;
  try {
    const { runtime, ...found } = await link.slurm.probe(cluster.powerHelper, cluster.agentCommand);
    // Only a scheduler that runs agents chooses their runtime (and knows the versions it vendors).
    let agentRuntime = runtime && ctx.agent
      ? chooseAgentRuntime(agentRuntimeSettingOf(cluster.agentRuntime), cluster.agentCommand, runtime, ctx.agent.runtime?.versions() ?? {})
      : null;
    // A scheduler installed without the vendored runtime (scripts/install.sh not run) says so, not "no runtime for x86_64".
    if (agentRuntime?.problem && ctx.agent && !ctx.agent.runtime) agentRuntime = { ...agentRuntime, problem: `this scheduler has no vendored runtime: ${ctx.agent.runtimeProblem}` };
    probe = { ...found, agentRuntime };
  } catch (err) {
    // The login node answered but the probe's shell did not (a restricted shell, a missing
    // `timeout`): say so, and try again with the next probe — the cycle's work goes on.
    if (!(err instanceof SlurmCommandError)) throw err;
    probe = { slurmVersion: null, maxArraySize: null, maxJobCount: null, powerHelper: null, powerHelperProblem: `the probe failed on the login node: ${err.message}`,
      // The runtime chosen before holds: agents already staged on it keep starting with it.
      agentRuntime: known?.agentRuntime ?? null };
  }
  const capabilities: ClusterCapabilities = { probedAt: new Date(now).toISOString(), ...probe };
  await recordClusterCapabilities(ctx.db, cluster.id, capabilities);
  if (capabilities.agentRuntime && (known?.agentRuntime?.reason !== capabilities.agentRuntime.reason)) {
    ctx.log.info({ cluster: cluster.name, ...capabilities.agentRuntime, nodeArchs: undefined }, `probed the cluster: agents start with ${capabilities.agentRuntime.use === 'staged' ? "erg's staged runtime" : 'agentCommand'}`);
  }
  if ((known?.powerHelper !== null) !== (capabilities.powerHelper !== null) || known === null) {
    ctx.log.info(
      { cluster: cluster.name, slurmVersion: capabilities.slurmVersion, powerHelper: capabilities.powerHelper, problem: capabilities.powerHelperProblem },
      capabilities.powerHelper ? 'probed the cluster: the node helper answers' : 'probed the cluster: no node helper, so campaigns that set a power state are refused',
    );
  }
  return capabilities;
}
