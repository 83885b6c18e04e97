/**
 * The driver and library floors erg relies on: which NVML / driver / DCGM version first has each
 * feature (nvml.h as shipped with each CUDA release, DCGM's dcgm_fields.h), and what erg does on an
 * older stack. One owner: docs/energy.md's "Driver and library floors" table is rendered from
 * DRIVER_FLOORS (a test compares them), and `erg-agent doctor` judges a node's versions by it.
 * Dependency-free (the agent's bundle imports it as `@erg/spec/driver-floors`).
 */

/** C2C traffic's floors, quoted by the agent's notes and a run's data-movement warnings. */
export const C2C_MIN_DRIVER_BRANCH = 575;
export const C2C_MIN_DCGM = '4.1.0';
export const C2C_FLOOR = `needs driver ≥ ${C2C_MIN_DRIVER_BRANCH} / DCGM ≥ ${C2C_MIN_DCGM.replace(/\.0$/, '')}`;

export interface DriverFloor {
  /** A short key for reports and JSON (`power-scope-fields`). */
  key: string;
  /** The feature, as the docs' table names it (markdown). */
  feature: string;
  /** The NVML / driver / DCGM release that has it, as the docs' table says it. */
  has: string;
  /** The oldest driver branch (major version, 535 for 535.183.01) that has it; null: not a driver feature. */
  minDriverBranch: number | null;
  /** The oldest DCGM version that has it (`4.1.0`); null: not a DCGM feature. */
  minDcgm: string | null;
  /** What erg does without it (markdown). */
  without: string;
}

export const DRIVER_FLOORS: readonly DriverFloor[] = [
  {
    key: 'power-scope-fields',
    feature: '`NVML_FI_DEV_POWER_INSTANT` (186) per power scope, `NVML_FI_DEV_POWER_CURRENT_LIMIT` (190)',
    has: 'NVML 12.2 (R535)',
    minDriverBranch: 535,
    minDcgm: null,
    without:
      "superchip: `gpuN.power` from `nvmlDeviceGetPowerUsage` with scope `unknown` (not counted); no `moduleN.power` from NVML (hwmon's is used), no `moduleN.power_limit`",
  },
  {
    key: 'energy-field-scopes',
    feature: '`NVML_FI_DEV_ENERGY` (191) at scopes 0 / 1',
    has: 'NVML 12.2 (R535)',
    minDriverBranch: 535,
    minDcgm: null,
    without: "the counter's scope from `nvmlDeviceGetC2cModeInfoV` or the name, with a note",
  },
  {
    key: 'c2c-mode-info',
    feature: '`nvmlDeviceGetC2cModeInfoV`',
    has: 'NVML 12.3 (R545)',
    minDriverBranch: 545,
    minDcgm: null,
    without: 'superchips told by name',
  },
  {
    key: 'clocks-event-reasons',
    feature: '`nvmlDeviceGetCurrentClocksEventReasons`',
    has: 'R535 (the rename of the throttle-reasons call)',
    minDriverBranch: 535,
    minDcgm: null,
    without: '`nvmlDeviceGetCurrentClocksThrottleReasons` (`clockEventsCall` in meta.json)',
  },
  {
    key: 'temperature-v',
    feature: '`nvmlDeviceGetTemperatureV` (NVML 13 deprecates `nvmlDeviceGetTemperature` for it)',
    has: 'NVML 12.8 (R570)',
    minDriverBranch: 570,
    minDcgm: null,
    without: '`nvmlDeviceGetTemperature` (note; `calls.temp` in meta.json)',
  },
  {
    key: 'applications-clock',
    feature: 'applications clock via `nvmlDeviceGetClock(GRAPHICS, APP_CLOCK_TARGET)`',
    has: 'NVML 11 and later; NVML 13 deprecates applications clocks ("removed in CUDA 14.0")',
    minDriverBranch: 450,
    minDcgm: null,
    without:
      "`nvmlDeviceGetApplicationsClock`; neither: no `gpuN.clock_app`. NVML has no call that reads *locked* clocks back: locked clocks are checked from the observed SM clock (`gpuN.clock`) and the node helper's read-back",
  },
  {
    key: 'gpm-c2c',
    feature: 'GPM C2C metrics `NVML_GPM_METRIC_C2C_TOTAL_TX/RX_PER_SEC` (100/101)',
    has: `NVML 12.9 (R${C2C_MIN_DRIVER_BRANCH})`,
    minDriverBranch: C2C_MIN_DRIVER_BRANCH,
    minDcgm: null,
    without: `no \`gpuN.c2c_tx/rx\` from NVML; the note says \`${C2C_FLOOR}\``,
  },
  {
    key: 'dcgm-c2c',
    feature: 'DCGM `DCGM_FI_PROF_C2C_TX/RX_ALL_BYTES` (1076/1078)',
    has: `DCGM ${C2C_MIN_DCGM}`,
    minDriverBranch: null,
    minDcgm: C2C_MIN_DCGM,
    without: 'no C2C from DCGM; the note says the same',
  },
];

/** The floors as docs/energy.md's markdown table (header included), one row per floor. */
export function driverFloorsTable(): string {
  const rows = DRIVER_FLOORS.map((f) => `| ${f.feature} | ${f.has} | ${f.without} |`);
  return ['| feature | NVML / driver / DCGM that has it | without it, erg |', '| --- | --- | --- |', ...rows].join('\n');
}

/** The driver branch of a driver version ("550.54.15" → 550); null where it has no leading number. */
export function driverBranch(version: string | null | undefined): number | null {
  const m = /^(\d+)\./.exec(version ?? '');
  return m ? Number(m[1]) : null;
}

/** Compares dotted versions numerically ("4.1.0" vs "4.10"): < 0, 0 or > 0; missing parts are 0. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map((x) => Number.parseInt(x, 10) || 0);
  const pb = b.split('.').map((x) => Number.parseInt(x, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i += 1) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** met: the node's stack has it; missing: it is older; unknown: the version it depends on could not be read. */
export type FloorVerdict = 'met' | 'missing' | 'unknown';

/** Judges one floor against a node's driver version and DCGM version (null: not found). */
export function judgeFloor(floor: DriverFloor, stack: { driverVersion: string | null; dcgmVersion: string | null }): FloorVerdict {
  if (floor.minDriverBranch !== null) {
    const branch = driverBranch(stack.driverVersion);
    if (branch === null) return 'unknown';
    if (branch < floor.minDriverBranch) return 'missing';
  }
  if (floor.minDcgm !== null) {
    if (stack.dcgmVersion === null) return 'unknown';
    if (compareVersions(stack.dcgmVersion, floor.minDcgm) < 0) return 'missing';
  }
  return 'met';
}
