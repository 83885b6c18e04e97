import type { ClusterRecord } from '@erg/db';
import { shellQuote, type AgentHook } from '@erg/slurm';
import type { StagedAgent } from './agent-bundle';
import { agentStartLines, agentStopLines, type CampaignSpec } from '@erg/spec';

/**
 * The lines job.sh runs around the workload to measure it (@erg/spec's run-dir owns them: the
 * agents on every node, their folder, the cooldown's wait, the idle baseline), filled with this cluster's agent
 * command (or erg's staged runtime, when the probe chose it) and this campaign's telemetry settings. Every value from the cluster's settings is
 * shell-quoted; the rest is erg's own text. `site.maxPhaseNames` (ERG_MAX_PHASE_NAMES) is told to the
 * workload's mark writers.
 */
export function agentHook(cluster: ClusterRecord, spec: CampaignSpec, staged: StagedAgent, site: { maxPhaseNames?: number } = {}): AgentHook {
  const { intervalMs, idleBaselineS } = spec.telemetry;
  const options = [
    `--interval-ms ${intervalMs}`, `--model-idle-w ${cluster.modelIdleW}`, `--model-max-w ${cluster.modelMaxW}`,
    ...(cluster.agentApiUrl ? [`--api-url ${shellQuote(cluster.agentApiUrl)}`] : []),
    // job.sh exports it (the renderer): the agent records the workload's git commit.
    ...(spec.workloadDir !== undefined ? ['--workload-dir "$ERG_WORKLOAD_DIR"'] : []),
    // Validated names (NET_INTERFACE: no shell characters), quoted all the same.
    ...(spec.telemetry.netInterfaces ? [`--net-interfaces ${shellQuote(spec.telemetry.netInterfaces.join(','))}`] : []),
  ].join(' ');
  // erg's staged runtime: its Node.js, and koffi resolvable from its node_modules (NVML through koffi).
  const runtime = staged.runtime ? `env NODE_PATH=${shellQuote(staged.runtime.nodePath)} ${shellQuote(staged.runtime.node)}` : shellQuote(cluster.agentCommand);
  const start = agentStartLines({
    program: `${runtime} ${shellQuote(staged.bundle)}`,
    markTools: shellQuote(staged.markTools),
    ...(site.maxPhaseNames !== undefined ? { maxPhaseNames: site.maxPhaseNames } : {}),
    options,
    gpusPerNode: spec.resources.gpusPerNode,
    idleBaselineS,
    // The agents read the plan the scheduler stages beside job.sh (cooldown.ts); job.sh waits for their records.
    ...(spec.cooldown ? { cooldown: { maxWaitS: spec.cooldown.maxWaitS } } : {}),
  });
  return { start, stop: agentStopLines() };
}
