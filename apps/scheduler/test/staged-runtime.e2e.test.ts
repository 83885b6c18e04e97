// erg's own agent runtime on a cluster whose nodes have no Node.js, end to end on the local Slurm
// cluster: the probe finds that the cluster's agentCommand is not there, erg stages its vendored
// Node.js and koffi for the nodes' architecture once in the cluster's runtime folder (checked,
// atomically), and the campaign's agents run with it. Here the node has a Node.js of its own, so
// "no Node.js on the nodes" is an agentCommand that does not exist there; the 24.11 cluster's root
// has none at all (deploy/local-slurm/24.11/lib.sh), so every file on it runs its agents this way.
import { hostname } from 'node:os';
import { readRuntimeManifest } from '@erg/agent';
import { NODE_FILE_SUFFIXES, RUN_DIR_FILES } from '@erg/spec';
import { waitFor } from '@erg/testkit';
import { localClusterHarness } from './harness';

jest.setTimeout(240_000);

describe("a cluster whose nodes lack the agent's command: erg's staged runtime", () => {
  const h = localClusterHarness();
  const x64 = readRuntimeManifest().platforms['linux-x64']!;

  test('is chosen by the probe with its reason, staged once (checked, nothing half-done left), and runs the agents, koffi resolvable', async () => {
    // A runtime folder of this file's own: the staging is part of what it checks.
    const runtimeDir = `${h.workDir}/runtime`;
    await h.registerCluster('bare', { agentCommand: 'erg-no-such-node', runtimeDir });
    const choice = await waitFor(
      async () => (await h.call('GET', '/v1/clusters/bare')).body.capabilities?.agentRuntime,
      { timeoutMs: 60_000, what: "the probe's choice of runtime" },
    );
    const host = (await h.slurmLink().connection.exec('hostname')).stdout.trim();
    expect(choice).toEqual({
      use: 'staged', platform: 'linux-x64', node: x64.node, problem: null,
      reason: `staged Node.js ${x64.node} linux-x64: agentCommand \`erg-no-such-node\` not found on ${host} (exit 127)`,
      nodeArchs: [{ arch: 'x86_64', nodes: 1, example: hostname() }],
    });
    expect((await h.call('GET', '/v1/clusters/bare')).body).toMatchObject({ agentRuntime: 'auto', runtimeDir });

    const campaign = await h.submit({
      name: 'staged-runtime', cluster: 'bare', repetitions: 2, telemetry: { intervalMs: 100 },
      run: "awk 'BEGIN { s = 0; for (i = 0; i < 2000000; i++) s += sqrt(i) }'\nsleep 1",
    });
    const runs = await h.waitForCampaignEnd(campaign.id);
    expect(runs.map((r: { state: string }) => r.state)).toEqual(['completed', 'completed']);
    const { connection } = h.slurmLink();
    for (const run of runs) {
      const energy = (await h.call('GET', `/v1/runs/${run.id}/energy`)).body;
      expect(energy.energyJ).toBeGreaterThan(0);
      expect(energy.coverage).toBeGreaterThan(0.8);
      // The agent ran on erg's Node.js, and found koffi beside it: NVML failed only for want of a driver.
      const meta = JSON.parse((await connection.exec(`cat '${run.runDir}/${RUN_DIR_FILES.telemetryDir}'/*${NODE_FILE_SUFFIXES.meta}`)).stdout);
      expect(meta).toMatchObject({ nodeVersion: `v${x64.node}`, platform: 'linux-x64' });
      expect(meta.notes.nvml.join(' ')).toContain('libnvidia-ml.so.1');
      expect(meta.notes.nvml.join(' ')).not.toContain('koffi cannot be loaded');
      const jobScript = (await connection.exec(`cat '${run.runDir}/${RUN_DIR_FILES.jobScript}'`)).stdout;
      expect(jobScript).toContain(`env NODE_PATH='${runtimeDir}/linux-x64-${x64.id}/node_modules' '${runtimeDir}/linux-x64-${x64.id}/bin/node' `);
      expect(jobScript).not.toContain('erg-no-such-node');
    }
    // Staged once, under its content id, complete and checked; no temporary folder left.
    const listing = (await connection.exec(`ls -A '${runtimeDir}'`)).stdout.trim().split('\n');
    expect(listing).toEqual([`linux-x64-${x64.id}`]);
    const check = await connection.exec(`cd '${runtimeDir}/linux-x64-${x64.id}' && echo '${x64.files.map((f) => `${f.sha256}  ${f.path}`).join('\n')}' | sha256sum -c --quiet && bin/node --version`);
    expect(check).toMatchObject({ code: 0, stdout: `v${x64.node}\n` });
  });
});
