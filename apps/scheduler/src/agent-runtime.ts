import type { AgentRuntimeChoice, AgentRuntimeSetting, RuntimePlatform } from '@erg/spec';
import type { RuntimeProbe } from '@erg/slurm';

/** The oldest Node.js the agent bundle runs on (build-bundle.js targets node18). */
export const MIN_NODE_MAJOR = 18;

/** `uname -m` (as slurmd reports it in Arch=) → the platform erg vendors a runtime for; null: none. */
export function platformOfArch(arch: string): RuntimePlatform | null {
  if (arch === 'x86_64' || arch === 'amd64') return 'linux-x64';
  if (arch === 'aarch64' || arch === 'arm64') return 'linux-arm64';
  return null;
}

/** `node --version`'s answer → its version ("v20.20.2" → "20.20.2"); null for anything else. */
export function nodeVersionOf(exitCode: number, output: string): string | null {
  if (exitCode !== 0) return null;
  return /^v(\d+\.\d+\.\d+)\s*$/.exec(output.trim())?.[1] ?? null;
}

/** What `<agentCommand> --version` said, in words, for a reason line. */
function commandAnswer(agentCommand: string, probe: RuntimeProbe): string {
  const { exitCode, output } = probe.command;
  const cmd = `agentCommand \`${agentCommand}\``;
  if (exitCode === 127) return `${cmd} not found on ${probe.host} (exit 127)`;
  if (exitCode === 126) return `${cmd} not executable on ${probe.host} (exit 126)`;
  if (exitCode === 124 || exitCode === 137) return `${cmd} --version did not answer within 10 s on ${probe.host}`;
  const version = nodeVersionOf(exitCode, output);
  if (version === null) return `${cmd} --version on ${probe.host} answered ${JSON.stringify(output.slice(0, 80))} (exit ${exitCode}), not a Node.js version`;
  return `${cmd} is Node.js ${version} on ${probe.host}`;
}

/**
 * Chooses the agents' runtime from the cluster's setting, its agent command, what the probe found
 * and the versions erg vendors (`staged`: platform → Node.js version). Pure: the probe gathers,
 * this decides, the scheduler stages what it says.
 *
 * auto: agentCommand when it answers as Node.js ≥ MIN_NODE_MAJOR on a login node of the nodes'
 * architecture (where it runs the agents run too, as on most sites' shared software trees);
 * otherwise erg's own runtime for the nodes' architecture.
 */
export function chooseAgentRuntime(
  setting: AgentRuntimeSetting, agentCommand: string, probe: RuntimeProbe, staged: Partial<Record<RuntimePlatform, string>>,
): AgentRuntimeChoice {
  // Slurm's word on the nodes; without it (no node answered scontrol), the login node's own.
  const nodeArchs = probe.nodeArchs.length > 0 ? probe.nodeArchs : [{ arch: probe.hostArch, nodes: 1, example: probe.host }];
  const main = nodeArchs[0]!;
  const mixed = nodeArchs.length > 1
    ? `the nodes have several architectures (${nodeArchs.map((a) => `${a.arch} ×${a.nodes}`).join(', ')}): erg stages one per cluster, for ${main.arch}; register one cluster per partition of one architecture`
    : null;
  const platform = platformOfArch(main.arch);
  const version = nodeVersionOf(probe.command.exitCode, probe.command.output);
  const answer = commandAnswer(agentCommand, probe);
  const useCommand = (reason: string, problem: string | null = mixed): AgentRuntimeChoice => ({ use: 'command', platform: null, node: version, reason, problem, nodeArchs });
  const useStaged = (reason: string): AgentRuntimeChoice => {
    const node = platform === null ? undefined : staged[platform];
    if (platform === null || node === undefined) {
      return useCommand(`${reason}, but erg ships no runtime for ${main.arch} (nodes such as ${main.example}); agents start with agentCommand`, `no staged runtime for ${main.arch}: install Node.js ${MIN_NODE_MAJOR}+ on the nodes and set agentCommand`);
    }
    return { use: 'staged', platform, node, reason: `staged Node.js ${node} ${platform}: ${reason}`, problem: mixed, nodeArchs };
  };

  if (setting === 'command') return useCommand(`agentRuntime is "command": ${answer}`);
  if (setting === 'staged') return useStaged('agentRuntime is "staged"');
  if (version === null) return useStaged(answer);
  const major = Number(version.split('.')[0]);
  if (major < MIN_NODE_MAJOR) return useStaged(`${answer}, older than ${MIN_NODE_MAJOR}`);
  if (platformOfArch(probe.hostArch) !== platform) {
    return useStaged(`${answer}, but the login node is ${probe.hostArch} and the nodes (e.g. ${main.example}) are ${main.arch}`);
  }
  return useCommand(answer);
}
