import fc from 'fast-check';
import { campaignResults, paretoFront, paretoFrontOf, type RunFigures } from '../src';

/** A run's figures with carbon (g) and cost; null: none. */
const run = (timeS: number, energyJ: number, carbonG: number | null, cost: number | null = null): RunFigures => ({
  timeS, energyJ, edpJs: timeS * energyJ, ed2pJs2: timeS * timeS * energyJ, avgPowerW: energyJ / timeS, metrics: {},
  ...(carbonG === null ? {} : { carbonG }), ...(cost === null ? {} : { cost, costCurrency: 'EUR' }),
});

// fast: quick and costly in energy; frugal: least energy; green: most energy but on a clean grid
// (runs at night), so the least carbon; cheap: the least cost.
const configs = [
  { key: 'fast', parameters: {}, runs: [run(10, 1000, 100, 5), run(10, 1000, 100, 5)] },
  { key: 'frugal', parameters: {}, runs: [run(20, 500, 80, 4)] },
  { key: 'green', parameters: {}, runs: [run(30, 1200, 20, 6)] },
  { key: 'cheap', parameters: {}, runs: [run(40, 900, 90, 1)] },
  { key: 'unpriced', parameters: {}, runs: [run(5, 2000, null)] },
];

describe('the Pareto front on other objectives', () => {
  test('by default (time, energy) it is exactly paretoFront of the (time, energy) points, and says so', () => {
    const r = campaignResults(configs);
    expect(r.objectives).toEqual(['time', 'energy']);
    expect(r.paretoFront).toEqual(paretoFront(r.configurations.filter((c) => c.point).map((c) => ({ key: c.key, ...c.point! }))));
    expect(r.paretoFront).toEqual(['unpriced', 'fast', 'frugal']);
    expect(r.excluded).toEqual([]);
  });

  test('on (time, carbon): the clean-grid configuration joins the front; one without carbon is excluded, saying why', () => {
    const r = campaignResults(configs, { objectives: ['time', 'carbon'] });
    expect(r.objectives).toEqual(['time', 'carbon']);
    expect(r.paretoFront).toEqual(['fast', 'frugal', 'green']);
    expect(r.configurations.filter((c) => c.paretoOptimal).map((c) => c.key)).toEqual(['fast', 'frugal', 'green']);
    expect(r.excluded).toEqual([{ key: 'unpriced', why: expect.stringMatching(/^none of its 1 completed run\(s\) has both a measured time and a carbon figure/) }]);
    // The picks and the trade-off stay on time and energy.
    // EDP ties at 10 000 J·s (unpriced, fast, frugal): the fastest wins.
    expect(r.best).toEqual({ time: 'unpriced', energy: 'frugal', edp: 'unpriced', carbon: 'green', cost: 'cheap' });
    expect(r.tradeoff).toMatchObject({ fastest: 'unpriced', mostFrugal: 'frugal' });
  });

  test('on (carbon, cost) and on (energy, edp), sorted by the first objective', () => {
    expect(campaignResults(configs, { objectives: ['carbon', 'cost'] }).paretoFront).toEqual(['green', 'frugal', 'cheap']);
    expect(campaignResults(configs, { objectives: ['cost', 'carbon'] }).paretoFront).toEqual(['cheap', 'frugal', 'green']);
    // EDP: fast 10 000, frugal 10 000, green 36 000, cheap 36 000, unpriced 10 000.
    expect(campaignResults(configs, { objectives: ['energy', 'edp'] }).paretoFront).toEqual(['frugal']);
  });

  test('carbon and cost are summarised per configuration like energy; null picks where no configuration has them', () => {
    const r = campaignResults(configs);
    expect(r.configurations[0]!.carbon).toMatchObject({ n: 2, mean: 100, std: 0, ci95: [100, 100], cv: 0 });
    expect(r.configurations[0]!.cost).toMatchObject({ n: 2, mean: 5 });
    expect(r.configurations[4]!.carbon).toEqual({ n: 0, mean: null, std: null, ci95: null, cv: null, min: null, max: null });
    const none = campaignResults([{ key: 'a', parameters: {}, runs: [run(1, 1, null)] }]);
    expect(none.best).toEqual({ time: 'a', energy: 'a', edp: 'a', carbon: null, cost: null });
  });

  test('ties on carbon go to the faster configuration, then to the first key', () => {
    const tie = [
      { key: 'b', parameters: {}, runs: [run(20, 1, 50)] },
      { key: 'a', parameters: {}, runs: [run(20, 1, 50)] },
      { key: 'c', parameters: {}, runs: [run(10, 1, 50)] },
    ];
    expect(campaignResults(tie).best!.carbon).toBe('c');
    expect(campaignResults(tie.slice(0, 2)).best!.carbon).toBe('a');
  });

  test('refuses the same objective twice', () => {
    expect(() => campaignResults(configs, { objectives: ['time', 'time'] })).toThrow(/twice/);
  });

  test('paretoFrontOf on (a, b) is paretoFront on (time, energy) for any points', () => {
    const coord = fc.integer({ min: 0, max: 6 });
    fc.assert(
      fc.property(fc.uniqueArray(fc.tuple(fc.string({ minLength: 1, maxLength: 3 }), coord, coord), { maxLength: 25, selector: ([k]) => k }), (tuples) => {
        const front = paretoFront(tuples.map(([key, timeS, energyJ]) => ({ key, timeS, energyJ })));
        return JSON.stringify(front) === JSON.stringify(paretoFrontOf(tuples.map(([key, a, b]) => ({ key, a, b }))));
      }),
    );
  });
});
