import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { slurmVersionOf, type GpuIdentity, type NodeFingerprint } from '@erg/spec/node-info';
import type { AgentConfig, JobEnvironment } from './config';
import type { GpuStackIdentity } from './sources/types';
import { AGENT_VERSION } from './version';

// The node's fingerprint (NodeFingerprint in @erg/spec/node-info): what exactly was measured,
// collected once at start. startFingerprintProbes starts the commands it needs (srun, git, a
// small image's hash) before the sensors are detected, so they overlap; collectFingerprint adds
// what the GPU source, /proc/cpuinfo, os and the job's environment say and bounds every string
// and list to what the API accepts (packages/spec's NodeFingerprintSchema; the API refuses the
// whole batch otherwise).

/** What NodeFingerprintSchema accepts at most (string lengths, list lengths); a test holds the two equal. */
export const FINGERPRINT_LIMITS = {
  node: 128,
  hostname: 256,
  kernel: 512,
  arch: 64,
  cpuModel: 256,
  gpus: 256,
  gpuIndex: 1024,
  gpuName: 256,
  uuid: 128,
  vbios: 128,
  version: 64,
  slurmVersion: 128,
  image: 1024,
  digest: 256,
  modules: 512,
  module: 256,
  workloadDir: 1024,
  gitCommit: 64,
} as const;

/** `srun --version` may take this long (a hung or absent srun costs start-up at most this). */
export const SRUN_TIMEOUT_MS = 2000;
/** Each git command on the workload directory may take this long (status walks the work tree). */
export const GIT_TIMEOUT_MS = 3000;
/**
 * Container images up to this size are hashed (sha256) when no digest is given; larger ones never
 * are. SIF and squashfs images are usually gigabytes: hashing one would cost seconds of CPU and
 * I/O at every start, so their digest comes only from ERG_CONTAINER_DIGEST.
 */
export const HASH_IMAGES_UP_TO_BYTES = 64 * 1024 * 1024;
/** How much of /proc/cpuinfo is read: the first processor's block is all the model needs. */
const CPUINFO_BYTES = 64 * 1024;

/** ARM's CPU parts (MIDR implementer 0x41) that erg's clusters run, by `CPU part`; others are named by their numbers. */
const ARM_PARTS: Record<number, string> = {
  0xd0c: 'ARM Neoverse-N1',
  0xd40: 'ARM Neoverse-V1',
  0xd49: 'ARM Neoverse-N2',
  0xd4f: 'ARM Neoverse-V2', // NVIDIA Grace
};
const ARM_IMPLEMENTER = 0x41;

/** The fingerprint's parts that come from commands, started before detection and awaited after it. */
export interface FingerprintProbes {
  slurmVersion: Promise<string | null>;
  workload: Promise<NodeFingerprint['workload']>;
  container: Promise<NodeFingerprint['container']>;
}

/** Starts srun, git and the image's hash; none of them can fail (each answers null instead) or outlast its timeout. */
export function startFingerprintProbes(config: Pick<AgentConfig, 'srun' | 'workloadDir' | 'job'>): FingerprintProbes {
  return {
    // One spelling for every Slurm build (Debian's says slurm-wlm): see slurmVersionOf.
    slurmVersion: run(config.srun, ['--version'], SRUN_TIMEOUT_MS).then((out) => slurmVersionOf(firstLine(out))),
    workload: config.workloadDir === undefined ? Promise.resolve(null) : workloadState(config.workloadDir),
    container: containerOf(config.job.container),
  };
}

/** The node's fingerprint, every field bounded to what the API accepts. `gpuStack`: what the GPU source said (null: no GPU source). */
export async function collectFingerprint(
  config: Pick<AgentConfig, 'node' | 'procfsRoot' | 'job'>,
  gpuStack: GpuStackIdentity | null,
  probes: FingerprintProbes,
): Promise<NodeFingerprint> {
  const [slurmVersion, workload, container] = await Promise.all([probes.slurmVersion, probes.workload, probes.container]);
  const L = FINGERPRINT_LIMITS;
  return {
    node: clip(config.node, L.node),
    hostname: clip(os.hostname(), L.hostname),
    kernel: clip(`${os.release()} ${os.version()}`, L.kernel),
    arch: clip(os.arch(), L.arch),
    cpuModel: clipOrNull(cpuModelOf(readCpuinfo(path.join(config.procfsRoot, 'cpuinfo'))), L.cpuModel),
    cpuCount: os.cpus().length,
    gpus: (gpuStack?.gpus ?? []).filter((g) => Number.isInteger(g.index) && g.index >= 0 && g.index <= L.gpuIndex).slice(0, L.gpus).map(boundGpu),
    driverVersion: clipOrNull(gpuStack?.driverVersion ?? null, L.version),
    cudaVersion: clipOrNull(gpuStack?.cudaVersion ?? null, L.version),
    nvmlVersion: clipOrNull(gpuStack?.nvmlVersion ?? null, L.version),
    slurmVersion: clipOrNull(slurmVersion, L.slurmVersion),
    container,
    modules: modulesOf(config.job),
    workload,
    agentVersion: AGENT_VERSION,
  };
}

/** The CPU's model from /proc/cpuinfo: x86's `model name`; on ARM (no model name) the MIDR's implementer and part, named where known. */
export function cpuModelOf(cpuinfo: string | null): string | null {
  if (cpuinfo === null) return null;
  const field = (name: string): string | undefined => new RegExp(`^${name}\\s*:[ \\t]*(.*\\S)`, 'm').exec(cpuinfo)?.[1];
  const model = field('model name');
  if (model !== undefined) return model.replace(/\s+/g, ' ');
  const implementer = Number(field('CPU implementer'));
  const part = Number(field('CPU part'));
  if (!Number.isInteger(implementer) || !Number.isInteger(part)) return null;
  return (implementer === ARM_IMPLEMENTER ? ARM_PARTS[part] : undefined) ?? `implementer 0x${implementer.toString(16)} part 0x${part.toString(16)}`;
}

/** The first CPUINFO_BYTES of cpuinfo; null when it cannot be read. */
function readCpuinfo(file: string): string | null {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    const buf = Buffer.alloc(CPUINFO_BYTES);
    let total = 0;
    // procfs hands out a page or so per read.
    for (let n = 1; n > 0 && total < buf.length; total += n) n = fs.readSync(fd, buf, total, buf.length - total, total);
    return buf.toString('utf8', 0, total);
  } catch {
    return null;
  } finally {
    fs.closeSync(fd);
  }
}

function modulesOf(job: JobEnvironment): string[] {
  return job.loadedModules.slice(0, FINGERPRINT_LIMITS.modules).map((m) => clip(m, FINGERPRINT_LIMITS.module));
}

function boundGpu(g: GpuIdentity): GpuIdentity {
  const L = FINGERPRINT_LIMITS;
  return { index: g.index, name: clipOrNull(g.name, L.gpuName), uuid: clipOrNull(g.uuid, L.uuid), vbios: clipOrNull(g.vbios, L.vbios) };
}

/** The workload directory's git commit (`git rev-parse HEAD`) and whether tracked files have changes; nulls where git or the repository is absent. */
async function workloadState(dir: string): Promise<NonNullable<NodeFingerprint['workload']>> {
  const [head, status] = await Promise.all([
    run('git', ['-C', dir, 'rev-parse', '--verify', 'HEAD'], GIT_TIMEOUT_MS),
    // --no-optional-locks: status must not rewrite the index of a repository someone may be working in.
    run('git', ['--no-optional-locks', '-C', dir, 'status', '--porcelain', '--untracked-files=no'], GIT_TIMEOUT_MS),
  ]);
  const commit = head?.trim() ?? '';
  const gitCommit = /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(commit) ? commit : null;
  return { dir: clip(dir, FINGERPRINT_LIMITS.workloadDir), gitCommit, gitDirty: gitCommit !== null && status !== null ? status.trim() !== '' : null };
}

/** The container with its digest: the one given, else a small image file's sha256, else null. */
async function containerOf(container: JobEnvironment['container']): Promise<NodeFingerprint['container']> {
  if (container === null) return null;
  const digest = container.digest ?? (await smallFileDigest(container.image));
  return { image: clip(container.image, FINGERPRINT_LIMITS.image), digest: clipOrNull(digest, FINGERPRINT_LIMITS.digest) };
}

/** `sha256:<hex>` of a regular file of at most HASH_IMAGES_UP_TO_BYTES; null for anything else (a registry name, a directory, a big image). */
async function smallFileDigest(file: string): Promise<string | null> {
  try {
    const stat = await fs.promises.stat(file);
    if (!stat.isFile() || stat.size > HASH_IMAGES_UP_TO_BYTES) return null;
    const { createHash } = require('node:crypto') as typeof import('node:crypto');
    const hash = createHash('sha256');
    for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
    return `sha256:${hash.digest('hex')}`;
  } catch {
    return null;
  }
}

/**
 * Runs a program (never a shell) and answers its stdout, or null when it is missing, fails or
 * takes longer than `timeoutMs` (then it is killed). The answer never comes later than the
 * timeout: execFile's own waits for the output pipes to close, which a child's child can hold open.
 */
function run(file: string, args: string[], timeoutMs: number): Promise<string | null> {
  // Loaded here, not at the top: child_process is required only once a fingerprint is taken.
  const { execFile } = require('node:child_process') as typeof import('node:child_process');
  return new Promise((resolve) => {
    let guard: NodeJS.Timeout | undefined;
    let settled = false;
    const done = (out: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(guard);
      resolve(out);
    };
    try {
      const child = execFile(file, args, { encoding: 'utf8', timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 1 << 20 }, (err, stdout) => done(err ? null : stdout));
      child.stdin?.end();
      guard = setTimeout(() => {
        child.kill('SIGKILL');
        child.stdout?.destroy();
        child.stderr?.destroy();
        done(null);
      }, timeoutMs + 50);
    } catch {
      done(null);
    }
  });
}

function firstLine(text: string | null): string | null {
  const line = text?.split('\n')[0]?.trim();
  return line ? line : null;
}

function clip(s: string, max: number): string {
  return s.length > max ? s.slice(0, max) : s;
}

function clipOrNull(s: string | null, max: number): string | null {
  return s === null ? null : clip(s, max);
}
