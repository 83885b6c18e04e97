import type { ClusterRecord } from '@erg/db';
import { CampaignSpec } from '@erg/spec';
import { agentHook } from '../src/agent-hook';

// How job.sh starts the agents: with the cluster's agentCommand, or with erg's staged runtime
// (its Node.js, koffi resolvable through NODE_PATH); every path from settings shell-quoted; and the
// agents' options from the campaign.

const cluster = { agentCommand: 'node', agentApiUrl: null, modelIdleW: 60, modelMaxW: 250 } as unknown as ClusterRecord;
const staged = { bundle: '/w/.erg-agent/a.js', markTools: '/w/.erg-agent/marks', runtime: null };
const specWith = (telemetry: Record<string, unknown>) => CampaignSpec.parse({ name: 'c', cluster: 'local', run: 'sleep 1', telemetry });
const spec = CampaignSpec.parse({ name: 'x', cluster: 'c', run: 'true' });

describe("the agents' launch line", () => {
  test("a campaign's telemetry.netInterfaces reach the agents as --net-interfaces, quoted; absent, the agent's own default", () => {
    const srun = (s: CampaignSpec) => agentHook(cluster, s, staged).start.split('\n').find((l) => l.startsWith('srun '))!;
    expect(srun(specWith({ netInterfaces: ['hsn*', 'lo'] }))).toContain(" --net-interfaces 'hsn*,lo'");
    expect(srun(specWith({}))).not.toContain('--net-interfaces');
  });

  test("agentCommand when nothing is staged", () => {
    const { start } = agentHook(cluster, spec, { bundle: '/w/.erg-agent/erg-agent-1.js', markTools: '/w/.erg-agent/marks-1', runtime: null });
    expect(start).toContain(`--kill-on-bad-exit=0 'node' '/w/.erg-agent/erg-agent-1.js' --run-id`);
  });

  test("erg's staged runtime: its node, koffi from its node_modules; odd characters in the folder stay one quoted word", () => {
    const dir = "/scratch/o'neil/rt/linux-arm64-0123456789abcdef";
    const { start } = agentHook(cluster, spec, { bundle: '/w/a.js', markTools: '/w/m', runtime: { node: `${dir}/bin/node`, nodePath: `${dir}/node_modules` } });
    expect(start).toContain(`env NODE_PATH='/scratch/o'\\''neil/rt/linux-arm64-0123456789abcdef/node_modules' '/scratch/o'\\''neil/rt/linux-arm64-0123456789abcdef/bin/node' '/w/a.js' --run-id`);
    expect(start).not.toContain("'node' '/w/a.js'");
  });
});
