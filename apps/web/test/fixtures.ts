// A campaign's results as GET /v1/campaigns/:id/results returns them, for the unit tests.
import type { CampaignPhases, CampaignResults, ConfigurationResult, Run, RunEnergy, RunPhases, RunPhasesView, Summary } from '@erg/web';

/** The API's name of the time inside no phase (@erg/spec's UNMARKED_PHASE). */
const UNMARKED_NAME = '(unmarked)';

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

/** A run's phases on two nodes (GET /v1/runs/:id/phases): load, then train with optimizer nested in it, unmarked before and after. */
export function phasesView(over: Partial<RunPhasesView> = {}): RunPhasesView {
  const seg = (node: string, phase: string | null, open: string[], fromMs: number, toMs: number) => ({ node, phase, open, fromMs, toMs });
  const phase = (name: string, energyJ: number, selfEnergyJ: number, timeS: number, selfTimeS: number, extra: Partial<RunPhases['phases'][number]> = {}) => ({
    name, occurrences: 2, timeS, selfTimeS, energyJ, selfEnergyJ, meanPowerW: energyJ / timeS, share: energyJ / 2000, ci95J: 10, selfCi95J: 8, method: 'regression' as const, ...extra,
  });
  return {
    runId: '00000000-0000-4000-8000-0000000000a1', computedAt: '2026-11-30T12:00:00.000Z', window: { startMs: 0, endMs: 10_000 },
    marks: { count: 16, nodes: ['n1', 'n2'], writers: ['py'] },
    phases: {
      timeS: 10, energyJ: 2000, method: 'regression', resolutionMs: 100, rescale: 1,
      phases: [phase('train', 1400, 1000, 12, 8), phase('optimizer', 400, 400, 4, 4), phase('load', 300, 300, 4, 4, { ci95J: null, selfCi95J: null, method: 'proportional' })],
      unmarked: { timeS: 4, energyJ: 300, meanPowerW: 75, share: 0.15, ci95J: 5, method: 'regression' },
      steps: [{ name: 'step', count: 6, energyJ: { n: 4, mean: 50, std: 5, p5: 44, p50: 50, p95: 56 }, timeS: { n: 4, mean: 1, std: 0, p5: 1, p50: 1, p95: 1 }, belowResolution: 0 }],
      fits: [], warnings: [],
    },
    segments: [
      seg('n1', null, [], 0, 1000), seg('n1', 'load', ['load'], 1000, 3000), seg('n1', 'train', ['train'], 3000, 5000), seg('n1', 'optimizer', ['train', 'optimizer'], 5000, 7000),
      seg('n1', 'train', ['train'], 7000, 8000), seg('n1', 'train', ['train'], 8000, 9000), seg('n1', null, [], 9000, 10_000),
      seg('n2', null, [], 0, 1000), seg('n2', 'load', ['load'], 1000, 3000), seg('n2', 'train', ['train'], 3000, 9000), seg('n2', null, [], 9000, 10_000),
    ],
    segmentsTruncated: false,
    ...over,
  };
}

/** A campaign's phases: a (fast, 2 runs) spends 600 J more than b, mostly in train. */
export function campaignPhases(): CampaignPhases {
  const s = (mean: number) => summary(mean, 0, 2);
  const p = (name: string, self: number) => ({ name, energyJ: s(self), selfEnergyJ: s(self), timeS: s(1) });
  return {
    configurations: [
      { key: 'b', n: 2, energyJ: s(1400), phases: [p('load', 300), p('train', 900), p(UNMARKED_NAME, 200)] },
      { key: 'a', n: 2, energyJ: s(2000), phases: [p('load', 250), p('optimizer', 150), p('train', 1400), p(UNMARKED_NAME, 200)] },
      { key: 'c', n: 0, energyJ: summary(null), phases: [] },
    ],
    comparison: {
      runtimeOptimal: 'a', energyOptimal: 'b', differenceJ: 600,
      phases: [
        { name: 'train', runtimeOptimalJ: 1400, energyOptimalJ: 900, differenceJ: 500, shareOfDifference: 500 / 600 },
        { name: 'optimizer', runtimeOptimalJ: 150, energyOptimalJ: 0, differenceJ: 150, shareOfDifference: 0.25 },
        { name: UNMARKED_NAME, runtimeOptimalJ: 200, energyOptimalJ: 200, differenceJ: 0, shareOfDifference: 0 },
        { name: 'load', runtimeOptimalJ: 250, energyOptimalJ: 300, differenceJ: -50, shareOfDifference: -50 / 600 },
      ],
    },
  };
}
