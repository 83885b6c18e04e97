import { DEFAULT_OBJECTIVES as SPEC_DEFAULT, OBJECTIVES as SPEC_OBJECTIVES } from '@erg/spec';
import {
  availableObjectives, chooseObjective, DEFAULT_OBJECTIVES, objectiveInfo, objectivesQuery, OBJECTIVES, paretoLayout, resultsOnObjectives, usableObjectives,
  type CampaignResults,
} from '@erg/web';
import { footprintResults, results } from './fixtures';

describe('objectives of the Pareto plot', () => {
  it('are the API\'s, in its order, time and energy by default', () => {
    expect(OBJECTIVES).toEqual(SPEC_OBJECTIVES);
    expect(DEFAULT_OBJECTIVES).toEqual(SPEC_DEFAULT);
  });

  it('offer carbon and cost only where some configuration has them', () => {
    expect(availableObjectives(results())).toEqual(['time', 'energy', 'edp']);
    expect(availableObjectives(footprintResults())).toEqual(['time', 'energy', 'edp', 'carbon', 'cost']);
    const carbonOnly = footprintResults();
    for (const c of carbonOnly.configurations) c.cost = { ...c.cost, n: 0, mean: null, ci95: null };
    expect(availableObjectives(carbonOnly)).toEqual(['time', 'energy', 'edp', 'carbon']);
  });

  it('have their units on the axis titles: s, J, J·s, gCO₂e and the results\' currency', () => {
    const units = OBJECTIVES.map((o) => objectiveInfo(o, 'EUR').unit);
    expect(units).toEqual(['s', 'J', 'J·s', 'gCO₂e', 'EUR']);
    for (const o of OBJECTIVES) expect(objectiveInfo(o, 'EUR').axisLabel).toMatch(new RegExp(`\\(${objectiveInfo(o, 'EUR').unit}\\)$`));
    expect(objectiveInfo('carbon').axisLabel).toBe('mean carbon per run (gCO₂e)');
    expect(objectiveInfo('edp').name).toBe('EDP');
  });

  it('read as everywhere in erg; cost ticks leave the currency to the axis title', () => {
    expect(objectiveInfo('time').tick(12.5)).toBe('12.5 s');
    expect(objectiveInfo('energy').tick(1500)).toBe('1.50 kJ');
    expect(objectiveInfo('edp').tick(2000)).toBe('2.00 kJ·s');
    expect(objectiveInfo('carbon').tick(1500)).toBe('1.50 kgCO₂e');
    const cost = objectiveInfo('cost', 'USD');
    expect(cost.tick(0.02)).toBe('0.0200');
    expect(cost.tick(0)).toBe('0.00');
    expect(cost.format(12.3)).toBe('12.30 USD');
    expect(objectiveInfo('cost', null).axisLabel).toBe('mean cost per run (cost)');
  });

  it('stay two distinct objectives: choosing on one axis what the other shows swaps them', () => {
    expect(chooseObjective(['time', 'energy'], 1, 'carbon')).toEqual(['time', 'carbon']);
    expect(chooseObjective(['time', 'energy'], 0, 'cost')).toEqual(['cost', 'energy']);
    expect(chooseObjective(['time', 'energy'], 0, 'energy')).toEqual(['energy', 'time']);
    expect(chooseObjective(['time', 'energy'], 1, 'time')).toEqual(['energy', 'time']);
    expect(chooseObjective(['time', 'energy'], 1, 'energy')).toEqual(['time', 'energy']);
  });

  it('fall back to time and energy when a chosen one is no longer offered', () => {
    expect(usableObjectives(['time', 'carbon'], ['time', 'energy', 'edp'])).toEqual(DEFAULT_OBJECTIVES);
    expect(usableObjectives(['edp', 'time'], ['time', 'energy', 'edp'])).toEqual(['edp', 'time']);
  });

  it('are asked for with ?objectives= unless they are the default', () => {
    expect(objectivesQuery(['time', 'energy'])).toBe('');
    expect(objectivesQuery(['time', 'carbon'])).toBe('?objectives=time,carbon');
    expect(objectivesQuery(['energy', 'time'])).toBe('?objectives=energy,time');
  });

  it('draw from the results decided on them: the page\'s for the default, else the answer for that pair once it came', () => {
    const page = results();
    const onCarbon = { ...footprintResults(), objectives: ['time', 'carbon'] } as CampaignResults;
    expect(resultsOnObjectives(['time', 'energy'], page, onCarbon)).toBe(page);
    expect(resultsOnObjectives(['time', 'carbon'], page, onCarbon)).toBe(onCarbon);
    // The answer for the pair chosen before is not drawn under the new pair's axes.
    expect(resultsOnObjectives(['time', 'cost'], page, onCarbon)).toBeNull();
    expect(resultsOnObjectives(['time', 'cost'], page, null)).toBeNull();
  });
});

describe('the Pareto plot on other objectives', () => {
  const onCarbon = (): CampaignResults => ({ ...footprintResults(), objectives: ['time', 'carbon'], paretoFront: ['n=1;w=1', 'n=1;w=2'] });

  it('puts the first objective on x and the second on y, with their titles and ticks', () => {
    const L = paretoLayout(onCarbon());
    expect(L.objectives).toEqual(['time', 'carbon']);
    expect([L.x.axisLabel, L.y.axisLabel]).toEqual(['mean time to solution (s)', 'mean carbon per run (gCO₂e)']);
    const a = L.points.find((p) => p.key === 'n=1;w=1')!;
    const b = L.points.find((p) => p.key === 'n=1;w=2')!;
    expect([a.xValue, a.yValue, b.xValue, b.yValue]).toEqual([10, 120, 20, 80]);
    expect(b.y).toBeGreaterThan(a.y); // less carbon: lower
    expect(L.front.split(' ')).toHaveLength(2);
  });

  it('never puts an axis below 0: a carbon interval reaching below 0 is cut at the axis and flagged', () => {
    const L = paretoLayout(onCarbon());
    // n=2;w=1: 150 gCO₂e ± 400 over two runs.
    const c = L.points.find((p) => p.key === 'n=2;w=1')!;
    expect(c).toMatchObject({ yClipped: true, xClipped: false });
    expect(c.yBar[1]).toBeCloseTo(L.plot.bottom, 6);
    expect(L.yDomain[0]).toBe(0);
    for (const t of [...L.xTicks, ...L.yTicks]) expect(t.value).toBeGreaterThanOrEqual(0);
  });

  it('starts the plot right of its longest y tick, so the ticks stay clear of the axis title', () => {
    const L = paretoLayout(onCarbon());
    const longest = Math.max(...L.yTicks.map((t) => L.y.tick(t.value).length));
    expect(L.y.tick(L.yTicks[1]!.value)).toMatch(/ gCO₂e$/);
    // The title is ~20 px wide at the left edge; the ticks end 6 px left of the axis.
    expect(L.plot.left - 6 - longest * 6.5).toBeGreaterThanOrEqual(20);
    expect(paretoLayout(results()).plot.left).toBeLessThan(L.plot.left);
  });

  it('labels the least-carbon and cheapest configurations only where carbon or cost is on an axis', () => {
    const labels = (r: CampaignResults) => Object.fromEntries(paretoLayout(r).points.map((p) => [p.key, p.label]));
    expect(labels(onCarbon())['n=1;w=2']).toBe('least energy · least carbon');
    expect(labels({ ...footprintResults(), objectives: ['time', 'energy'] })['n=1;w=2']).toBe('least energy');
    expect(labels({ ...footprintResults(), objectives: ['cost', 'carbon'] })['n=1;w=2']).toBe('least energy · least carbon · cheapest');
  });

  it('leaves out configurations without a figure of an objective', () => {
    // n=2;w=1 has no cost.
    const L = paretoLayout({ ...footprintResults(), objectives: ['time', 'cost'], paretoFront: ['n=1;w=1', 'n=1;w=2'] });
    expect(L.points.map((p) => p.key)).toEqual(['n=1;w=1', 'n=1;w=2']);
    expect(L.y.axisLabel).toBe('mean cost per run (EUR)');
    expect(L.points[0]!.yValue).toBe(0.05);
  });
});
