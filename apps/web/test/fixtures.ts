// A campaign's results as GET /v1/campaigns/:id/results returns them, for the unit tests.
import type { CampaignResults, ConfigurationResult, Run, RunEnergy, Summary } from '@erg/web';

export function summary(mean: number | null, half = 0, n = 3): Summary {
  return { n, mean, std: mean === null ? null : half, ci95: mean === null ? null : [mean - half, mean + half], cv: null, min: mean, max: mean };
}

export function config(key: string, parameters: Record<string, unknown>, timeS: number | null, energyJ: number | null, extra: Partial<ConfigurationResult> = {}): ConfigurationResult {
  return {
    key, parameters, n: timeS === null ? 0 : 3,
    timeS: summary(timeS, 0.5), energyJ: summary(energyJ, 20), edpJs: summary(timeS !== null && energyJ !== null ? timeS * energyJ : null, 1),
    ed2pJs2: summary(null), avgPowerW: summary(timeS !== null && energyJ !== null ? energyJ / timeS : null, 2), metrics: {},
    components: energyJ === null ? {} : { cpu: summary(energyJ * 0.75), memory: summary(energyJ * 0.25) },
    point: timeS === null || energyJ === null ? null : { timeS, energyJ, n: 3 },
    paretoOptimal: false,
    flaggedRuns: {},
    ...extra,
  };
}

/** Four configurations: a (fast, costly), b (slow, frugal), c (dominated by a), d (not measured). */
export function results(): CampaignResults {
  return {
    campaignId: '00000000-0000-4000-8000-000000000001',
    configurations: [
      config('n=1;w=1', { n: 1, w: 1 }, 10, 500, { paretoOptimal: true }),
      config('n=1;w=2', { n: 1, w: 2 }, 20, 300, { paretoOptimal: true }),
      config('n=2;w=1', { n: 2, w: 1 }, 12, 600),
      config('n=2;w=2', { n: 2, w: 2 }, null, null),
    ],
    paretoFront: ['n=1;w=1', 'n=1;w=2'],
    best: { time: 'n=1;w=1', energy: 'n=1;w=2', edp: 'n=1;w=1' },
    tradeoff: { fastest: 'n=1;w=1', mostFrugal: 'n=1;w=2', energySavedJ: 200, energySavedPct: 40, timeLostS: 10, timeLostPct: 100 },
    excluded: [{ key: 'n=2;w=2', why: 'no completed run' }],
  };
}

/** A finished run on two nodes (GET /v1/runs/:id): one where the node helper set 300 W, one where it failed; one without provenance. */
export function run(): Run {
  const fingerprint = (node: string, driverVersion: string) => ({
    node, hostname: `${node}.cluster`, kernel: '6.8.0-1013-nvidia-64k', arch: 'arm64', cpuModel: 'Neoverse-V2', cpuCount: 72,
    gpus: [{ index: 0, name: 'NVIDIA GH200 480GB', uuid: `GPU-${node}`, vbios: '96.00.74.00.01' }],
    driverVersion, cudaVersion: '12.4', nvmlVersion: '12.550.54.15', slurmVersion: 'slurm 22.05.8', container: null, modules: [],
    workload: { dir: '/home/alice/bench', gitCommit: '3f2a9c1b', gitDirty: true }, agentVersion: '0.1.0',
  });
  return {
    id: '00000000-0000-4000-8000-0000000000a1', campaignId: '00000000-0000-4000-8000-000000000001', campaignName: 'power-sweep', state: 'completed', reason: null,
    slurmJobId: '4242', slurmState: 'COMPLETED', configurationKey: 'limit=300', parameters: { limit: 300 }, repetition: 1, exitCode: 0, signal: null, submitAttempts: 1,
    submittedAt: null, startedAt: null, endedAt: null, timeS: 60, workloadStart: null, workloadEnd: null, idleStart: null, idleEnd: null,
    partition: 'gh200', nodeList: 'nid[001-003]', runDir: null, metrics: null, warnings: [], jobScript: null,
    nodes: [
      {
        node: 'nid001', fingerprintId: 'a1b2c3d4e5f60718293a', fingerprint: fingerprint('nid001', '550.54.15'),
        power: { ergPower: 1, ok: true, node: 'nid001', job: '4242', requested: { gpuPowerLimitW: 300 }, previous: { gpus: [{ index: 0, powerLimitW: 700 }] }, applied: { gpus: [{ index: 0, powerLimitW: 300 }] }, error: null },
      },
      {
        node: 'nid002', fingerprintId: 'ffeeddccbbaa99887766', fingerprint: fingerprint('nid002', '535.104.05'),
        power: { ergPower: 1, ok: false, node: 'nid002', job: '4242', requested: { gpuPowerLimitW: 300 }, previous: null, applied: null, error: 'Insufficient Permissions' },
      },
      { node: 'nid003', fingerprintId: null, fingerprint: null, power: null },
    ],
  };
}

/** Its energy (GET /v1/runs/:id/energy): flagged, one GPU throttled, Slurm's figure beside erg's. */
export function energy(over: Partial<RunEnergy> = {}): RunEnergy {
  return {
    runId: '00000000-0000-4000-8000-0000000000a1', computedAt: '2026-11-30T12:00:00.000Z', timeS: 60, energyJ: 60_000, edpJs: 3.6e6, ed2pJs2: 2.16e8, avgPowerW: 1000,
    method: 'counter', coverage: 1, components: { module: 60_000 }, breakdown: {}, nodes: [], gaps: [],
    warnings: ['nid002: the node helper could not apply the power state (Insufficient Permissions): what was requested was not in force'],
    flags: ['power_state_mismatch', 'throttled'],
    power: {
      requested: { gpuPowerLimitW: 300 },
      gpus: [{ node: 'nid001', gpu: 0, powerLimitW: 300, moduleLimitW: null, smClockMaxMHz: 1830.4, appClockMHz: 1755, maxTempC: 88.2, throttledShare: 0.23, throttleReasons: ['sw_thermal_slowdown'] }],
      cpuMaxFreqKHz: {},
    },
    energyPerUnit: {}, window: { startMs: 0, endMs: 60_000 }, idleWindow: null,
    slurmEnergy: { energyJ: 66_000, ratio: 1.1, note: "Slurm's acct_gather_energy measured 66000 J for the whole job" },
    ...over,
  };
}
