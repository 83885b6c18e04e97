import { colors, NO_PROVENANCE, runReport, stripAnsi } from '@erg/cli';
import { RunEnergyView, RunView } from '@erg/spec';
import { energyFixture, runCarbonFixture, runCooldownFixture, runCostFixture, runFixture, runMovementFixture } from './fixtures/run';
import { ANSI, erg, routes, RUN_ID } from './helpers';

const plain = colors(false);

test("the fixtures are bodies the API's schemas accept", () => {
  expect(RunView.parse(runFixture())).toEqual(runFixture());
  expect(RunView.parse(runFixture({ cooldown: runCooldownFixture() }))).toEqual(runFixture({ cooldown: runCooldownFixture() }));
  const priced = energyFixture({ carbon: runCarbonFixture(), cost: runCostFixture() });
  for (const body of [energyFixture(), priced, energyFixture({ dataMovement: runMovementFixture() })]) expect(RunEnergyView.parse(body)).toEqual(body);
});

describe('erg run: the report', () => {
  const report = runReport(runFixture(), { figures: energyFixture() }, plain);

  test('the run itself: state, configuration and repetition, Slurm job, partition, nodes, times', () => {
    expect(report).toMatch(/^Run {12}6f1c2a9e-0b7d-4c1e-9a55-3f2d8e4b7c10 \(campaign power-sweep, 7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f\)$/m);
    expect(report).toMatch(/^State {10}completed$/m);
    expect(report).toMatch(/^Configuration {2}limit=300, repetition 2$/m);
    expect(report).toMatch(/^Slurm job {6}4242 \(COMPLETED\), exit code 0$/m);
    expect(report).toMatch(/^Partition {6}gh200$/m);
    expect(report).toMatch(/^Nodes {10}nid\[001-002\]$/m);
    expect(report).toMatch(/^Submitted {6}2026-11-30T11:58:00\.000Z$/m);
    expect(report).toMatch(/^Ended {10}2026-11-30T11:59:10\.000Z$/m);
    expect(report).toMatch(/^Time {11}1 min 02 s$/m);
    expect(report).not.toMatch(/^Reason/m);
  });

  test("each node's provenance, the workload commit marked when its tree had uncommitted changes, no UUIDs", () => {
    expect(report).toContain(
      [
        'Provenance',
        '  nid001 (fingerprint a1b2c3d4e5f6)',
        '    GPUs       NVIDIA GH200 480GB × 2',
        '    Driver     550.54.15',
        '    CUDA       12.4',
        '    NVML       12.550.54.15',
        '    VBIOS      96.00.74.00.01',
        '    CPU        Neoverse-V2 (72 CPUs)',
        '    Kernel     6.8.0-1013-nvidia-64k (arm64)',
        '    Slurm      slurm 22.05.8',
        '    Container  nvcr.io/nvidia/pytorch:24.03-py3 @ sha256:4f1a',
        '    Modules    cuda/12.4, nccl/2.20',
        '    Workload   /home/alice/bench at git 3f2a9c1b4d5e6f708192a3b4c5d6e7f809102132 (uncommitted changes)',
        '    Agent      erg agent 0.1.0',
        '  nid002 (fingerprint ffeeddccbbaa)',
        '    GPUs       NVIDIA GH200 480GB × 2',
        '    Driver     535.104.05',
      ].join('\n'),
    );
    expect(report).toContain('    Workload   /home/alice/bench at git 3f2a9c1b4d5e6f708192a3b4c5d6e7f809102132\n');
    expect(report).not.toContain('GPU-nid001-0');
  });

  test('--verbose adds the GPU UUIDs', () => {
    const verbose = runReport(runFixture(), { figures: energyFixture() }, plain, { verbose: true });
    expect(verbose).toContain('    GPU UUIDs  gpu0 GPU-nid001-0, gpu1 GPU-nid001-1\n');
  });

  test('the power state: requested against before and applied per GPU, and the error where the helper failed', () => {
    expect(report).toContain(
      [
        'Power state (requested: GPU power limit 300 W)',
        '  nid001: applied by the node helper for job 4242',
        '    GPU   SETTING      REQUESTED  BEFORE  APPLIED',
        '    gpu0  power limit      300 W   700 W    300 W',
        '    gpu1  power limit      300 W   700 W    300 W',
        '  nid002: not applied: the node helper failed (nvidia-smi -pl 300: Insufficient Permissions); it restored what it had changed and the workload did not run',
        '    GPU   SETTING      REQUESTED  BEFORE  APPLIED',
        '    gpu0  power limit      300 W   700 W        —',
      ].join('\n'),
    );
  });

  test("the energy: figures, flags with their warnings, the state in force per GPU with its throttled share, Slurm's figure beside erg's", () => {
    expect(report).toContain(
      [
        'Energy',
        '  Energy        73.8 kJ · avg power 1.20 kW · EDP 4.54 MJ·s',
        '  Method        counter, coverage 100.0 %',
        '  Components    module 73.8 kJ',
        "  Slurm energy  80.4 kJ (1.09 × erg's)",
        "                Slurm's acct_gather_energy measured 80442 J for the whole job",
      ].join('\n'),
    );
    expect(report).toMatch(/^ {2}Flags {9}power_state_mismatch, throttled$/m);
    expect(report).toContain('  Warnings (2):\n    nid002: the node helper could not apply the power state');
    expect(report).toContain(
      [
        '  Power in force (requested: GPU power limit 300 W)',
        '    NODE    GPU   POWER LIMIT  MODULE LIMIT  SM CLOCK MAX  APP CLOCK  MAX TEMP  THROTTLED',
        '    nid001  gpu0        300 W             —      1980 MHz   1755 MHz     71 °C  0.0 %',
        '    nid001  gpu1        300 W             —      1830 MHz   1755 MHz     88 °C  23.0 % (sw_thermal_slowdown)',
        '    nid002  gpu0        700 W             —      1980 MHz   1755 MHz     66 °C  —',
      ].join('\n'),
    );
  });

  test('where Slurm measured nothing, its note says so instead of a figure', () => {
    const none = runReport(runFixture(), { figures: energyFixture({ slurmEnergy: { energyJ: null, ratio: null, note: 'Slurm reported no energy for this job (sacct ConsumedEnergy empty or 0)' } }) }, plain);
    expect(none).toContain('  Slurm energy  none\n                Slurm reported no energy for this job (sacct ConsumedEnergy empty or 0)\n');
  });

  test('missing pieces are said plainly: no provenance, no power record, no figures yet, no state in force', () => {
    const bare = runReport(
      runFixture({ state: 'running', nodes: [], endedAt: null, timeS: null, exitCode: null, slurmState: 'RUNNING' }),
      { figures: null, why: `run ${RUN_ID} is running: energy is computed over its workload window once it has ended` },
      plain,
    );
    expect(bare).toContain(`Provenance\n  ${NO_PROVENANCE}\n`);
    expect(NO_PROVENANCE).toBe("no provenance: the run's agents sent none (agent older than this erg, or the run never started)");
    expect(bare).not.toContain('Power state');
    expect(bare).toMatch(/^Ended {10}not yet$/m);
    expect(bare).toMatch(/^Time {11}not measured yet$/m);
    expect(bare).toContain(`Energy: no figures yet — run ${RUN_ID} is running: energy is computed over its workload window once it has ended\n`);

    const oneSilent = runReport(runFixture({ nodes: [{ node: 'nid009', fingerprintId: null, fingerprint: null, power: null }] }), { figures: energyFixture({ power: undefined }) }, plain);
    expect(oneSilent).toContain('Provenance\n  nid009: no provenance: its agent sent none (agent older than this erg)\n');
    expect(oneSilent).toContain('  Power in force: not recorded (no power-state sensor on its nodes, and the campaign set no power state)\n');
  });

  test('a node without a record where others have one is named; a failed state and flags are coloured on a terminal only', () => {
    const run = runFixture();
    run.nodes[1]!.power = null;
    const text = runReport(run, { figures: energyFixture() }, colors(true));
    expect(stripAnsi(text)).toContain('  nid002: no record from the node helper: what was in force there is not known\n');
    expect(text).toMatch(ANSI);
    expect(report).not.toMatch(ANSI);
  });
});

describe('erg run: energy per node', () => {
  const twoNodes = energyFixture({
    nodes: [
      { node: 'nid001', energyJ: 49_200, method: 'counter', coverage: 1, sensorsUsed: ['module0.energy'], components: { module: 49_200 }, breakdown: {} },
      { node: 'nid002', energyJ: 24_600, method: 'integrated', coverage: 0.5, sensorsUsed: ['module0.power'], components: { module: 24_600 }, breakdown: {} },
    ],
  });

  test("a multi-node run's report has each node's energy, share of the run's, average power, method, coverage and sensors", () => {
    expect(RunEnergyView.parse(twoNodes)).toEqual(twoNodes);
    const text = runReport(runFixture(), { figures: twoNodes }, plain);
    expect(text).toContain("Energy per node (2 nodes; they add up to the run's)");
    expect(text).toMatch(/^ +nid001 +49\.2 kJ +66\.7 % +800 W +counter +100\.0 % +module0\.energy$/m);
    expect(text).toMatch(/^ +nid002 +24\.6 kJ +33\.3 % +400 W +integrated +50\.0 % +module0\.power$/m);
  });

  test('a one-node run has no per-node table (its node is the run)', () => {
    const one = energyFixture({ nodes: [{ node: 'nid001', energyJ: 73_800, method: 'counter', coverage: 1, sensorsUsed: ['module0.energy'], components: { module: 73_800 }, breakdown: {} }] });
    expect(runReport(runFixture(), { figures: one }, plain)).not.toContain('Energy per node');
  });
});

describe('erg run: the cooldown', () => {
  test("the job's wait before its idle baseline and workload, and what each node was compared with", () => {
    const text = runReport(runFixture({ cooldown: runCooldownFixture() }), { figures: energyFixture() }, plain);
    expect(text).toContain(
      'Cooldown\n' +
        '  waited 1 min 04 s before the idle baseline and the workload (not in its time); not every node cooled before maxWaitS: the workload ran all the same\n' +
        '  nid001: cooled in 12.4 s — 231 W vs idle 214 W; hottest GPU 38.4 °C vs idle 35.1 °C\n' +
        '  nid002: not cooled after 1 min 00 s — 402 W, settled (no idle baseline measured on this node yet)\n',
    );
    // Between the power state and the energy, where it happened.
    expect(text.indexOf('Cooldown')).toBeGreaterThan(text.indexOf('Power state'));
    expect(text.indexOf('Cooldown')).toBeLessThan(text.indexOf('\nEnergy\n'));
    expect(stripAnsi(runReport(runFixture({ cooldown: runCooldownFixture() }), { figures: energyFixture() }, colors(true)))).toBe(text);
  });

  test('no section for a run whose campaign has no cooldown', () => {
    expect(runReport(runFixture(), { figures: energyFixture() }, plain)).not.toContain('Cooldown');
  });
});

describe('erg run', () => {
  const api = (energy: { status: number; body?: unknown }) =>
    routes({ [`GET /v1/runs/${RUN_ID}`]: { status: 200, body: runFixture() }, [`GET /v1/runs/${RUN_ID}/energy`]: energy });

  test('asks for the run and its energy, and prints the report', async () => {
    const out = await erg(['run', RUN_ID], { api: api({ status: 200, body: energyFixture() }) });
    expect(out.code).toBe(0);
    expect(out.stderr).toBe('');
    expect(out.requests.map((r) => r.path)).toEqual([`/v1/runs/${RUN_ID}`, `/v1/runs/${RUN_ID}/energy`]);
    expect(out.stdout).toBe(runReport(runFixture(), { figures: energyFixture() }, plain));
  });

  test('energy not ready (409): the rest of the run, and why there are no figures; --json gives energy null', async () => {
    const notReady = api({ status: 409, body: { error: { code: 'ERG_NOT_READY', message: `run ${RUN_ID} has no telemetry to compute energy from` } } });
    const out = await erg(['run', RUN_ID], { api: notReady });
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(`Energy: no figures yet — run ${RUN_ID} has no telemetry to compute energy from\n`);
    expect(out.stdout).toContain('Provenance\n');
    const json = await erg(['run', RUN_ID, '--json'], { api: notReady });
    expect(JSON.parse(json.stdout)).toEqual({ run: runFixture(), energy: null });
  });

  test('--json prints { run, energy } as the API gave them', async () => {
    const out = await erg(['run', RUN_ID, '--json'], { api: api({ status: 200, body: energyFixture() }) });
    expect(JSON.parse(out.stdout)).toEqual({ run: runFixture(), energy: energyFixture() });
  });

  test('other failures are failures: an unknown run, a server error', async () => {
    const unknown = await erg(['run', RUN_ID], { api: routes({}) });
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    const broken = await erg(['run', RUN_ID], { api: api({ status: 500, body: { error: { code: 'ERG_INTERNAL', message: 'internal error' } } }) });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/the API failed \(500 ERG_INTERNAL\)/);
  });

  test('a malformed id is a usage error before any request', async () => {
    const out = await erg(['run', 'nope'], { api: () => ({ status: 500 }) });
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/not a run id/);
    expect(out.requests).toEqual([]);
  });
});

describe('erg run: carbon and cost', () => {
  const section = (energy: ReturnType<typeof energyFixture>) => runReport(runFixture(), { figures: energy }, plain).split('\nEnergy\n')[1]!;

  test("the run's gCO₂e as kWh × PUE × intensity, where the intensity came from, and its cost with each priced part", () => {
    const text = section(energyFixture({ carbon: runCarbonFixture(), cost: runCostFixture() }));
    expect(text).toContain(
      [
        '  Components    module 73.8 kJ',
        '  Carbon        7.69 gCO₂e = 0.0205 kWh × PUE 1.20 × 313 gCO₂e/kWh',
        "                intensity: series — the cluster's series over the window (time-weighted mean of 4 points)",
        '  Cost          0.0928 EUR',
        '                node time: 0.0342 node-hours (2 nodes) × 2.50 EUR per node-hour = 0.0854 EUR',
        '                energy: 0.0205 kWh × PUE 1.20 × 0.300 EUR per kWh = 0.00738 EUR',
        "  Slurm energy  80.4 kJ (1.09 × erg's)",
      ].join('\n'),
    );
  });

  test("a constant intensity says so; a cluster priced per node-hour only shows that part", () => {
    const carbon = runCarbonFixture({ source: 'constant', series: null, gCO2ePerKWh: 350, gCO2e: (73_800 / 3_600_000) * 1.2 * 350, note: "the cluster's constant" });
    const cost = runCostFixture({ perKWh: null, energyCost: null, total: ((2 * 61.5) / 3600) * 2.5 });
    const text = section(energyFixture({ carbon, cost }));
    expect(text).toContain("  Carbon        8.61 gCO₂e = 0.0205 kWh × PUE 1.20 × 350 gCO₂e/kWh\n                intensity: constant — the cluster's constant\n");
    expect(text).toContain('  Cost          0.0854 EUR\n                node time: 0.0342 node-hours (2 nodes) × 2.50 EUR per node-hour = 0.0854 EUR\n  Slurm energy');
    expect(text).not.toContain('per kWh');
  });

  test('no carbon or cost lines where the cluster has neither (null)', () => {
    const text = section(energyFixture());
    expect(text).not.toMatch(/Carbon|Cost|gCO₂e|EUR/);
  });

  test('erg run prints them from the API; --json passes them through', async () => {
    const energy = energyFixture({ carbon: runCarbonFixture(), cost: runCostFixture() });
    const api = routes({ [`GET /v1/runs/${RUN_ID}`]: { status: 200, body: runFixture() }, [`GET /v1/runs/${RUN_ID}/energy`]: { status: 200, body: energy } });
    const out = await erg(['run', RUN_ID], { api });
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^ {2}Carbon {8}7\.69 gCO₂e = /m);
    expect(out.stdout).toMatch(/^ {2}Cost {10}0\.0928 EUR$/m);
    const json = await erg(['run', RUN_ID, '--json'], { api });
    expect(JSON.parse(json.stdout).energy).toMatchObject({ carbon: runCarbonFixture(), cost: runCostFixture() });
  });
});

describe('erg run: data movement', () => {
  test('per kind of link: bytes, rate, J per GB, links and coverage; the GPU busy time overlapped with transfers; bytes per phase', () => {
    const text = runReport(runFixture(), { figures: energyFixture({ dataMovement: runMovementFixture() }) }, plain).split('\nData movement\n')[1]!;
    expect(text).toContain(
      [
        '  link          bytes       rate       J/GB  links  coverage',
        '  PCIe         123 GB  2.00 GB/s   600 J/GB      1   100.0 %',
        '  NVLink-C2C  1.23 TB  20.0 GB/s  60.0 J/GB      1    95.0 %',
      ].join('\n'),
    );
    expect(text).toContain('  GPU busy 50.0 s (GPU-seconds), of which overlapped with transfers 30.0 s (60.0 %)');
    expect(text).toContain('    phase        energy     PCIe  NVLink-C2C\n    offload     30.0 kJ   100 GB     1.00 TB\n    (unmarked)  43.8 kJ  23.0 GB      230 GB');
  });

  test('no section where the nodes had no data-movement sensor', () => {
    expect(runReport(runFixture(), { figures: energyFixture() }, plain)).not.toContain('Data movement');
  });
});

test('erg run says when the figures are behind late telemetry', () => {
  expect(runReport(runFixture(), { figures: energyFixture({ stale: true }) }, plain)).toMatch(/^ {2}Stale {9}telemetry arrived after these figures were computed; the scheduler recomputes them at its next tick$/m);
  expect(runReport(runFixture(), { figures: energyFixture() }, plain)).not.toContain('Stale');
});

describe('erg run: validity', () => {
  const check = (check: string, status: 'pass' | 'fail' | 'not_measured', value: number | null, limit: number, where: string | null, detail: string) => ({ check, status, value, limit, where, detail });
  const validity = {
    valid: false, excluded: false,
    reasons: ['longest gap 20.1 s > 3 s at nid001 gpu0.power'],
    checks: [
      check('sample_share', 'pass', 0.991, 0.95, 'nid001 gpu0.power', '99.1 % of the sample intervals expected every 100 ms kept ≥ 95.0 % at nid001 gpu0.power'),
      check('longest_gap', 'fail', 20.1, 3, 'nid001 gpu0.power', 'longest gap 20.1 s > 3 s at nid001 gpu0.power'),
      check('clock_offset', 'pass', 12, 1000, 'nid001 (40 pushes)', "agent clock +12 ms from erg's server ≤ 1,000 ms at nid001 (40 pushes)"),
      check('idle_stability', 'not_measured', null, 0.1, null, 'no idle baseline (telemetry.idleBaselineS is 0)'),
    ],
  };

  test('the gates under the energy: whether the run is valid and why not, then each gate with its worst value, limit and where', () => {
    const energy = energyFixture({ validity });
    expect(RunEnergyView.parse(energy)).toEqual(energy);
    const text = runReport(runFixture(), { figures: energy }, plain);
    expect(text).toContain('  Validity: invalid: longest gap 20.1 s > 3 s at nid001 gpu0.power\n');
    expect(text).toMatch(/^ {4}GATE +STATUS +WORST +LIMIT +WHERE$/m);
    expect(text).toMatch(/^ {4}samples kept +pass +99\.1 % +≥ 95\.0 % +nid001 gpu0\.power$/m);
    expect(text).toMatch(/^ {4}longest gap +fail +20\.1 s +≤ 3\.00 s +nid001 gpu0\.power$/m);
    expect(text).toMatch(/^ {4}clock offset +pass +12\.0 ms +≤ 1\.00 s +nid001 \(40 pushes\)$/m);
    expect(text).toMatch(/^ {4}idle stability +not measured +— +≤ CV 0\.100 +no idle baseline \(telemetry\.idleBaselineS is 0\)$/m);
  });

  test('figures computed before erg checked validity show no gates', () => {
    expect(runReport(runFixture(), { figures: energyFixture() }, plain)).not.toContain('Validity');
  });
});
