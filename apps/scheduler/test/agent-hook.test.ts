import type { ClusterRecord } from '@erg/db';
import { CampaignSpec } from '@erg/spec';
import { agentHook } from '../src/agent-hook';

// The agents' options job.sh starts them with, from the cluster and the campaign.

const cluster = { agentCommand: 'node', agentApiUrl: null, modelIdleW: 60, modelMaxW: 250 } as unknown as ClusterRecord;
const staged = { bundle: '/w/.erg-agent/a.js', markTools: '/w/.erg-agent/marks' };
const spec = (telemetry: Record<string, unknown>) => CampaignSpec.parse({ name: 'c', cluster: 'local', run: 'sleep 1', telemetry });

describe('agentHook', () => {
  test("a campaign's telemetry.netInterfaces reach the agents as --net-interfaces, quoted; absent, the agent's own default", () => {
    const srun = (s: CampaignSpec) => agentHook(cluster, s, staged).start.split('\n').find((l) => l.startsWith('srun '))!;
    expect(srun(spec({ netInterfaces: ['hsn*', 'lo'] }))).toContain(" --net-interfaces 'hsn*,lo'");
    expect(srun(spec({}))).not.toContain('--net-interfaces');
  });
});
