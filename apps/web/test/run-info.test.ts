import {
  asSentence, cooldownLines, differingMachines, entryId, flaggedConfigurations, flagLabel, flagLabels, hasPowerRecord, marksOf, measuredConfigurations, NO_PROVENANCE, nodeRows, POWER_IN_FORCE_COLUMNS,
  powerInForceRows, powerNoteLine, powerRequestedText, slurmEnergyFigure,
} from '@erg/web';
import { config, energy, results, run } from './fixtures';

describe('the run page: nodes and provenance', () => {
  const rows = nodeRows(run());

  it('one row per node: the fingerprint id in short, the machine in a line, every fact with the UUIDs in its details', () => {
    expect(rows.map((r) => [r.node, r.fingerprint])).toEqual([['nid001', 'a1b2c3d4e5f6'], ['nid002', 'ffeeddccbbaa'], ['nid003', 'none']]);
    expect(rows[0]!.summary).toBe('NVIDIA GH200 480GB × 1 · driver 550.54.15 · CUDA 12.4 · slurm 22.05.8 · uncommitted changes');
    expect(rows[1]!.summary).toContain('driver 535.104.05');
    const facts = new Map(rows[0]!.facts);
    expect(facts.get('Host name')).toBe('nid001.cluster');
    expect(facts.get('Workload')).toBe('/home/alice/bench at git 3f2a9c1b (uncommitted changes)');
    expect(facts.get('GPU UUIDs')).toBe('gpu0 GPU-nid001');
    expect(facts.get('Container')).toBe('none');
  });

  it('a node whose agent sent nothing says so; a run without nodes has the sentence for it', () => {
    expect(rows[2]!.summary).toBe('no provenance: its agent sent none (agent older than this erg)');
    expect(rows[2]!.facts).toEqual([]);
    expect(asSentence(NO_PROVENANCE)).toBe("No provenance: the run's agents sent none (agent older than this erg, or the run never started).");
  });

  it("the node helper's record: requested, before and applied per GPU; the error where it failed; nothing where the campaign set no state", () => {
    expect(rows[0]!.power).toEqual({ ok: true, status: 'applied by the node helper for job 4242', rows: [{ target: 'gpu0', setting: 'power limit', requested: '300 W', previous: '700 W', applied: '300 W' }] });
    expect(rows[1]!.power!.ok).toBe(false);
    expect(rows[1]!.power!.status).toMatch(/^not applied: the node helper failed \(Insufficient Permissions\)/);
    expect(rows[1]!.power!.rows).toEqual([{ target: 'all GPUs', setting: 'power limit', requested: '300 W', previous: '—', applied: '—' }]);
    expect(rows[2]!.power).toBeNull();
    expect(hasPowerRecord(run())).toBe(true);
    expect(hasPowerRecord({ nodes: run().nodes.map((n) => ({ ...n, power: null })) })).toBe(false);
  });
});

describe('the run page: cooldown', () => {
  it("the job's wait in a sentence and one line per node, the node that did not cool marked; nothing without a cooldown", () => {
    const cooldown = {
      waitedS: 9.5, reached: false, window: { startMs: 0, endMs: 9500 },
      nodes: [
        { node: 'nid001', waitedS: 6.1, reached: true, criterion: 'idle_baseline' as const, powerW: 118, referenceW: 112, maxGpuTempC: 41, referenceTempC: 38, gpus: [] },
        { node: 'nid002', waitedS: 9, reached: false, criterion: 'settled' as const, powerW: null, referenceW: null, maxGpuTempC: null, referenceTempC: null, gpus: [] },
      ],
    };
    expect(cooldownLines({ cooldown })).toEqual({
      reached: false,
      summary: 'Waited 9.50 s before the idle baseline and the workload (not in its time); not every node cooled before maxWaitS: the workload ran all the same.',
      nodes: [
        { node: 'nid001', reached: true, text: 'nid001: cooled in 6.10 s — 118 W vs idle 112 W; hottest GPU 41.0 °C vs idle 38.0 °C' },
        { node: 'nid002', reached: false, text: 'nid002: not cooled after 9.00 s — power unknown, settled (no idle baseline measured on this node yet)' },
      ],
    });
    expect(cooldownLines(run())).toBeNull();
  });
});

describe('the run page: energy', () => {
  it('flags by readable names', () => {
    expect(flagLabels(energy())).toEqual(['power state mismatch', 'throttled']);
  });

  it('the power state in force per GPU, with its throttled share and reasons', () => {
    const power = energy().power!;
    expect(powerRequestedText(power)).toBe('requested: GPU power limit 300 W');
    expect(powerInForceRows(power)).toEqual([
      { node: 'nid001', gpu: 'gpu0', powerLimit: '300 W', moduleLimit: '—', smClockMax: '1830 MHz', appClock: '1755 MHz', maxTemp: '88 °C', throttled: '23.0 % (sw_thermal_slowdown)' },
    ]);
    expect(POWER_IN_FORCE_COLUMNS.map((c) => c.header)).toEqual(['node', 'GPU', 'power limit', 'module limit', 'SM clock max', 'app clock', 'max temp', 'throttled']);
    expect(powerRequestedText({ requested: null })).toBe('none requested: the nodes ran in whatever power state they were in');
  });

  it("Slurm's figure beside erg's, or none", () => {
    expect(slurmEnergyFigure(energy().slurmEnergy)).toBe("66.0 kJ (1.10 × erg's)");
    expect(slurmEnergyFigure({ energyJ: null, ratio: null, note: 'no' })).toBe('none');
  });
});

describe('the campaign page: power note and machines', () => {
  it('the power note as one line; none from an API that does not say', () => {
    const r = { ...results(), power: { requested: false, controlled: false, note: 'cluster local has no power knobs erg can set (no node helper): runs ran at whatever power state its nodes were in' } };
    expect(powerNoteLine(r.power)).toBe('Power state: cluster local has no power knobs erg can set (no node helper): runs ran at whatever power state its nodes were in');
    expect(powerNoteLine(undefined)).toBeNull();
  });

  it('configurations that ran on more than one kind of machine, with how they differ', () => {
    const configurations = [
      config('a', {}, 1, 1, { fingerprints: 1, fingerprintDifferences: [] }),
      config('b', {}, 1, 1, { fingerprints: 2, fingerprintDifferences: ['driverVersion: 550.54.15 (2 runs) vs 535.104.05 (1 run)'] }),
    ];
    expect(differingMachines(configurations).map(({ label, differences }) => ({ label, differences }))).toEqual([
      { label: 'b: 2 kinds of machine', differences: ['driverVersion: 550.54.15 (2 runs) vs 535.104.05 (1 run)'] },
    ]);
  });

  it('flag names read with spaces in the flagged list', () => {
    expect(flagLabel('power_state_unverified')).toBe('power state unverified');
    const flagged = flaggedConfigurations([config('a', {}, 1, 1, { flaggedRuns: { shared_node: 2 } })], flagLabel);
    expect(flagged[0]!.text).toBe('shared node 2 of 3 run(s)');
  });

  it('entries grouped by fingerprint are named by their id in marks and exclusions', () => {
    const r = results();
    const a = { ...r.configurations[0]!, id: 'n=1;w=1@aaaa1111bbbb', fingerprint: 'aaaa1111bbbb2222' };
    const b = { ...r.configurations[0]!, id: 'n=1;w=1@ffff0000eeee', fingerprint: 'ffff0000eeee1111', paretoOptimal: false };
    const grouped = { ...r, configurations: [a, b], best: { time: a.id, energy: a.id, edp: a.id }, excluded: [{ key: b.id, why: 'no runs' }], groupedBy: 'fingerprint' as const };
    expect(marksOf(grouped, a)).toEqual({ pareto: true, bestTime: true, bestEnergy: true, bestEdp: true });
    expect(marksOf(grouped, b).bestTime).toBe(false);
    expect(measuredConfigurations(grouped).map(entryId)).toEqual([a.id]);
    expect(entryId({ key: 'k' })).toBe('k');
  });
});
