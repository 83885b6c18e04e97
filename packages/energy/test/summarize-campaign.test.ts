import { campaignResults, EnergyInputError, type RunFigures } from '../src';
import { CampaignResults, ConfigurationResult } from '@erg/spec';

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
    expect(results.best).toEqual({ time: 'offload=none;sp=1', energy: 'offload=cpu;sp=1', edp: 'offload=none;sp=1' });
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
    expect(campaignResults([])).toEqual({ configurations: [], paretoFront: [], best: null, tradeoff: null, excluded: [] });
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
    const view = { campaignId: 'c', ...r, runsLeftOut: [] };
    expect(CampaignResults.strict().parse(view)).toEqual(view);
    for (const c of r.configurations) expect(ConfigurationResult.strict().parse(c)).toEqual(c);
  });
});
