/**
 * What an agent says about its node besides samples, without zod (the agent's bundle imports this
 * module as `@erg/spec/node-info`): the node's fingerprint — what exactly was measured — and the
 * power state the site's node helper set for the run. Both travel in the batch that declares the
 * sensors (the first of each agent process); telemetry.ts builds the API's schemas of them.
 *
 * - fingerprint: hardware and software of one node as one run saw it. Stored once per distinct
 *   fingerprint; runs link to theirs. Its `class` part (everything but the node's own identity:
 *   its name, host name and GPU UUIDs) decides whether two runs measured the same kind of
 *   machine — a configuration whose runs ran on differing classes is flagged.
 * - power state: what a campaign's `power` block asks of every node of a run (PowerState), and
 *   the record the node helper (deploy/node-helper/erg-power-helper) prints when it applied it
 *   (PowerRecord): requested, previous and read-back values per GPU and CPU.
 */

/** One GPU as NVML (or nvidia-smi) names it. */
export interface GpuIdentity {
  index: number;
  name: string | null;
  uuid: string | null;
  vbios: string | null;
}

/** A node's hardware and software, collected by the agent at start. Nulls: the node could not say. */
export interface NodeFingerprint {
  /** The node's name in batches (the agent's --node, default its host name). */
  node: string;
  hostname: string;
  /** `os.release()` and `os.version()`, e.g. "6.8.0-1013-nvidia-64k #14-Ubuntu SMP …". */
  kernel: string;
  arch: string;
  cpuModel: string | null;
  cpuCount: number;
  gpus: GpuIdentity[];
  driverVersion: string | null;
  /** The CUDA version the driver supports, e.g. "12.4" (nvmlSystemGetCudaDriverVersion_v2). */
  cudaVersion: string | null;
  nvmlVersion: string | null;
  /** `srun --version` inside the job, e.g. "slurm 22.05.8". */
  slurmVersion: string | null;
  /** The container the job runs in, when it runs in one (Apptainer/Singularity, enroot/pyxis, Slurm's --container). */
  container: { image: string; digest: string | null } | null;
  /** Environment modules loaded in the job (LOADEDMODULES), in load order. */
  modules: string[];
  /** The campaign's workloadDir and, when it is a git work tree, its commit and whether it had uncommitted changes. */
  workload: { dir: string; gitCommit: string | null; gitDirty: boolean | null } | null;
  agentVersion: string;
}

/**
 * What `sinfo --version` / `srun --version` print, as erg writes a Slurm version: `slurm 24.11.5`
 * upstream and `slurm-wlm 22.05.8` from Debian's packages are `slurm 24.11.5` and `slurm 22.05.8`;
 * null for anything else (a shell's "not found"). One spelling, so fingerprints and a cluster's
 * probe compare equal for the same Slurm.
 */
export function slurmVersionOf(text: string | null): string | null {
  const version = /^slurm(?:-wlm)?[ -]([0-9][0-9A-Za-z.-]*)/.exec(text?.trim() ?? '')?.[1];
  return version ? `slurm ${version}` : null;
}

/** The fields of a fingerprint that identify one node rather than a kind of machine. */
export const FINGERPRINT_IDENTITY_FIELDS = ['node', 'hostname'] as const;

/** A fingerprint without what identifies its node (node, host name, GPU UUIDs): equal for two nodes of the same build. */
export function fingerprintClass(f: NodeFingerprint): Omit<NodeFingerprint, 'node' | 'hostname' | 'gpus'> & { gpus: Omit<GpuIdentity, 'uuid'>[] } {
  const { node: _node, hostname: _hostname, gpus, ...rest } = f;
  return { ...rest, gpus: gpus.map(({ uuid: _uuid, ...g }) => g) };
}

/**
 * JSON with object keys sorted at every level: two fingerprints with the same content give the
 * same text (and so the same hash) whatever order their fields were built in.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** What a campaign's `power` block asks of every node of one configuration's runs, templates expanded. */
export interface PowerState {
  /** Every GPU's power limit (nvidia-smi -pl). */
  gpuPowerLimitW?: number;
  /** Every GPU's locked graphics clocks, [min, max] (nvidia-smi -lgc); a single value is [v, v]. */
  gpuLockedClocksMHz?: [number, number];
  /** The GH200 module power cap (nvidia-smi -pl --scope 1): GPU + Grace + memory. */
  moduleLimitW?: number;
  /** Every CPU's maximum frequency (cpufreq scaling_max_freq). */
  cpuFreqKHz?: number;
}

/** The knobs of a PowerState, in the order the helper takes them; the names are the spec's. */
export const POWER_KNOBS = ['gpuPowerLimitW', 'gpuLockedClocksMHz', 'moduleLimitW', 'cpuFreqKHz'] as const;
export type PowerKnob = (typeof POWER_KNOBS)[number];

/** The helper's option for each knob. */
export const POWER_HELPER_OPTIONS: Readonly<Record<PowerKnob, string>> = {
  gpuPowerLimitW: '--gpu-power-limit-w',
  gpuLockedClocksMHz: '--gpu-locked-clocks-mhz',
  moduleLimitW: '--module-limit-w',
  cpuFreqKHz: '--cpu-freq-khz',
};

/** One GPU's power settings as the helper read them (before, or back after applying). */
export interface GpuPowerSettings {
  index: number;
  powerLimitW?: number | null;
  moduleLimitW?: number | null;
  /** Locked clocks as the helper set them; null: not locked (the driver's default). */
  lockedClocksMHz?: [number, number] | null;
}

/** A node's settings as the helper read them. */
export interface NodePowerSettings {
  gpus: GpuPowerSettings[];
  /** scaling_max_freq of the CPUs (the lowest over them), kHz. */
  cpuMaxFreqKHz?: number | null;
}

/**
 * The one JSON line the node helper prints per node when it applied a run's power state (or
 * could not): `<node>.power.json` in the run's telemetry folder. `ok: false` means nothing is
 * in force (the helper restored what it had changed) and the workload did not run.
 */
export interface PowerRecord {
  /** The record format's version. */
  ergPower: 1;
  ok: boolean;
  node: string;
  job: string;
  requested: PowerState;
  previous: NodePowerSettings | null;
  applied: NodePowerSettings | null;
  /** Why it failed (ok: false), in the helper's words. */
  error: string | null;
}

/** A line of `<node>.power.json` as a PowerRecord; null when it is not one. Checks shape, not values (the API's schema does that). */
export function parsePowerRecord(line: string): PowerRecord | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  const r = value as Partial<PowerRecord> | null;
  if (r === null || typeof r !== 'object' || r.ergPower !== 1 || typeof r.ok !== 'boolean' || typeof r.node !== 'string') return null;
  return r as PowerRecord;
}
