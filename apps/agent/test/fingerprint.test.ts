import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NodeFingerprintSchema } from '@erg/spec';
import { parseCommandLine, type AgentConfig } from '../src/config';
import { collectFingerprint, cpuModelOf, FINGERPRINT_LIMITS, HASH_IMAGES_UP_TO_BYTES, SRUN_TIMEOUT_MS, startFingerprintProbes } from '../src/fingerprint';
import { detectNvml } from '../src/sources/nvml';
import { AGENT_VERSION } from '../src/version';
import { cleanupTempDirs, detectContext, FIXTURES, RUN_ID, tempDir } from './helpers';

// gcc builds the fake NVML and detection probes the counters' update period (up to 0.8 s per
// detect), or runs the fake dcgmi: seconds on a loaded 2-core machine, more than Jest's 5 s default.
jest.setTimeout(30_000);

// The node's fingerprint: GPUs and driver from the GPU source (the fake NVML, compiled here), the
// CPU from /proc/cpuinfo fixtures (x86 and Grace), Slurm from a fake srun, modules and container
// from the job's environment, the workload's commit from a temporary git repository.

afterAll(cleanupTempDirs);

function config(options: Record<string, string> = {}, env: NodeJS.ProcessEnv = {}): AgentConfig {
  const argv = ['--run-id', RUN_ID, '--spool-dir', '/nonexistent-spool', '--node', 'gh-001', '--procfs-root', path.join(FIXTURES, 'procfs'), '--srun', '/nonexistent/srun'];
  for (const [k, v] of Object.entries(options)) argv.push(`--${k}`, v);
  const parsed = parseCommandLine(argv, env);
  if (parsed.help) throw new Error('help');
  return parsed.config;
}
const fingerprint = (c: AgentConfig, gpuStack: Parameters<typeof collectFingerprint>[1] = null) => collectFingerprint(c, gpuStack, startFingerprintProbes(c));

/** An executable script in a temporary directory (a stand-in for srun). */
function script(name: string, body: string): string {
  const file = path.join(tempDir(), name);
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}

const git = (dir: string, ...args: string[]) => execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8' }).trim();
function gitRepo(): string {
  const dir = tempDir('erg-workload-');
  git(dir, 'init', '-q');
  fs.writeFileSync(path.join(dir, 'run.py'), 'print("hello")\n');
  git(dir, 'add', 'run.py');
  git(dir, '-c', 'user.name=erg test', '-c', 'user.email=test@erg.invalid', 'commit', '-q', '-m', 'workload');
  return dir;
}

describe('the CPU model from /proc/cpuinfo', () => {
  test('x86: its model name (fixture procfs/cpuinfo)', () => {
    expect(cpuModelOf(fs.readFileSync(path.join(FIXTURES, 'procfs', 'cpuinfo'), 'utf8'))).toBe('Intel(R) Xeon(R) Platinum 8480+');
  });

  test('Grace (aarch64, no model name): implementer 0x41 part 0xd4f is ARM Neoverse-V2 (fixture procfs/grace/cpuinfo)', () => {
    expect(cpuModelOf(fs.readFileSync(path.join(FIXTURES, 'procfs', 'grace', 'cpuinfo'), 'utf8'))).toBe('ARM Neoverse-V2');
  });

  test('a part erg does not know is named by its numbers; no CPU fields at all is null', () => {
    expect(cpuModelOf('processor\t: 0\nCPU implementer\t: 0x4e\nCPU architecture: 8\nCPU part\t: 0x004\n')).toBe('implementer 0x4e part 0x4');
    expect(cpuModelOf('processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xabc\n')).toBe('implementer 0x41 part 0xabc');
    expect(cpuModelOf('processor\t: 0\n')).toBeNull();
    expect(cpuModelOf(null)).toBeNull();
  });
});

describe('collectFingerprint', () => {
  test('GPUs, UUIDs, VBIOS, driver, CUDA and NVML versions from the fake NVML; the node from os and the cpuinfo fixture', async () => {
    const lib = path.join(tempDir(), 'libfake-nvml.so');
    execFileSync('gcc', ['-shared', '-fPIC', '-O1', '-o', lib, path.join(FIXTURES, 'fake-nvml', 'fake_nvml.c')]);
    const nvml = detectNvml(detectContext({ 'nvml-lib': lib }));
    const fp = await fingerprint(config(), nvml?.identity?.() ?? null);
    await nvml?.stop();
    expect(fp).toEqual({
      node: 'gh-001',
      hostname: os.hostname(),
      kernel: `${os.release()} ${os.version()}`,
      arch: os.arch(),
      cpuModel: 'Intel(R) Xeon(R) Platinum 8480+',
      cpuCount: os.cpus().length,
      gpus: [
        { index: 0, name: 'NVIDIA GH200 480GB (fake)', uuid: 'GPU-fake0000-0000-0000-0000-000000000000', vbios: '96.00.9F.00.01' },
        { index: 1, name: 'NVIDIA GH200 480GB (fake)', uuid: 'GPU-fake0000-0000-0000-0000-000000000001', vbios: '96.00.9F.00.01' },
      ],
      driverVersion: '550.54.15-fake',
      cudaVersion: '12.4',
      nvmlVersion: '12.550.54.15',
      slurmVersion: null, // --srun /nonexistent/srun
      container: null,
      modules: [],
      workload: null,
      agentVersion: AGENT_VERSION,
    });
    expect(NodeFingerprintSchema.safeParse(fp).success).toBe(true);
  });

  test('Grace: the CPU model from the Grace cpuinfo fixture; no GPU source: no GPUs, null versions', async () => {
    const fp = await fingerprint(config({ 'procfs-root': path.join(FIXTURES, 'procfs', 'grace') }));
    expect(fp).toMatchObject({ cpuModel: 'ARM Neoverse-V2', gpus: [], driverVersion: null, cudaVersion: null, nvmlVersion: null });
    expect((await fingerprint(config({ 'procfs-root': tempDir() }))).cpuModel).toBeNull();
  });

  test('environment modules from LOADEDMODULES, in load order', async () => {
    const fp = await fingerprint(config({}, { LOADEDMODULES: 'gcc/12.3.0:cuda/12.4.1::openmpi/4.1.6' }));
    expect(fp.modules).toEqual(['gcc/12.3.0', 'cuda/12.4.1', 'openmpi/4.1.6']);
  });

  test('Slurm\'s version from `srun --version`', async () => {
    const srun = script('srun', '[ "$1" = --version ] && echo "slurm 23.11.4"');
    expect((await fingerprint(config({ srun }))).slurmVersion).toBe('slurm 23.11.4');
  });

  test('a srun that hangs costs start-up no more than its timeout, and gives null', async () => {
    const srun = script('srun', 'exec sleep 30');
    const t0 = Date.now();
    const fp = await fingerprint(config({ srun }));
    const took = Date.now() - t0;
    expect(fp.slurmVersion).toBeNull();
    expect(took).toBeGreaterThanOrEqual(SRUN_TIMEOUT_MS - 50);
    expect(took).toBeLessThan(SRUN_TIMEOUT_MS + 1000);
  });

  test('a srun that is absent gives null at once', async () => {
    const t0 = Date.now();
    expect((await fingerprint(config({ srun: '/nonexistent/srun' }))).slurmVersion).toBeNull();
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  test('the workload directory: its git commit, dirty once a tracked file changes; nulls when it is no repository', async () => {
    const repo = gitRepo();
    const head = git(repo, 'rev-parse', 'HEAD');
    expect((await fingerprint(config({ 'workload-dir': repo }))).workload).toEqual({ dir: repo, gitCommit: head, gitDirty: false });
    fs.writeFileSync(path.join(repo, 'notes.txt'), 'untracked files do not count\n');
    expect((await fingerprint(config({ 'workload-dir': repo }))).workload?.gitDirty).toBe(false);
    fs.appendFileSync(path.join(repo, 'run.py'), 'print("changed")\n');
    expect((await fingerprint(config({ 'workload-dir': repo }))).workload).toEqual({ dir: repo, gitCommit: head, gitDirty: true });

    const plain = tempDir('erg-not-a-repo-');
    expect((await fingerprint(config({ 'workload-dir': plain }))).workload).toEqual({ dir: plain, gitCommit: null, gitDirty: null });
    expect((await fingerprint(config({ 'workload-dir': '/nonexistent/workload' }))).workload).toEqual({ dir: '/nonexistent/workload', gitCommit: null, gitDirty: null });
    // ERG_AGENT_WORKLOAD_DIR is the option's variable; an empty value (job.sh passing an unset ERG_WORKLOAD_DIR) is none.
    expect(config({}, { ERG_AGENT_WORKLOAD_DIR: repo }).workloadDir).toBe(repo);
    expect((await fingerprint(config({ 'workload-dir': '' }))).workload).toBeNull();
  });

  test('the container: named by ERG_CONTAINER_IMAGE with its digest, or by Apptainer/Singularity/Slurm/pyxis; small images are hashed, large ones never', async () => {
    const given = await fingerprint(config({}, { ERG_CONTAINER_IMAGE: 'nvcr.io/nvidia/pytorch:24.05-py3', ERG_CONTAINER_DIGEST: 'sha256:abc123', APPTAINER_CONTAINER: '/images/other.sif' }));
    expect(given.container).toEqual({ image: 'nvcr.io/nvidia/pytorch:24.05-py3', digest: 'sha256:abc123' });

    const small = path.join(tempDir(), 'tiny.sif');
    fs.writeFileSync(small, 'not really an image, but a small file\n');
    const sha = createHash('sha256').update(fs.readFileSync(small)).digest('hex');
    expect((await fingerprint(config({}, { APPTAINER_CONTAINER: small }))).container).toEqual({ image: small, digest: `sha256:${sha}` });
    expect((await fingerprint(config({}, { SINGULARITY_CONTAINER: small }))).container?.image).toBe(small);

    const big = path.join(tempDir(), 'big.sif');
    fs.writeFileSync(big, '');
    fs.truncateSync(big, HASH_IMAGES_UP_TO_BYTES + 1); // sparse: no disk used
    expect((await fingerprint(config({}, { APPTAINER_CONTAINER: big }))).container).toEqual({ image: big, digest: null });
    expect((await fingerprint(config({}, { SLURM_CONTAINER: '/run/bundles/job42' }))).container).toEqual({ image: '/run/bundles/job42', digest: null });
    expect((await fingerprint(config({}, { PYXIS_CONTAINER_IMAGE: 'ubuntu:24.04' }))).container).toEqual({ image: 'ubuntu:24.04', digest: null });
    expect((await fingerprint(config())).container).toBeNull();
  });

  test('every string and list is cut to what the API\'s NodeFingerprintSchema accepts', async () => {
    const long = (n: number) => 'x'.repeat(n);
    const c = config({ 'workload-dir': `/${long(2000)}` }, {
      LOADEDMODULES: Array.from({ length: 600 }, (_, i) => `m${i}/${long(300)}`).join(':'),
      ERG_CONTAINER_IMAGE: long(3000),
      ERG_CONTAINER_DIGEST: long(400),
    });
    const gpus = Array.from({ length: 300 }, (_, index) => ({ index, name: long(300), uuid: long(200), vbios: long(200) }));
    const fp = await fingerprint(c, { gpus, driverVersion: long(100), cudaVersion: long(100), nvmlVersion: long(100) });
    const parsed = NodeFingerprintSchema.safeParse(fp);
    if (!parsed.success) throw new Error(JSON.stringify(parsed.error.issues.slice(0, 5)));
    expect(fp.modules).toHaveLength(FINGERPRINT_LIMITS.modules);
    expect(fp.gpus).toHaveLength(FINGERPRINT_LIMITS.gpus);
    expect(fp.container?.image).toHaveLength(FINGERPRINT_LIMITS.image);
  });

  test('FINGERPRINT_LIMITS are the schema\'s own maxima: at the limit it accepts, one past it it refuses', async () => {
    const base = await fingerprint(config({ 'workload-dir': '/w' }, { ERG_CONTAINER_IMAGE: 'img', LOADEDMODULES: 'm' }), { gpus: [{ index: 0, name: 'g', uuid: 'u', vbios: 'v' }], driverVersion: 'd', cudaVersion: 'c', nvmlVersion: 'n' });
    const L = FINGERPRINT_LIMITS;
    const s = (n: number) => 'x'.repeat(n);
    const list = <T>(n: number, item: T) => Array.from({ length: n }, () => item);
    // Each limit with how a fingerprint at n looks.
    const at: Record<keyof typeof L, (n: number) => Partial<typeof base>> = {
      node: (n) => ({ node: s(n) }),
      hostname: (n) => ({ hostname: s(n) }),
      kernel: (n) => ({ kernel: s(n) }),
      arch: (n) => ({ arch: s(n) }),
      cpuModel: (n) => ({ cpuModel: s(n) }),
      gpus: (n) => ({ gpus: list(n, base.gpus[0]!) }),
      gpuIndex: (n) => ({ gpus: [{ ...base.gpus[0]!, index: n }] }),
      gpuName: (n) => ({ gpus: [{ ...base.gpus[0]!, name: s(n) }] }),
      uuid: (n) => ({ gpus: [{ ...base.gpus[0]!, uuid: s(n) }] }),
      vbios: (n) => ({ gpus: [{ ...base.gpus[0]!, vbios: s(n) }] }),
      version: (n) => ({ driverVersion: s(n), cudaVersion: s(n), nvmlVersion: s(n), agentVersion: s(n) }),
      slurmVersion: (n) => ({ slurmVersion: s(n) }),
      image: (n) => ({ container: { image: s(n), digest: null } }),
      digest: (n) => ({ container: { image: 'i', digest: s(n) } }),
      modules: (n) => ({ modules: list(n, 'm') }),
      module: (n) => ({ modules: [s(n)] }),
      workloadDir: (n) => ({ workload: { dir: s(n), gitCommit: null, gitDirty: null } }),
      gitCommit: (n) => ({ workload: { dir: '/w', gitCommit: s(n), gitDirty: false } }),
    };
    const accepted = (key: keyof typeof L, n: number) => NodeFingerprintSchema.safeParse({ ...base, ...at[key](n) }).success;
    for (const key of Object.keys(L) as (keyof typeof L)[]) expect([key, accepted(key, L[key]), accepted(key, L[key] + 1)]).toEqual([key, true, false]);
  });
});

test('the job\'s environment is read by the config parser alone (the fingerprint gets it from config.job)', () => {
  const c = config({}, { LOADEDMODULES: 'a:b', SLURM_CONTAINER: '/b', ERG_CONTAINER_DIGEST: 'sha256:1' });
  expect(c.job).toEqual({ loadedModules: ['a', 'b'], container: { image: '/b', digest: 'sha256:1', from: 'SLURM_CONTAINER' } });
  expect(config().job).toEqual({ loadedModules: [], container: null });
});
