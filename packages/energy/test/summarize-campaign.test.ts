import { campaignResults, campaignValidity, EnergyInputError, groupEntryId, MAX_FINGERPRINT_DIFFERENCES, type RunFigures } from '../src';
import { CampaignResults, ConfigurationResult } from '@erg/spec';

/** The design is the caller's too (it knows the campaign's run order). */
const DESIGN = { order: 'randomized-blocks' as const, seed: 1, confidence: 0.95, nodes: null, note: 'randomized complete blocks (seed 1)' };

const run = (timeS: number | null, energyJ: number | null, metrics: Record<string, number | null> = {}): RunFigures => ({
  timeS,
  energyJ,
  edpJs: timeS !== null && energyJ !== null ? timeS * energyJ : null,
  ed2pJs2: timeS !== null && energyJ !== null ? timeS * timeS * energyJ : null,
  avgPowerW: timeS !== null && energyJ !== null ? energyJ / timeS : null,
  metrics,
});

describe('campaignResults', () => {
  const results = campaignResults([
    { key: 'offload=none;sp=1', parameters: { offload: 'none', sp: 1 }, runs: [run(100, 50_000, { samples_per_s: 40 }), run(102, 51_000, { samples_per_s: 39 }), run(98, 49_000, { samples_per_s: 41 })] },
    { key: 'offload=cpu;sp=1', parameters: { offload: 'cpu', sp: 1 }, runs: [run(130, 42_000, { samples_per_s: 30 }), run(130, 44_000, { samples_per_s: null })] },
    { key: 'offload=cpu;sp=2', parameters: { offload: 'cpu', sp: 2 }, runs: [run(140, 45_000)] },
    { key: 'offload=none;sp=2', parameters: { offload: 'none', sp: 2 }, runs: [run(null, null), run(110, null)] },
    { key: 'offload=none;sp=4', parameters: { offload: 'none', sp: 4 }, runs: [] },
  ]);

  it('summarises every figure per configuration over its repetitions', () => {
    const a = results.configurations[0]!;
    expect(a.n).toBe(3);
    expect(a.timeS).toMatchObject({ n: 3, mean: 100, std: 2 });
    expect(a.energyJ).toMatchObject({ n: 3, mean: 50_000, std: 1000 });
    expect(a.avgPowerW.n).toBe(3);
    expect(a.metrics.samples_per_s).toMatchObject({ n: 3, mean: 40 });
    expect(a.point).toEqual({ timeS: 100, energyJ: 50_000, n: 3 });
    expect(a.parameters).toEqual({ offload: 'none', sp: 1 });
    expect(results.configurations[1]!.metrics.samples_per_s).toMatchObject({ n: 1, mean: 30 });
  });

  it('puts the configurations on the Pareto front of mean time and mean energy', () => {
    expect(results.paretoFront).toEqual(['offload=none;sp=1', 'offload=cpu;sp=1']);
    expect(results.configurations.map((c) => c.paretoOptimal)).toEqual([true, true, false, false, false]);
  });

  it('names the fastest, most frugal and EDP-optimal configurations and the trade-off between them', () => {
    // EDP of the means: 100 · 50 000 = 5.0e6; 130 · 43 000 = 5.59e6; 140 · 45 000 = 6.3e6.
    // Without carbon or cost figures (no cluster settings) their picks are null.
    expect(results.best).toEqual({ time: 'offload=none;sp=1', energy: 'offload=cpu;sp=1', edp: 'offload=none;sp=1', carbon: null, cost: null });
    expect(results.tradeoff).toEqual({
      fastest: 'offload=none;sp=1',
      mostFrugal: 'offload=cpu;sp=1',
      energySavedJ: 7_000,
      energySavedPct: 14,
      timeLostS: 30,
      timeLostPct: 30,
    });
  });

  it('leaves configurations without a run measuring both time and energy out of the comparison, saying why', () => {
    expect(results.excluded).toEqual([
      { key: 'offload=none;sp=2', why: 'none of its 2 completed run(s) has both a measured time and a measured energy (see the runs left out)' },
      { key: 'offload=none;sp=4', why: 'no completed runs' },
    ]);
    const partial = results.configurations[3]!;
    expect(partial.point).toBeNull();
    expect(partial.timeS).toMatchObject({ n: 1, mean: 110 });
    expect(partial.energyJ.n).toBe(0);
  });

  it('takes the point from runs that measured both, so T and E describe the same runs', () => {
    const r = campaignResults([{ key: 'k', parameters: {}, runs: [run(10, 100), run(20, null)] }]);
    expect(r.configurations[0]!.timeS.mean).toBe(15);
    expect(r.configurations[0]!.point).toEqual({ timeS: 10, energyJ: 100, n: 1 });
  });

  it('gives an empty comparison for no configurations', () => {
    expect(campaignResults([])).toEqual({ configurations: [], paretoFront: [], best: null, tradeoff: null, excluded: [], groupedBy: 'configuration', objectives: ['time', 'energy'], claims: null, nodes: null });
  });

  it('refuses duplicate configuration keys', () => {
    expect(() => campaignResults([{ key: 'a', parameters: {}, runs: [] }, { key: 'a', parameters: {}, runs: [] }])).toThrow(EnergyInputError);
  });
});

describe('campaignResults: energy by component', () => {
  const withComponents = (energyJ: number, components?: Record<string, number>): RunFigures => ({ ...run(10, energyJ), ...(components ? { components } : {}) });

  it('summarises each component kind over the runs that measured it', () => {
    const results = campaignResults([
      { key: 'a', parameters: {}, runs: [withComponents(300, { gpu: 200, cpu: 100 }), withComponents(500, { gpu: 400, cpu: 60, memory: 40 }), withComponents(450)] },
    ]);
    const c = results.configurations[0]!;
    expect(Object.keys(c.components)).toEqual(['gpu', 'cpu', 'memory']);
    expect(c.components.gpu).toMatchObject({ n: 2, mean: 300 });
    expect(c.components.cpu).toMatchObject({ n: 2, mean: 80 });
    expect(c.components.memory).toMatchObject({ n: 1, mean: 40 });
  });

  it('is empty when no run reports components', () => {
    expect(campaignResults([{ key: 'a', parameters: {}, runs: [run(1, 2)] }]).configurations[0]!.components).toEqual({});
  });
});

describe("campaignResults' result is the API's CampaignResults", () => {
  // The API serves it through @erg/spec's schema, which drops keys it does not know.
  it('has exactly the fields of the schema (less the campaign id), with a front, picks, a trade-off and exclusions', () => {
    const r = campaignResults([
      { key: 'fast', parameters: { sp: 1 }, runs: [{ ...run(100, 60_000), components: { gpu: 50_000, cpu: 10_000 } }, run(102, 61_000)] },
      { key: 'frugal', parameters: { sp: 2 }, runs: [run(130, 40_000), run(128, 41_000)] },
      { key: 'unmeasured', parameters: { sp: 4 }, runs: [run(120, null)] },
    ]);
    expect(r.tradeoff).not.toBeNull();
    expect(r.excluded).toHaveLength(1);
    expect(r.groupedBy).toBe('configuration');
    // The power note is the caller's (it knows the campaign and the cluster).
    const view = { campaignId: 'c', ...r, runsLeftOut: [], power: { requested: false, controlled: false, note: 'no power block' }, phases: null, dataMovement: null, currency: null, validity: campaignValidity([]), design: DESIGN };
    expect(CampaignResults.strict().parse(view)).toEqual(view);
    for (const c of r.configurations) expect(ConfigurationResult.strict().parse(c)).toEqual(c);
  });

  it('has exactly the fields of the schema grouped by fingerprint too', () => {
    const r = campaignResults(
      [
        { key: 'fast', parameters: { sp: 1 }, runs: [{ ...run(100, 60_000), fingerprintClass: 'aaaaaaaaaaaaaaaa' }, { ...run(102, 61_000), fingerprintClass: 'bbbbbbbbbbbbbbbb' }] },
        { key: 'unmeasured', parameters: { sp: 4 }, runs: [run(120, null)] },
      ],
      { groupBy: 'fingerprint' },
    );
    expect(r.groupedBy).toBe('fingerprint');
    const view = { campaignId: 'c', ...r, runsLeftOut: [], power: { requested: true, controlled: true, note: 'set by the node helper' }, phases: null, dataMovement: null, currency: null, validity: campaignValidity([]), design: DESIGN };
    expect(CampaignResults.strict().parse(view)).toEqual(view);
    for (const c of r.configurations) expect(ConfigurationResult.strict().parse(c)).toEqual(c);
  });
});

describe('campaignResults: kinds of machine (fingerprint classes)', () => {
  const on = (cls: string | null, timeS: number, energyJ: number): RunFigures => ({ ...run(timeS, energyJ), fingerprintClass: cls });
  const H100_550 = 'f00d550aaaaaaaaaaaaaaaaaaaaaaaaa';
  const H100_535 = 'f00d535bbbbbbbbbbbbbbbbbbbbbbbbb';
  const classes = new Map<string, Record<string, string>>([
    [H100_550, { driverVersion: '550.54.15', cudaVersion: '12.4', 'gpus[0].name': 'NVIDIA H100 80GB HBM3', kernel: '6.8.0-1013' }],
    [H100_535, { driverVersion: '535.104.05', cudaVersion: '12.4', 'gpus[0].name': 'NVIDIA H100 80GB HBM3', kernel: '6.8.0-1013' }],
    ['same-as-550-but-another-id', { driverVersion: '550.54.15', cudaVersion: '12.4', 'gpus[0].name': 'NVIDIA H100 80GB HBM3', kernel: '6.8.0-1013' }],
  ]);

  it('counts the classes of a configuration and says how they differ, with run counts, the most runs first', () => {
    const r = campaignResults([{ key: 'k', parameters: {}, runs: [on(H100_535, 10, 100), on(H100_550, 10, 100), on(H100_550, 11, 100), on(null, 12, 100)] }], { fingerprintClasses: classes });
    const c = r.configurations[0]!;
    expect(c.fingerprints).toBe(2);
    expect(c.fingerprintDifferences).toEqual(['driverVersion: 550.54.15 (2 runs) vs 535.104.05 (1 run)']);
    expect(c.fingerprint).toBeNull();
    expect(c.n).toBe(4); // grouped by configuration, every run counts together
  });

  it('finds no differences between identical classes, and none with one class or none', () => {
    const same = campaignResults([{ key: 'k', parameters: {}, runs: [on(H100_550, 10, 100), on('same-as-550-but-another-id', 10, 100)] }], { fingerprintClasses: classes });
    expect(same.configurations[0]).toMatchObject({ fingerprints: 2, fingerprintDifferences: [] });
    const one = campaignResults([{ key: 'k', parameters: {}, runs: [on(H100_550, 10, 100), on(H100_550, 11, 100)] }], { fingerprintClasses: classes });
    expect(one.configurations[0]).toMatchObject({ fingerprints: 1, fingerprintDifferences: [] });
    const none = campaignResults([{ key: 'k', parameters: {}, runs: [run(10, 100)] }]);
    expect(none.configurations[0]).toMatchObject({ fingerprints: 0, fingerprintDifferences: [], fingerprint: null });
  });

  it('orders differing fields by name, marks a missing field, and names classes whose fields are not known', () => {
    const more = new Map<string, Record<string, string>>([
      ['x', { driverVersion: '550', kernel: 'a', slurmVersion: 'slurm 22.05' }],
      ['y', { driverVersion: '535', kernel: 'b' }],
    ]);
    const r = campaignResults([{ key: 'k', parameters: {}, runs: [on('x', 1, 1), on('y', 1, 1), on('unlisted-class-id', 1, 1)] }], { fingerprintClasses: more });
    expect(r.configurations[0]!.fingerprints).toBe(3);
    expect(r.configurations[0]!.fingerprintDifferences).toEqual([
      'driverVersion: 535 (1 run) vs 550 (1 run)',
      'kernel: a (1 run) vs b (1 run)',
      'slurmVersion: (none) (1 run) vs slurm 22.05 (1 run)',
      '1 run ran on a kind of machine whose fingerprint is not known (unlisted-cla)',
    ]);
  });

  it(`keeps at most ${MAX_FINGERPRINT_DIFFERENCES} lines, the last saying how many more`, () => {
    const fields = (v: string) => Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${String(i).padStart(2, '0')}`, v]));
    const r = campaignResults([{ key: 'k', parameters: {}, runs: [on('p', 1, 1), on('q', 1, 1)] }], { fingerprintClasses: new Map([['p', fields('1')], ['q', fields('2')]]) });
    const lines = r.configurations[0]!.fingerprintDifferences;
    expect(lines).toHaveLength(MAX_FINGERPRINT_DIFFERENCES);
    expect(lines[0]).toBe('f00: 1 (1 run) vs 2 (1 run)');
    expect(lines[MAX_FINGERPRINT_DIFFERENCES - 1]).toBe('… and 11 more differences');
  });

  describe('grouped by fingerprint', () => {
    // cap=300 ran twice on the 550 driver (fast) and once on 535 (slow); cap=400 on 550 only, one run of unknown class.
    const r = campaignResults(
      [
        { key: 'cap=300', parameters: { cap: 300 }, runs: [on(H100_550, 100, 40_000), on(H100_535, 130, 52_000), on(H100_550, 102, 40_000)] },
        { key: 'cap=400', parameters: { cap: 400 }, runs: [on(H100_550, 90, 45_000), on(null, 95, 47_000)] },
        { key: 'cap=500', parameters: { cap: 500 }, runs: [] },
      ],
      { groupBy: 'fingerprint', fingerprintClasses: classes },
    );

    it('splits each configuration into one entry per class, runs of unknown class in their own', () => {
      expect(r.groupedBy).toBe('fingerprint');
      expect(r.configurations.map((c) => [c.key, c.fingerprint, c.n])).toEqual([
        ['cap=300', H100_550, 2],
        ['cap=300', H100_535, 1],
        ['cap=400', H100_550, 1],
        ['cap=400', null, 1],
        ['cap=500', null, 0],
      ]);
      expect(r.configurations.map((c) => c.fingerprints)).toEqual([1, 1, 1, 0, 0]);
      expect(r.configurations.every((c) => c.fingerprintDifferences.length === 0)).toBe(true);
      expect(r.configurations[0]!.timeS.mean).toBe(101);
      expect(r.configurations[0]!.parameters).toEqual({ cap: 300 });
    });

    it('compares entries: the front, the picks, the trade-off and the exclusions name them by entry id', () => {
      expect(groupEntryId('cap=300', H100_550)).toBe('cap=300@f00d550aaaaa');
      expect(groupEntryId('cap=400', null)).toBe('cap=400@none');
      // Points: 300@550 (101 s, 40 kJ), 300@535 (130 s, 52 kJ), 400@550 (90 s, 45 kJ), 400@none (95 s, 47 kJ).
      expect(r.paretoFront).toEqual(['cap=400@f00d550aaaaa', 'cap=300@f00d550aaaaa']);
      expect(r.configurations.map((c) => c.paretoOptimal)).toEqual([true, false, true, false, false]);
      expect(r.best).toEqual({ time: 'cap=400@f00d550aaaaa', energy: 'cap=300@f00d550aaaaa', edp: 'cap=300@f00d550aaaaa', carbon: null, cost: null });
      expect(r.tradeoff).toMatchObject({ fastest: 'cap=400@f00d550aaaaa', mostFrugal: 'cap=300@f00d550aaaaa', energySavedJ: 5_000, timeLostS: 11 });
      expect(r.excluded).toEqual([{ key: 'cap=500@none', why: 'no completed runs' }]);
    });

    it('still refuses duplicate configuration keys, and entry ids that collide', () => {
      expect(() => campaignResults([{ key: 'a', parameters: {}, runs: [] }, { key: 'a', parameters: {}, runs: [] }], { groupBy: 'fingerprint' })).toThrow(EnergyInputError);
      // Two classes that share their first 12 characters would share an entry id.
      const twins = [on('0123456789abXXXX', 1, 1), on('0123456789abYYYY', 1, 1)];
      expect(() => campaignResults([{ key: 'a', parameters: {}, runs: twins }], { groupBy: 'fingerprint' })).toThrow(/entry id "a@0123456789ab" appears twice/);
      expect(() => campaignResults([{ key: 'a', parameters: {}, runs: twins }])).not.toThrow();
    });
  });
});
