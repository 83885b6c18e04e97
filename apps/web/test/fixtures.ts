// A campaign's results as GET /v1/campaigns/:id/results returns them, for the unit tests.
import type {
  CampaignDataMovement, CampaignPhases, CampaignResults, ConfigurationResult, Run, RunCarbon, RunCost, RunDataMovement, RunEnergy, RunPhases, RunPhasesView, Summary,
} from '@erg/web';

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
    // No carbon or cost unless a test gives them (a cluster without those settings).
    carbon: summary(null, 0, 0),
    cost: summary(null, 0, 0),
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
    best: { time: 'n=1;w=1', energy: 'n=1;w=2', edp: 'n=1;w=1', carbon: null, cost: null },
    tradeoff: { fastest: 'n=1;w=1', mostFrugal: 'n=1;w=2', energySavedJ: 200, energySavedPct: 40, timeLostS: 10, timeLostPct: 100 },
    excluded: [{ key: 'n=2;w=2', why: 'no completed run' }],
    objectives: ['time', 'energy'],
    currency: null,
    dataMovement: null,
  } as CampaignResults;
}

/**
 * results() measured on a cluster with carbon and price settings: a (fast) emits more and costs
 * more than b; c's carbon comes from two runs far apart (its interval reaches below 0) and it has
 * no cost; d has neither.
 */
export function footprintResults(): CampaignResults {
  const r = results();
  const [a, b, c] = r.configurations;
  a!.carbon = summary(120, 10);
  a!.cost = summary(0.05, 0.004);
  b!.carbon = summary(80, 5);
  b!.cost = summary(0.03, 0.002);
  c!.carbon = summary(150, 400, 2);
  return { ...r, currency: 'EUR', best: { ...r.best!, carbon: 'n=1;w=2', cost: 'n=1;w=2' } };
}

/**
 * Data movement of results()'s configurations: a moves 20 GB over PCIe and 40 GB over C2C per run;
 * b 5 GB over PCIe only, two runs far apart (its interval reaches below 0); c 10 GB over PCIe and
 * 1 GB over NVLink (one run of three measured it). None measured host memory.
 */
export function campaignMovement(): CampaignDataMovement {
  const kind = (k: 'pcie' | 'nvlink' | 'c2c' | 'memory', bytes: Summary, energyJ: number, timeS: number) => ({
    kind: k, bytes, meanRateBps: summary(bytes.mean! / timeS, 0), joulesPerGB: summary(energyJ / (bytes.mean! / 1e9), 0),
  });
  return {
    configurations: [
      // Not in the results' order: the table and the scatter follow the results'.
      { key: 'n=1;w=2', n: 2, energyJ: summary(300, 20, 2), kinds: [kind('pcie', summary(5e9, 8e9, 2), 300, 20)], overlapFraction: summary(0.25, 0.05, 2), phases: null },
      { key: 'n=1;w=1', n: 3, energyJ: summary(500, 20), kinds: [kind('pcie', summary(20e9, 1e9), 500, 10), kind('c2c', summary(40e9, 2e9), 500, 10)], overlapFraction: summary(0.9, 0.02), phases: null },
      { key: 'n=2;w=1', n: 3, energyJ: summary(600, 20), kinds: [kind('pcie', summary(10e9, 1e9), 600, 12), kind('nvlink', summary(1e9, 0, 1), 600, 12)], overlapFraction: summary(null, 0, 0), phases: null },
    ],
  };
}

/** A run's data movement: PCIe and C2C from gpu0, phases train and (unmarked). */
export function runMovement(over: Partial<RunDataMovement> = {}): RunDataMovement {
  return {
    timeS: 10, energyJ: 3000,
    kinds: [
      { kind: 'pcie', bytes: 20e9, byDirection: { tx: 20e9 }, meanRateBps: 2e9, joulesPerGB: 150, links: 1, coverage: 1 },
      { kind: 'c2c', bytes: 40e9, byDirection: { rx: 40e9 }, meanRateBps: 4e9, joulesPerGB: 75, links: 1, coverage: 0.98 },
    ],
    links: [
      { node: 'n1', device: 'gpu0', kind: 'pcie', bytes: 20e9, byDirection: { tx: 20e9 }, sensors: ['gpu0.pcie_tx'], sources: ['import'], coverage: 1 },
      { node: 'n1', device: 'gpu0', kind: 'c2c', bytes: 40e9, byDirection: { rx: 40e9 }, sensors: ['gpu0.c2c_rx'], sources: ['import'], coverage: 0.98 },
    ],
    overlap: { utilThresholdPct: 10, rateThresholdBps: 1e6, busyS: 10, overlappedS: 8, fraction: 0.8, gpus: [{ node: 'n1', gpu: 'gpu0', busyS: 10, overlappedS: 8, fraction: 0.8 }] },
    phases: [
      { name: 'train', timeS: 8, energyJ: 2600, kinds: { pcie: { bytes: 18e9, byDirection: { tx: 18e9 } } }, selfBytes: { pcie: 18e9 }, joulesPerGB: { pcie: 2600 / 18 } },
      { name: UNMARKED_NAME, timeS: 2, energyJ: 400, kinds: { pcie: { bytes: 2e9, byDirection: { tx: 2e9 } }, c2c: { bytes: 40e9, byDirection: { rx: 40e9 } } }, selfBytes: { pcie: 2e9, c2c: 40e9 }, joulesPerGB: { pcie: 200, c2c: 10 } },
    ],
    warnings: [],
    ...over,
  };
}

/** A run's carbon from its cluster's intensity series, and its cost per node-hour and per kWh (EUR). */
export function runCarbon(over: Partial<RunCarbon> = {}): RunCarbon {
  return {
    gCO2e: 0.5, energyKWh: 3000 / 3.6e6, pue: 1.5, gCO2ePerKWh: 400, source: 'series',
    series: { points: 2, firstMs: 0, lastMs: 100_000, coverage: 1 }, note: "the cluster's series covers the whole window", ...over,
  };
}

export function runCost(over: Partial<RunCost> = {}): RunCost {
  return {
    total: 0.0059, currency: 'EUR', nodes: 1, nodeHours: 10 / 3600, perNodeHour: 2, nodeTimeCost: 10 / 3600 * 2, energyKWh: 3000 / 3.6e6, pue: 1.5, perKWh: 0.25,
    energyCost: (3000 / 3.6e6) * 1.5 * 0.25, ...over,
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
    submittedAt: null, startedAt: null, endedAt: null, timeS: 60, workloadStart: null, workloadEnd: null, idleStart: null, idleEnd: null, cooldown: null,
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
    cooldown: null,
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
