// Multi-node runs on the multi-node local cluster (deploy/local-slurm/up.sh --multinode): four
// nodes gh-[001-004], each in network, UTS and mount namespaces of its own, whose power meters are
// GH200-shaped FIXTURE trees that sensors.js writes from the CPU time of each node's processes
// (docs/local-cluster.md says exactly what is emulated). One agent per node, srun across the nodes
// for real: the run's energy is the sum of its nodes', each node's share is in its figures, and a
// node whose agent fails or dies is named, its neighbours' energy kept.
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { telemetrySummary } from '@erg/db';
import { decodeCampaignText } from '@erg/spec';
import { clusterTempDir, repoRoot, waitFor } from '@erg/testkit';
import { localClusterHarness } from './harness';

jest.setTimeout(240_000);

describe('multi-node runs on the multi-node local cluster', () => {
  const h = localClusterHarness();

  beforeAll(() => {
    if (!h.local.nodes || h.local.nodes.length < 4) throw new Error('ERG_E2E_SLURM=multinode: this file needs the multi-node cluster (up.sh --multinode)');
  });

  /** The module meter a node's fixture tree shows now (W): what sensors.js last wrote. */
  function moduleWatts(node: string): number {
    const hwmon = path.join(h.local.nodesDir!, node, 'sys/class/hwmon');
    for (const dir of ['hwmon1', 'hwmon2', 'hwmon3', 'hwmon4']) {
      if (readFileSync(path.join(hwmon, dir, 'device/power1_oem_info'), 'utf8').startsWith('Module')) {
        return Number(readFileSync(path.join(hwmon, dir, 'device/power1_average'), 'utf8')) / 1e6;
      }
    }
    throw new Error(`no module meter in ${hwmon}`);
  }

  /** A node's samples as its agent spooled them, and as the API stored them: equal when nothing was lost. */
  async function spooledAndStored(run: { id: string; runDir: string | null }, node: string): Promise<{ spooled: number; stored: number }> {
    const { stdout } = await h.slurmLink().connection.exec(`cat '${run.runDir}/telemetry/${node}.spool'`);
    const spooled = stdout.split('\n').filter((l) => l.trim() !== '')
      .reduce((n, l) => n + (JSON.parse(l) as { samples: { t: number | number[] }[] }).samples.reduce((m, x) => m + (Array.isArray(x.t) ? x.t.length : 1), 0), 0);
    const stored = (await telemetrySummary(h.db, run.id)).find((s) => s.node === node)!.samples;
    return { spooled, stored };
  }

  test("a 4-node run's energy is the sum of its nodes' module meters, each node's share in its figures, the busy nodes drawing more", async () => {
    // Two ranks (on the first two nodes) burn a fixed 2 CPU-seconds, two sleep: the nodes' meters
    // follow their load. A fixed amount of CPU work, not a fixed time: on a machine shared with
    // other test files a busy loop of 3 s may get a fraction of a core (seen in CI: 1.5 W above the
    // idle floor), while 2 CPU-seconds are 2 CPU-seconds however long they take.
    const burnCpuS = 2;
    const campaign = await h.submit({
      name: 'four-nodes', cluster: 'local', resources: { nodes: 4, ntasksPerNode: 1 },
      telemetry: { intervalMs: 200 },
      files: { 'burn.py': 'import sys, time\nwhile time.process_time() < float(sys.argv[1]):\n    pass\n' },
      run: `srun --nodes=4 --ntasks-per-node=1 bash -c 'if [ "$SLURM_NODEID" -lt 2 ]; then python3 burn.py ${burnCpuS}; else sleep 3; fi; echo "$SLURM_NODEID $(hostname)"'`,
    });
    const [run] = await h.waitForCampaignEnd(campaign.id);
    expect(run.state).toBe('completed');
    expect(run.nodeList).toBe('gh-[001-004]');
    const { status, body: e } = await h.call('GET', `/v1/runs/${run.id}/energy`);
    expect(status).toBe(200);
    const nodes = e.nodes as { node: string; energyJ: number; sensorsUsed: string[]; coverage: number; components: Record<string, number> }[];
    expect(nodes.map((n) => n.node).sort()).toEqual(['gh-001', 'gh-002', 'gh-003', 'gh-004']);
    // Each node measured by its own module meter (hwmon), the sum is the run's energy.
    for (const n of nodes) {
      expect(n.sensorsUsed).toEqual(['module0.power']);
      expect(n.coverage).toBeGreaterThan(0.9);
      expect(n.energyJ).toBeGreaterThan(0);
    }
    expect(e.method).toBe('integrated');
    expect(e.energyJ).toBeCloseTo(nodes.reduce((s, n) => s + n.energyJ, 0), 6);
    // The emulated idle floor differs per node (165, 171, 177, 183 W with nothing running) and each
    // CPU-second a node's processes use adds 34 + 1.5k J (sensors.js). Above its floor, a busy node
    // drew about 2 CPU-seconds' worth more than a sleeping one (both run an agent; the last tick's
    // share may fall after the window, hence the margins); a sleeping node less than one. The floor
    // counts over the part of the window the node's samples cover (nothing is integrated before a
    // node's first sample or after its last).
    const floor: Record<string, number> = { 'gh-001': 165, 'gh-002': 171, 'gh-003': 177, 'gh-004': 183 };
    const above = Object.fromEntries(nodes.map((n) => [n.node, n.energyJ - floor[n.node]! * n.coverage * e.timeS]));
    const perCpuS = (k: number) => 34 + 1.5 * k;
    for (const [busy, idle, k] of [['gh-001', 'gh-003', 0], ['gh-002', 'gh-004', 1]] as const) {
      expect(above[busy]! - above[idle]!).toBeGreaterThan(0.6 * burnCpuS * perCpuS(k));
      expect(above[busy]! - above[idle]!).toBeLessThan(1.5 * burnCpuS * perCpuS(k));
    }
    expect(above['gh-003']).toBeLessThan(perCpuS(2));
    expect(above['gh-004']).toBeLessThan(perCpuS(3));
    // The meters went back to idle after the run (the emulator follows load, not a script).
    await waitFor(() => Math.abs(moduleWatts('gh-001') - 165) < 3, { timeoutMs: 10_000, what: "gh-001's module meter back near idle" });
  });

  test('a job of two tasks on each of two nodes starts one agent per node, not one per task: every spooled sample stored, nothing rejected', async () => {
    // The agents' srun inherits the job's task count; without its own, Slurm 22.05 ignores
    // --ntasks-per-node=1 ("can't honor") and starts an agent per task: two agents appending to one
    // node's spool, whose interleaved batches the API refuses.
    const campaign = await h.submit({
      name: 'two-per-node', cluster: 'local', resources: { nodes: 2, ntasksPerNode: 2 }, telemetry: { intervalMs: 200 },
      run: 'srun bash -c \'sleep 2; echo "$SLURM_PROCID $(hostname)"\'',
    });
    const [run] = await h.waitForCampaignEnd(campaign.id);
    expect(run!.state).toBe('completed');
    const exec = async (command: string) => (await h.slurmLink().connection.exec(command)).stdout;
    expect(await exec(`cat '${run!.runDir}/telemetry/agent.log'`)).not.toMatch(/can't honor/);
    const { body: e } = await h.call('GET', `/v1/runs/${run!.id}/energy`);
    expect(e.nodes.map((n: { node: string }) => n.node).sort()).toEqual(['gh-001', 'gh-002']);
    expect(e.flags).toEqual([]);
    for (const node of ['gh-001', 'gh-002']) {
      const { spooled, stored } = await spooledAndStored(run!, node);
      expect(stored).toBe(spooled);
    }
  });

  test("one node's agent never starting and another's dying mid-run: the run is flagged naming both nodes, the other nodes' telemetry and energy are whole", async () => {
    // The agents' interpreter for this cluster registration: a wrapper (test code, not erg's) that
    // fails at once on gh-003 and SIGKILLs the agent on gh-002 a second into the workload.
    const dir = clusterTempDir(h.local, 'erg-mn-agents-');
    const wrapper = path.join(dir.hostPath, 'node-wrapper.sh');
    writeFileSync(wrapper, [
      '#!/bin/sh',
      'case "$(hostname)" in',
      '  gh-003) echo "no agent runtime on gh-003 (test)" >&2; exit 127 ;;',
      `  gh-002) node "$@" & pid=$!; while [ ! -e '${dir.clusterPath}/started' ]; do sleep 0.1; done; sleep 1; kill -KILL $pid; exit 137 ;;`,
      'esac',
      'exec node "$@"',
      '',
    ].join('\n'));
    chmodSync(wrapper, 0o755);
    await h.registerCluster('flaky-agents', { agentCommand: path.join(dir.clusterPath, 'node-wrapper.sh') });
    const campaign = await h.submit({
      name: 'agent-faults', cluster: 'flaky-agents', resources: { nodes: 4, ntasksPerNode: 1 },
      telemetry: { intervalMs: 200 },
      run: `touch '${dir.clusterPath}/started'\nsrun --nodes=4 --ntasks-per-node=1 sleep 4`,
    });
    const [run] = await h.waitForCampaignEnd(campaign.id, 180_000);
    expect(run.state).toBe('completed');
    const { body: e } = await h.call('GET', `/v1/runs/${run.id}/energy`);
    const byNode = Object.fromEntries((e.nodes as { node: string; energyJ: number; coverage: number }[]).map((n) => [n.node, n]));
    // gh-003 sent nothing: named, and the run's energy says it lacks that node's.
    expect(Object.keys(byNode).sort()).toEqual(['gh-001', 'gh-002', 'gh-004']);
    expect(e.flags).toContain('missing_node');
    expect(e.warnings).toContainEqual(expect.stringMatching(/^node gh-003: no telemetry from its agent .* 3 of the job's 4 nodes/));
    // gh-002's agent died a second into the 4 s workload: its meter covers part of the window,
    // and the validity gates fail the measurement naming it.
    expect(byNode['gh-002']!.coverage).toBeLessThan(0.6);
    expect(e.flags).toContain('invalid');
    expect(e.validity.reasons.join('\n')).toMatch(/gh-002/);
    // The other nodes lost nothing: whole coverage, and every sample they spooled stored.
    for (const node of ['gh-001', 'gh-004']) {
      expect(byNode[node]!.coverage).toBeGreaterThan(0.9);
      const { spooled, stored } = await spooledAndStored(run, node);
      expect(stored).toBe(spooled);
    }
  });

  test('examples/multinode-cpu.yaml: each configuration on its own node count, every run measured on each of its nodes, node effects and the gather\'s network bytes over the campaign', async () => {
    const decoded = decodeCampaignText(readFileSync(path.join(repoRoot(), 'examples', 'multinode-cpu.yaml'), 'utf8'), 'yaml');
    if (!decoded.ok) throw new Error(JSON.stringify(decoded.issues));
    // Two repetitions instead of three: the suite's time is a budget.
    const campaign = await h.submit({ ...(decoded.raw as object), cluster: 'local', repetitions: 2 });
    const runs = await h.waitForCampaignEnd(campaign.id, 180_000);
    expect(runs.map((r) => r.state)).toEqual(runs.map(() => 'completed'));
    const meanEnergy: Record<string, number> = {};
    for (const run of runs) {
      const nodes = Number(run.parameters.nodes);
      const { body: e } = await h.call('GET', `/v1/runs/${run.id}/energy`);
      expect(e.nodes).toHaveLength(nodes);
      // Long enough to measure (no too_short), every node of the job measured (the gates' reasons
      // beside the flags, so that a failure says which).
      expect({ nodes, flags: e.flags, reasons: e.validity.reasons }).toEqual({ nodes, flags: [], reasons: [] });
      expect(e.energyJ).toBeCloseTo(e.nodes.reduce((s: number, n: { energyJ: number }) => s + n.energyJ, 0), 6);
      meanEnergy[nodes] = (meanEnergy[nodes] ?? 0) + e.energyJ / 2;
    }
    // The same work on 4 nodes holds 4 modules' idle power: it costs more energy than on 1.
    expect(meanEnergy[4]).toBeGreaterThan(meanEnergy[1]!);
    const { body: results } = await h.call('GET', `/v1/campaigns/${campaign.id}/results`);
    expect(results.configurations.map((c: { key: string; n: number }) => [c.key, c.n])).toEqual([['nodes=1', 2], ['nodes=2', 2], ['nodes=4', 2]]);
    expect(results.nodes.nodes).toBeGreaterThanOrEqual(2);
    // Every rank sent 32 MiB to the first node: over the network from each other node (its own eth0,
    // real counters), within the node for the first. Network bytes count what nodes sent, between
    // the samples inside the workload's window (every 100 ms): the gather ends the workload, so the
    // bytes of its last moments may fall after the last sample — seen: 88 % of them counted.
    const networkBytes = (key: string) => results.dataMovement.configurations.find((c: { key: string }) => c.key === key)
      .kinds.find((k: { kind: string }) => k.kind === 'network').bytes.mean as number;
    const gathered = 32 * 2 ** 20;
    expect(networkBytes('nodes=1')).toBeLessThan(gathered / 4);
    expect(networkBytes('nodes=2')).toBeGreaterThan(0.6 * gathered);
    expect(networkBytes('nodes=2')).toBeLessThan(1.5 * gathered);
    expect(networkBytes('nodes=4')).toBeGreaterThan(3 * 0.6 * gathered);
    expect(networkBytes('nodes=4')).toBeLessThan(3 * 1.5 * gathered);
    expect(networkBytes('nodes=4')).toBeGreaterThan(networkBytes('nodes=2'));
    for (const c of results.configurations) expect(c.metrics.gathered_mb.mean).toBeCloseTo((Number(c.parameters.nodes) * gathered) / 1e6, 0);
  });

  test("a node's clock 3 s ahead of the batch host's: the clock gates fail naming it, and its samples are moved onto the window's clock", async () => {
    // The second node's agent runs under libfaketime (Debian's, installed by up.sh --multinode):
    // its wall clock, which stamps its samples and its pushes' x-erg-sent-at, runs 3 s ahead.
    const dir = clusterTempDir(h.local, 'erg-mn-clock-');
    const wrapper = path.join(dir.hostPath, 'node-skewed.sh');
    writeFileSync(wrapper, [
      '#!/bin/sh',
      '[ "$SLURM_NODEID" = 1 ] && export LD_PRELOAD=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 FAKETIME=+3s',
      'exec node "$@"',
      '',
    ].join('\n'));
    chmodSync(wrapper, 0o755);
    await h.registerCluster('skewed-clock', { agentCommand: path.join(dir.clusterPath, 'node-skewed.sh') });
    const campaign = await h.submit({
      name: 'clock-skew', cluster: 'skewed-clock', resources: { nodes: 2, ntasksPerNode: 1 }, telemetry: { intervalMs: 200 },
      run: 'srun --nodes=2 --ntasks-per-node=1 timeout 3 sh -c "while :; do :; done" || true',
    });
    const [run] = await h.waitForCampaignEnd(campaign.id);
    const { body: e } = await h.call('GET', `/v1/runs/${run.id}/energy`);
    const [batchHost, second] = e.nodes.map((n: { node: string }) => n.node).sort();
    const check = (name: string) => e.validity.checks.find((c: { check: string }) => c.check === name);
    expect(check('clock_offset')).toMatchObject({ status: 'fail', where: expect.stringContaining(second) });
    expect(check('clock_spread')).toMatchObject({ status: 'fail' });
    expect(check('clock_spread').value).toBeGreaterThan(2_500);
    expect(e.flags).toContain('invalid');
    // Moved onto the window's clock, the skewed node's samples cover the window as the other's do
    // (left where its clock put them, a 3 s run keeps about a tenth of its expected intervals).
    expect(check('sample_share')).toMatchObject({ status: 'pass' });
    expect(e.warnings).toContainEqual(expect.stringMatching(new RegExp(`^node ${second}: its clock is \\+(2\\.[5-9]|3\\.[0-4])\\d s from ${batchHost}'s, which timed the window .* moved by −`)));
  });
});
