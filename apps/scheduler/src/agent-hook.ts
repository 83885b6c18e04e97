import type { Cluster } from '@erg/db';
import { shellQuote, type AgentHook } from '@erg/slurm';
import type { CampaignSpec } from '@erg/spec';

/** Seconds the job waits for every node's agent to take its first sample. */
const READY_TIMEOUT_S = 30;
/** Seconds the job gives the agents to drain after the workload before killing them. */
const STOP_TIMEOUT_S = 30;

/**
 * The lines job.sh runs around the workload to measure it: start the telemetry agent on every
 * node of the job as an overlapping step, wait until each has sampled once, optionally record an
 * idle baseline, then — after the workload — ask the agents to finish (SIGUSR2, which srun
 * forwards to its tasks; SIGTERM would make srun kill them) and wait for them to drain.
 * Every value from the cluster's settings is shell-quoted; the rest is erg's own text.
 */
export function agentHook(cluster: Cluster, spec: CampaignSpec, bundlePath: string): AgentHook {
  const { intervalMs, idleBaselineS } = spec.telemetry;
  const gpus = spec.resources.gpusPerNode ? ` --gpus-per-node=${spec.resources.gpusPerNode}` : '';
  const args = [
    shellQuote(cluster.agentCommand), shellQuote(bundlePath),
    '--run-id "$ERG_RUN_ID"', '--spool-dir "$erg_telemetry"', '--token-file "$ERG_RUN_DIR/erg.token"',
    `--interval-ms ${intervalMs}`, `--model-idle-w ${cluster.modelIdleW}`, `--model-max-w ${cluster.modelMaxW}`,
    ...(cluster.agentApiUrl ? [`--api-url ${shellQuote(cluster.agentApiUrl)}`] : []),
  ].join(' ');
  const start = [
    'erg_telemetry="$ERG_RUN_DIR/telemetry"',
    'mkdir -p "$erg_telemetry"',
    `srun --overlap --ntasks-per-node=1 --nodes="\${SLURM_JOB_NUM_NODES:-1}" --kill-on-bad-exit=0${gpus} ${args} >"$erg_telemetry/agent.log" 2>&1 &`,
    'erg_agent_pid=$!',
    'erg_i=0',
    `while [ "$(ls "$erg_telemetry" 2>/dev/null | grep -c '\\.ready$')" -lt "\${SLURM_JOB_NUM_NODES:-1}" ] && [ $erg_i -lt ${READY_TIMEOUT_S * 10} ]; do sleep 0.1; erg_i=$((erg_i + 1)); done`,
    `[ $erg_i -lt ${READY_TIMEOUT_S * 10} ] || echo "erg: telemetry agents not ready after ${READY_TIMEOUT_S} s (see telemetry/agent.log)" >&2`,
    ...(idleBaselineS > 0
      ? [
          // The idle baseline: the nodes doing nothing but run the agent, measured before the workload.
          'erg_idle_start_ns=$(date +%s%N)',
          `sleep ${idleBaselineS}`,
          'erg_idle_end_ns=$(date +%s%N)',
          `printf 'idle_start_ns=%s\\nidle_end_ns=%s\\n' "$erg_idle_start_ns" "$erg_idle_end_ns" >erg.idle`,
        ]
      : []),
  ].join('\n');
  const stop = [
    'kill -USR2 "$erg_agent_pid" 2>/dev/null',
    `( sleep ${STOP_TIMEOUT_S}; kill -KILL "$erg_agent_pid" 2>/dev/null ) & erg_guard=$!`,
    'wait "$erg_agent_pid" 2>/dev/null',
    'kill "$erg_guard" 2>/dev/null',
  ].join('\n');
  return { start, stop };
}
