import { footprintCsvColumns, hasCarbon, hasCost, inConfigurationOrder, markLegend, markLetters, marksOf, marksWithFootprintOf, MARK_LEGEND, objectivesText, resultRows, resultsCsvRows, UNMEASURED_SHOWN, UNTRIED } from '@erg/format';

const none = { n: 0, mean: null, ci95: null };
const some = (mean: number) => ({ n: 3, mean, ci95: [mean - 1, mean + 1] });
const entry = (key: string, carbon = none as { n: number; mean: number | null; ci95: number[] | null }, cost = none as typeof carbon) => ({
  key, parameters: {}, n: 3, paretoOptimal: true, timeS: some(10), energyJ: some(100), avgPowerW: some(10), edpJs: some(1000), carbon, cost,
});

describe('marks and their legend', () => {
  test('marksWithFootprintOf adds least carbon (C) and cheapest (M); marksOf keeps to P T E D', () => {
    const results = { configurations: [entry('a', some(5), some(2)), entry('b', some(4), some(3))], best: { time: 'a', energy: 'a', edp: 'a', carbon: 'b', cost: 'a' }, excluded: [] };
    const [a, b] = results.configurations;
    expect(markLetters(marksWithFootprintOf(results, a!))).toBe('P T E D M');
    expect(markLetters(marksWithFootprintOf(results, b!))).toBe('P C');
    expect(markLetters(marksOf(results, b!))).toBe('P');
    expect(marksWithFootprintOf({ best: { time: 'a', energy: 'a', edp: 'a', carbon: null, cost: null } }, a!)).toMatchObject({ bestCarbon: false, bestCost: false });
  });

  test("the legend names the front's objectives, and C and M only where the results name such a configuration", () => {
    expect(markLegend({ best: null })).toBe(MARK_LEGEND);
    expect(MARK_LEGEND).toBe('P on the Pareto front of (time, energy) · T fastest · E least energy · D lowest energy-delay product');
    expect(markLegend({ objectives: ['time', 'carbon'], best: { time: 'a', energy: 'a', edp: 'a', carbon: 'a', cost: null } })).toBe(
      'P on the Pareto front of (time, carbon) · T fastest · E least energy · D lowest energy-delay product · C least carbon',
    );
    expect(markLegend({ objectives: ['edp', 'cost'], best: { time: 'a', energy: 'a', edp: 'a', carbon: null, cost: 'a' } })).toMatch(/^P on the Pareto front of \(EDP, cost\) .* · M cheapest$/);
    expect(objectivesText({})).toBe('time, energy');
  });
});

describe('carbon and cost CSV columns', () => {
  test('appended after the figures only where some configuration has them; raw numbers, the currency beside each cost', () => {
    const without = { configurations: [entry('a'), entry('b')], best: { time: 'a', energy: 'a', edp: 'a', carbon: null, cost: null }, excluded: [], currency: null };
    expect(hasCarbon(without) || hasCost(without)).toBe(false);
    expect(footprintCsvColumns(without)).toEqual([]);
    expect(resultsCsvRows(without, footprintCsvColumns(without))).toEqual(resultsCsvRows(without));

    const carbonOnly = { ...without, configurations: [entry('a', some(5)), entry('b')], best: { ...without.best, carbon: 'a' } };
    expect(resultsCsvRows(carbonOnly, footprintCsvColumns(carbonOnly))[0]!.slice(-4)).toEqual(['carbon_gco2e', 'carbon_ci95_low', 'carbon_ci95_high', 'best_carbon']);

    const both = { ...without, configurations: [entry('a', some(5), some(2)), entry('b')], best: { ...without.best, carbon: 'a', cost: 'a' }, currency: 'EUR' };
    const [header, a, b] = resultsCsvRows(both, footprintCsvColumns(both));
    const base = resultsCsvRows(both)[0]!;
    expect(header!.slice(0, base.length)).toEqual(base);
    expect(header!.slice(base.length)).toEqual(['carbon_gco2e', 'carbon_ci95_low', 'carbon_ci95_high', 'cost', 'cost_ci95_low', 'cost_ci95_high', 'currency', 'best_carbon', 'best_cost']);
    expect(a!.slice(base.length)).toEqual([5, 4, 6, 2, 1, 3, 'EUR', true, true]);
    expect(b!.slice(base.length)).toEqual([null, null, null, null, null, null, null, false, false]);
  });
});

test("inConfigurationOrder: members in the results' configuration order, unknown keys last in their own order", () => {
  const items = [{ key: 'x', v: 1 }, { key: 'c' }, { key: 'y' }, { key: 'a' }];
  expect(inConfigurationOrder([{ key: 'a' }, { key: 'b' }, { key: 'c' }], items).map((i) => i.key)).toEqual(['a', 'c', 'x', 'y']);
});

describe('the rows of a results table', () => {
  test('every configuration while few lack measurements; beyond that the measured ones and a count per reason', () => {
    const few = { configurations: [entry('a'), entry('b')], best: null, excluded: [{ key: 'b', why: 'no completed runs' }] };
    expect(resultRows(few)).toEqual({ rows: few.configurations, folded: [] });
    const keys = Array.from({ length: UNMEASURED_SHOWN + 5 }, (_, i) => `u${i}`);
    const many = {
      configurations: [entry('a'), ...keys.map((k) => entry(k))], best: null,
      excluded: [...keys.slice(1).map((key) => ({ key, why: 'no completed runs' })), { key: 'u0', why: 'every run failed' }],
    };
    expect(resultRows(many)).toEqual({ rows: [many.configurations[0]], folded: [{ why: 'no completed runs', count: keys.length - 1 }, { why: 'every run failed', count: 1 }] });
    expect(resultRows(many, true).rows).toHaveLength(keys.length + 1);
  });

  test("a search's untried candidates, counted by the API and not listed, are one folded line however few", () => {
    const search = { configurations: [entry('a')], best: null, excluded: [], unmeasured: { configurations: 49_994, list: '/v1/campaigns/c/configurations?measured=false' } };
    expect(resultRows(search)).toEqual({ rows: search.configurations, folded: [{ why: UNTRIED, count: 49_994 }] });
    expect(resultRows(search, true)).toEqual({ rows: search.configurations, folded: [{ why: UNTRIED, count: 49_994 }] });
    expect(resultRows({ ...search, unmeasured: { configurations: 0, list: 'x' } })).toEqual({ rows: search.configurations, folded: [] });
  });
});
