// What a run was measured on and at which power state, as `erg run` and the web app's run page
// show it (GET /v1/runs/:id's `nodes`, GET /v1/runs/:id/energy's `power`, `flags` and
// `slurmEnergy`), and the campaign-level lines under a results table (the power note, the
// configurations that ran on differing machines). Typed by the fields they read, like results.ts,
// so the generated client's types and the CLI's (tuples widened to arrays) both fit.
import { formatEnergy, formatPercent, formatPower, NO_VALUE, withPrefix } from './units';

/** How many characters of a fingerprint (or fingerprint class) id people are shown: as the API's `<key>@<12 chars>` ids. */
export const FINGERPRINT_PREFIX_LENGTH = 12;

/** The first characters of a fingerprint id, as results ids and tables show it; `none` when there is none. */
export function fingerprintPrefix(id: string | null | undefined): string {
  return id ? id.slice(0, FINGERPRINT_PREFIX_LENGTH) : 'none';
}

/** A run flag as people read it in prose: `power_state_mismatch` → `power state mismatch`. */
export function flagLabel(flag: string): string {
  return flag.replace(/_/g, ' ');
}

/** The text shown when a run's agents sent no fingerprint at all. */
export const NO_PROVENANCE = "no provenance: the run's agents sent none (agent older than this erg, or the run never started)";

/** The text shown for one node whose agent sent no fingerprint. */
export const NO_NODE_PROVENANCE = 'no provenance: its agent sent none (agent older than this erg)';

export interface FingerprintFields {
  node: string;
  hostname: string;
  kernel: string;
  arch: string;
  cpuModel: string | null;
  cpuCount: number;
  gpus: readonly { index: number; name: string | null; uuid: string | null; vbios: string | null }[];
  driverVersion: string | null;
  cudaVersion: string | null;
  nvmlVersion: string | null;
  slurmVersion: string | null;
  container: { image: string; digest: string | null } | null;
  modules: readonly string[];
  workload: { dir: string; gitCommit: string | null; gitDirty: boolean | null } | null;
  agentVersion: string;
}

/** `a × 2, b × 1` for each distinct value in order of first appearance (`×` only with more than one of a kind). */
function counted(values: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].map(([v, n]) => `${v} × ${n}`).join(', ');
}

function orNone(value: string | null | undefined): string {
  return value === null || value === undefined || value === '' ? NO_VALUE : value;
}

/** The GPUs of a fingerprint by model and count: `NVIDIA GH200 480GB × 4`; `none` without GPUs. */
export function gpuModels(f: Pick<FingerprintFields, 'gpus'>): string {
  return f.gpus.length === 0 ? 'none' : counted(f.gpus.map((g) => g.name ?? 'unnamed GPU'));
}

/** Where the workload came from: its folder, its git commit, and whether the work tree had uncommitted changes. */
export function workloadText(w: FingerprintFields['workload']): string {
  if (w === null) return 'not recorded';
  if (w.gitCommit === null) return `${w.dir} (not a git work tree)`;
  return `${w.dir} at git ${w.gitCommit}${w.gitDirty ? ' (uncommitted changes)' : ''}`;
}

/**
 * A node's fingerprint as `label, value` pairs, in the order people look for them: GPUs, driver,
 * CUDA, NVML, VBIOS, CPU, kernel, Slurm, container, modules, workload, agent. GPU UUIDs (they
 * identify a card, not a kind of machine) only with `verbose`. `—` where the node could not say.
 */
export function fingerprintFacts(f: FingerprintFields, options: { verbose?: boolean } = {}): [string, string][] {
  const vbios = [...new Set(f.gpus.map((g) => g.vbios).filter((v): v is string => v !== null))];
  const facts: [string, string][] = [
    ['GPUs', gpuModels(f)],
    ['Driver', orNone(f.driverVersion)],
    ['CUDA', orNone(f.cudaVersion)],
    ['NVML', orNone(f.nvmlVersion)],
    ['VBIOS', vbios.length === 0 ? NO_VALUE : vbios.join(', ')],
    ['CPU', `${f.cpuModel ?? 'unknown model'} (${f.cpuCount} CPUs)`],
    ['Kernel', `${f.kernel} (${f.arch})`],
    ['Slurm', orNone(f.slurmVersion)],
    ['Container', f.container === null ? 'none' : `${f.container.image}${f.container.digest ? ` @ ${f.container.digest}` : ''}`],
    ['Modules', f.modules.length === 0 ? 'none' : f.modules.join(', ')],
    ['Workload', workloadText(f.workload)],
    ['Agent', `erg agent ${f.agentVersion}`],
  ];
  if (f.hostname !== f.node) facts.unshift(['Host name', f.hostname]);
  if (options.verbose) facts.push(['GPU UUIDs', f.gpus.length === 0 ? 'none' : f.gpus.map((g) => `gpu${g.index} ${g.uuid ?? NO_VALUE}`).join(', ')]);
  return facts;
}

/** A fingerprint in one line, for a table cell: `NVIDIA GH200 480GB × 4 · driver 550.54.15 · CUDA 12.4 · slurm 22.05.8`. */
export function fingerprintSummary(f: FingerprintFields): string {
  return [
    f.gpus.length === 0 ? 'no GPU' : gpuModels(f),
    `driver ${orNone(f.driverVersion)}`,
    `CUDA ${orNone(f.cudaVersion)}`,
    f.slurmVersion ?? 'Slurm —',
    ...(f.container ? [`container ${f.container.image}`] : []),
    ...(f.workload?.gitDirty ? ['uncommitted changes'] : []),
  ].join(' · ');
}

/** What a campaign's `power` block asks of every node (PowerState). */
export interface PowerStateFields {
  gpuPowerLimitW?: number;
  gpuLockedClocksMHz?: readonly number[];
  moduleLimitW?: number;
  cpuFreqKHz?: number;
}

/** One GPU's settings as the node helper read them. */
export interface GpuSettingsFields {
  index: number;
  powerLimitW?: number | null;
  moduleLimitW?: number | null;
  lockedClocksMHz?: readonly number[] | null;
}

export interface NodeSettingsFields {
  gpus: readonly GpuSettingsFields[];
  cpuMaxFreqKHz?: number | null;
}

/** The node helper's record for one node (PowerRecord). */
export interface PowerRecordFields {
  ok: boolean;
  node: string;
  job: string;
  requested: PowerStateFields;
  previous: NodeSettingsFields | null;
  applied: NodeSettingsFields | null;
  error: string | null;
}

function clocks(range: readonly number[] | null | undefined): string {
  if (range === undefined) return NO_VALUE;
  if (range === null) return 'not locked';
  const [lo, hi] = range;
  return lo === hi ? `${lo} MHz` : `${lo}–${hi} MHz`;
}

function kiloHertz(kHz: number | null | undefined): string {
  return kHz === null || kHz === undefined ? NO_VALUE : withPrefix(kHz * 1000, 'Hz');
}

/** A power state in words: `GPU power limit 300 W, GPU clocks locked 1000–1500 MHz, module limit 900 W, CPU max 2.00 GHz`. */
export function powerStateText(s: PowerStateFields | null | undefined): string {
  if (!s) return 'none';
  const parts = [
    s.gpuPowerLimitW !== undefined && `GPU power limit ${formatPower(s.gpuPowerLimitW)}`,
    s.gpuLockedClocksMHz !== undefined && `GPU clocks locked ${clocks(s.gpuLockedClocksMHz)}`,
    s.moduleLimitW !== undefined && `module limit ${formatPower(s.moduleLimitW)}`,
    s.cpuFreqKHz !== undefined && `CPU max ${kiloHertz(s.cpuFreqKHz)}`,
  ].filter((p): p is string => typeof p === 'string');
  return parts.length === 0 ? 'none' : parts.join(', ');
}

/** One row of a node's power record: one setting of one GPU (or the CPUs), requested, before and after. */
export interface PowerRecordRow {
  /** `gpu0`, `gpu1`, …, `CPUs`; `all GPUs` when the helper read no GPU. */
  target: string;
  setting: 'power limit' | 'module limit' | 'locked clocks' | 'max frequency';
  requested: string;
  previous: string;
  applied: string;
}

const watts = (w: number | null | undefined) => (w === null || w === undefined ? NO_VALUE : formatPower(w));

/** The GPU settings a record can hold: how to read what was asked of it, and what the helper read of it. */
const GPU_SETTINGS: readonly { setting: PowerRecordRow['setting']; asked: (s: PowerStateFields) => string | null; read: (g: GpuSettingsFields) => string }[] = [
  { setting: 'power limit', asked: (s) => (s.gpuPowerLimitW === undefined ? null : watts(s.gpuPowerLimitW)), read: (g) => watts(g.powerLimitW) },
  { setting: 'module limit', asked: (s) => (s.moduleLimitW === undefined ? null : watts(s.moduleLimitW)), read: (g) => watts(g.moduleLimitW) },
  { setting: 'locked clocks', asked: (s) => (s.gpuLockedClocksMHz === undefined ? null : clocks(s.gpuLockedClocksMHz)), read: (g) => clocks(g.lockedClocksMHz) },
];

/**
 * A node's power record as rows: for every GPU the helper read (else one `all GPUs` row), each
 * setting the campaign asked for — what was asked, what the helper read before, what it read back
 * after applying; then the CPUs' maximum frequency when that was asked for.
 */
export function powerRecordRows(record: PowerRecordFields): PowerRecordRow[] {
  const req = record.requested;
  const indices = [...new Set([...(record.previous?.gpus ?? []), ...(record.applied?.gpus ?? [])].map((g) => g.index))].sort((a, b) => a - b);
  const targets: (number | null)[] = indices.length > 0 ? indices : [null];
  const rows: PowerRecordRow[] = [];
  for (const index of targets) {
    const before = index === null ? undefined : record.previous?.gpus.find((g) => g.index === index);
    const after = index === null ? undefined : record.applied?.gpus.find((g) => g.index === index);
    for (const s of GPU_SETTINGS) {
      const requested = s.asked(req);
      if (requested === null) continue;
      rows.push({
        target: index === null ? 'all GPUs' : `gpu${index}`,
        setting: s.setting,
        requested,
        previous: before ? s.read(before) : NO_VALUE,
        applied: after ? s.read(after) : NO_VALUE,
      });
    }
  }
  if (req.cpuFreqKHz !== undefined) {
    rows.push({ target: 'CPUs', setting: 'max frequency', requested: kiloHertz(req.cpuFreqKHz), previous: kiloHertz(record.previous?.cpuMaxFreqKHz), applied: kiloHertz(record.applied?.cpuMaxFreqKHz) });
  }
  return rows;
}

/** Whether the node helper applied the state, in one sentence. */
export function powerRecordStatus(record: Pick<PowerRecordFields, 'ok' | 'error' | 'job'>): string {
  return record.ok
    ? `applied by the node helper for job ${record.job}`
    : `not applied: the node helper failed (${record.error ?? 'it gave no reason'}); it restored what it had changed and the workload did not run`;
}

/** One GPU's power state over a run's window (GpuPowerObserved). */
export interface GpuPowerObservedFields {
  node: string;
  gpu: number;
  powerLimitW: number | null;
  moduleLimitW: number | null;
  smClockMaxMHz: number | null;
  appClockMHz: number | null;
  maxTempC: number | null;
  throttledShare: number | null;
  throttleReasons: readonly string[];
}

/** The power state asked for and in force over a run's window (RunPowerState). */
export interface RunPowerStateFields {
  requested: PowerStateFields | null;
  gpus: readonly GpuPowerObservedFields[];
  cpuMaxFreqKHz: Readonly<Record<string, number | null>>;
}

/** One GPU's state in force, formatted, with the headers `POWER_IN_FORCE_COLUMNS` names. */
export interface PowerInForceRow {
  node: string;
  gpu: string;
  powerLimit: string;
  moduleLimit: string;
  smClockMax: string;
  appClock: string;
  maxTemp: string;
  /** `12.3 % (sw_thermal_slowdown)`, `0.0 %`, or `—` without a clock-events sensor. */
  throttled: string;
}

/** The columns of the power-in-force table, with their headers. */
export const POWER_IN_FORCE_COLUMNS: readonly { field: keyof PowerInForceRow; header: string; numeric: boolean }[] = [
  { field: 'node', header: 'node', numeric: false },
  { field: 'gpu', header: 'GPU', numeric: false },
  { field: 'powerLimit', header: 'power limit', numeric: true },
  { field: 'moduleLimit', header: 'module limit', numeric: true },
  { field: 'smClockMax', header: 'SM clock max', numeric: true },
  { field: 'appClock', header: 'app clock', numeric: true },
  { field: 'maxTemp', header: 'max temp', numeric: true },
  { field: 'throttled', header: 'throttled', numeric: false },
];

const mhz = (v: number | null) => (v === null ? NO_VALUE : `${Math.round(v)} MHz`);

/** Each GPU's state in force over the window, formatted. */
export function powerInForceRows(power: RunPowerStateFields): PowerInForceRow[] {
  return power.gpus.map((g) => ({
    node: g.node,
    gpu: `gpu${g.gpu}`,
    powerLimit: formatPower(g.powerLimitW),
    moduleLimit: formatPower(g.moduleLimitW),
    smClockMax: mhz(g.smClockMaxMHz),
    appClock: mhz(g.appClockMHz),
    maxTemp: g.maxTempC === null ? NO_VALUE : `${Math.round(g.maxTempC)} °C`,
    throttled: g.throttledShare === null ? NO_VALUE : `${formatPercent(g.throttledShare)}${g.throttleReasons.length > 0 ? ` (${g.throttleReasons.join(', ')})` : ''}`,
  }));
}

/** What the campaign asked for, in a sentence: `requested: GPU power limit 300 W` or that it asked for none. */
export function powerRequestedText(power: Pick<RunPowerStateFields, 'requested'>): string {
  return power.requested === null ? 'none requested: the nodes ran in whatever power state they were in' : `requested: ${powerStateText(power.requested)}`;
}

/** The CPUs' maximum frequency per node, as the helper read it back: `nid001 2.00 GHz, nid002 —`; null when none was asked for. */
export function cpuMaxFreqText(power: Pick<RunPowerStateFields, 'cpuMaxFreqKHz'>): string | null {
  const entries = Object.entries(power.cpuMaxFreqKHz);
  return entries.length === 0 ? null : entries.map(([node, kHz]) => `${node} ${kiloHertz(kHz)}`).join(', ');
}

/** Slurm's own energy figure beside erg's (SlurmEnergy). */
export interface SlurmEnergyFields {
  energyJ: number | null;
  ratio: number | null;
  note: string;
}

/** Slurm's figure in a few words — `12.3 kJ (1.05 × erg's)`, or `none` where Slurm measured nothing —; the API's note says what it means. */
export function slurmEnergyFigure(s: SlurmEnergyFields): string {
  if (s.energyJ === null) return 'none';
  return `${formatEnergy(s.energyJ)}${s.ratio === null ? '' : ` (${s.ratio.toFixed(2)} × erg's)`}`;
}

/**
 * The run order in a few words, as `erg submit`, `erg status`, `erg results` and the web app say
 * it: `randomized complete blocks, seed 1234` (docs/experiments.md, "Run order").
 */
export function runOrderLabel(design: { order: string; seed: number | null }): string {
  switch (design.order) {
    case 'randomized-blocks':
      return `randomized complete blocks, seed ${design.seed ?? 'unknown'}`;
    case 'blocks':
      return 'complete blocks in listed order';
    case 'configuration-major':
      return 'configuration-major (every repetition of a configuration, then the next)';
    default:
      return design.order;
  }
}

/** The one line under a results table on the run order: `Run order: randomized complete blocks, seed 1234`. */
export function runOrderLine(design: { order: string; seed: number | null } | null | undefined): string | null {
  return design ? `Run order: ${runOrderLabel(design)}` : null;
}

/** The one line under a results table on whether erg set the power state: `Power state: cluster … has no power knobs …`. */
export function powerNoteLine(power: { note: string } | null | undefined): string | null {
  return power ? `Power state: ${power.note}` : null;
}

/**
 * The configurations whose runs ran on more than one kind of machine, each with how the kinds
 * differ (the API's fingerprintDifferences: `driverVersion: 550.54.15 (2 runs) vs 535.104.05 (1 run)`).
 */
export function differingMachines<C extends { key: string; id?: string; fingerprints?: number; fingerprintDifferences?: readonly string[] }>(
  configurations: readonly C[],
): { configuration: C; label: string; differences: readonly string[] }[] {
  return configurations
    .filter((c) => (c.fingerprints ?? 0) > 1)
    .map((c) => ({ configuration: c, label: `${c.id ?? c.key}: ${c.fingerprints} kinds of machine`, differences: c.fingerprintDifferences ?? [] }));
}

/** Who started a campaign, as the API's `createdBy` tells it (structurally: this package has no schemas). */
export interface CampaignCreatorLike {
  user: { name: string } | null;
  token: { name: string } | null;
  suite: string | null;
}

/**
 * Who started a campaign, each part by its own name: `alice (token "laptop")`, `suite nightly`. The
 * token's name is free text and never stands for the user: a token named `suite:x` reads as a token.
 */
export function startedByLabel(c: CampaignCreatorLike): string {
  if (c.suite !== null) return `suite ${c.suite}`;
  const token = c.token ? ` (token "${c.token.name}")` : '';
  if (c.user) return `${c.user.name}${token}`;
  return c.token ? `an unknown user${token}` : 'unknown (created before erg recorded it)';
}

/** One node's share of a run's energy, formatted, with the headers `NODE_ENERGY_COLUMNS` names. */
export interface NodeEnergyRow {
  node: string;
  energy: string;
  /** Its part of the run's energyJ. */
  share: string;
  /** Its energy over the run's time. */
  avgPower: string;
  method: string;
  coverage: string;
  /** The sensors its energy was computed from, e.g. `module0.power`. */
  sensors: string;
}

/** The per-node table's columns, in order: `erg run` and the web app's run page both print these. */
export const NODE_ENERGY_COLUMNS: readonly { field: keyof NodeEnergyRow; header: string; numeric: boolean }[] = [
  { field: 'node', header: 'node', numeric: false },
  { field: 'energy', header: 'energy', numeric: true },
  { field: 'share', header: 'share', numeric: true },
  { field: 'avgPower', header: 'avg power', numeric: true },
  { field: 'method', header: 'method', numeric: false },
  { field: 'coverage', header: 'coverage', numeric: true },
  { field: 'sensors', header: 'sensors', numeric: false },
];

/** The fields of a run's energy figures the per-node rows read. */
export interface RunNodeEnergyFields {
  timeS: number;
  energyJ: number;
  nodes: readonly { node: string; energyJ: number; method: string; coverage: number; sensorsUsed: readonly string[] }[];
}

/** Each node's share of the run's energy (GET /v1/runs/:id/energy's `nodes`), in the API's order; the shares add up to the run's energyJ. */
export function nodeEnergyRows(figures: RunNodeEnergyFields): NodeEnergyRow[] {
  return figures.nodes.map((n) => ({
    node: n.node,
    energy: formatEnergy(n.energyJ),
    share: figures.energyJ > 0 ? formatPercent(n.energyJ / figures.energyJ) : NO_VALUE,
    avgPower: figures.timeS > 0 ? formatPower(n.energyJ / figures.timeS) : NO_VALUE,
    method: n.method,
    coverage: formatPercent(n.coverage),
    sensors: n.sensorsUsed.join(', ') || NO_VALUE,
  }));
}
