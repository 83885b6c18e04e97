import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AGENT_BUNDLE_PATH, AGENT_RUNTIME_VENDOR_DIR, readRuntimeManifest, type TelemetryBatch } from '@erg/agent';
import { repoRoot, waitFor } from '@erg/testkit';
import { unpackCommand } from '../src/runtime-stager';

// erg's staged agent runtime, both platforms, as a compute node runs it: each staged the way the
// login node stages it (unpackCommand), then the agent bundle run by that runtime's Node.js with
// koffi from its node_modules, against the same FIXTURES — the GH200 hwmon tree
// (apps/agent/test/fixtures/gh200) and the fake libnvidia-ml (apps/agent/test/fixtures/fake-nvml)
// built for each architecture. The arm64 runtime runs under qemu-user (qemu-aarch64-static, called
// directly: binfmt_misc is not mounted here; -L gives it the aarch64 loader and libc of Debian's
// libc6-arm64-cross) with the fake NVML built by aarch64-linux-gnu-gcc. Both must read NVML
// through koffi (not the nvidia-smi fallback) and produce the same batches: the same sensors,
// the same readings of the fixtures, the same energy-counter steps.

const root = repoRoot();
const FIXTURES = path.join(root, 'apps', 'agent', 'test', 'fixtures');
const AARCH64_SYSROOT = '/usr/aarch64-linux-gnu';
const manifest = readRuntimeManifest();
let work: string;

beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'erg-staged-arch-'));
  execFileSync(process.execPath, [path.join(root, 'apps', 'agent', 'build-bundle.js')], { stdio: 'pipe' });
}, 60_000);
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

/** Stages a platform's runtime into `work` as the login node does; returns its folder. */
function stage(platform: 'linux-x64' | 'linux-arm64'): string {
  const m = manifest.platforms[platform]!;
  const tmp = path.join(work, `.staging-${platform}`);
  const dir = path.join(work, `${platform}-${m.id}`);
  fs.mkdirSync(tmp);
  for (const t of m.tarballs) fs.copyFileSync(path.join(AGENT_RUNTIME_VENDOR_DIR, t.file), path.join(tmp, t.file));
  fs.writeFileSync(path.join(tmp, 'tarballs.sha256'), m.tarballs.map((t) => `${t.sha256}  ${t.file}\n`).join(''));
  fs.writeFileSync(path.join(tmp, 'files.sha256'), m.files.map((f) => `${f.sha256}  ${f.path}\n`).join(''));
  execFileSync('sh', ['-c', unpackCommand(tmp, dir, m, 0o077)], { stdio: 'pipe' });
  return dir;
}

/** The fake NVML built with `cc` (this machine's gcc, or the aarch64 cross compiler). */
function fakeNvml(cc: string, name: string): string {
  const out = path.join(work, name);
  execFileSync(cc, ['-shared', '-fPIC', '-O1', '-DENERGY_STEP_MJ=4500ull', '-o', out, path.join(FIXTURES, 'fake-nvml', 'fake_nvml.c')]);
  return out;
}

interface AgentOutput { meta: Record<string, unknown> & { sources: { name: string }[]; sensors: unknown[]; notes: Record<string, string[]>; nodeVersion: string; platform: string }; batches: TelemetryBatch[] }

/** Runs the bundle with `launcher` (argv before the bundle) until `samples` cycles are spooled, then stops it as job.sh does (SIGUSR2). */
async function runAgent(launcher: string[], runtimeDir: string, nvml: string, samples: number): Promise<AgentOutput> {
  const spool = fs.mkdtempSync(path.join(work, 'spool-'));
  const sysfs = fs.mkdtempSync(path.join(work, 'sysfs-'));
  fs.cpSync(path.join(FIXTURES, 'gh200'), sysfs, { recursive: true });
  const args = [
    AGENT_BUNDLE_PATH, '--run-id', randomUUID(), '--spool-dir', spool, '--node', 'gh-001', '--interval-ms', '200', '--batch-ms', '400',
    '--sysfs-root', sysfs, '--procfs-root', path.join(FIXTURES, 'procfs'), '--nvml-lib', nvml,
    '--nvidia-smi', '/nonexistent/nvidia-smi', '--dcgmi', '/nonexistent/dcgmi', '--perf', '/nonexistent/perf', '--sources', 'hwmon,nvml',
  ];
  const child = spawn(launcher[0]!, [...launcher.slice(1), ...args], { env: { PATH: '/usr/bin:/bin', NODE_PATH: path.join(runtimeDir, 'node_modules') }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const spooled = (): TelemetryBatch[] => {
    const file = path.join(spool, 'gh-001.spool');
    return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as TelemetryBatch) : [];
  };
  const count = (bs: TelemetryBatch[]) => Math.min(...['module0.power', 'gpu0.power'].map((s) => bs.flatMap((b) => b.samples.filter((c) => c.sensor === s).flatMap((c) => c.v)).length));
  await waitFor(() => count(spooled()) >= samples, { what: `${samples} samples from ${launcher.join(' ')} (stderr: ${stderr.slice(-500)})`, timeoutMs: 60_000, intervalMs: 100 });
  child.kill('SIGUSR2');
  expect(await exited).toBe(0);
  return { meta: JSON.parse(fs.readFileSync(path.join(spool, 'gh-001.meta.json'), 'utf8')), batches: spooled() };
}

/** Every reading per sensor, in order. */
function readingsOf(batches: TelemetryBatch[]): Record<string, number[]> {
  const readings: Record<string, number[]> = {};
  for (const b of batches) for (const c of b.samples) (readings[c.sensor] ??= []).push(...c.v);
  return readings;
}

/**
 * What must not differ between architectures: the sources, the declared sensors, and per sensor
 * its first readings (the fixtures' and the fake's values are deterministic). As many readings as
 * both have, at most `n`: PCIe is read in rounds on koffi's worker threads, which come round at
 * their own pace (slower under emulation).
 */
function expectSameBatches(a: AgentOutput, b: AgentOutput, n: number): void {
  const shape = (o: AgentOutput) => ({ sources: o.meta.sources.map((s) => s.name), sensors: o.meta.sensors, declared: o.batches[0]?.sensors });
  expect(shape(b)).toEqual(shape(a));
  const ra = readingsOf(a.batches);
  const rb = readingsOf(b.batches);
  expect(Object.keys(rb).sort()).toEqual(Object.keys(ra).sort());
  for (const sensor of Object.keys(ra)) {
    const k = Math.min(n, ra[sensor]!.length, rb[sensor]!.length);
    expect(k).toBeGreaterThanOrEqual(1);
    expect({ sensor, readings: rb[sensor]!.slice(0, k) }).toEqual({ sensor, readings: ra[sensor]!.slice(0, k) });
  }
}

describe("erg's staged runtime on x86-64 and on aarch64 (under qemu-user), against the GH200 fixtures", () => {
  test('both read NVML through koffi and produce the same batches', async () => {
    const x64 = stage('linux-x64');
    const arm64 = stage('linux-arm64');
    const nvmlX64 = fakeNvml('gcc', 'libfake-nvml-x64.so');
    const nvmlArm64 = fakeNvml('aarch64-linux-gnu-gcc', 'libfake-nvml-arm64.so');
    expect(execFileSync('file', ['-b', path.join(arm64, 'bin', 'node')], { encoding: 'utf8' })).toMatch(/ARM aarch64/);
    // Staged with the site's umask (ERG_RUN_UMASK, here the default 077): the cluster user's alone.
    expect(fs.statSync(path.join(x64, 'bin', 'node')).mode & 0o077).toBe(0);

    const onX64 = await runAgent([path.join(x64, 'bin', 'node')], x64, nvmlX64, 4);
    const onArm64 = await runAgent(['qemu-aarch64-static', '-L', AARCH64_SYSROOT, path.join(arm64, 'bin', 'node')], arm64, nvmlArm64, 4);

    expect(onX64.meta).toMatchObject({ nodeVersion: `v${manifest.platforms['linux-x64']!.node}`, platform: 'linux-x64' });
    expect(onArm64.meta).toMatchObject({ nodeVersion: `v${manifest.platforms['linux-arm64']!.node}`, platform: 'linux-arm64' });
    for (const out of [onX64, onArm64]) {
      // NVML through koffi: the nvml source is active and nothing says koffi could not be loaded.
      expect(out.meta.sources.map((s) => s.name)).toEqual(['hwmon', 'nvml']);
      expect(JSON.stringify(out.meta.notes)).not.toContain('koffi cannot be loaded');
    }
    const sensors = Object.keys(readingsOf(onX64.batches));
    expect(sensors).toEqual(expect.arrayContaining(['module0.power', 'module0.energy', 'gpu0.power', 'grace0.power']));
    expectSameBatches(onX64, onArm64, 4);
  }, 120_000);
});
