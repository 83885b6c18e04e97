import { footprintColumns, footprintNote, meanPlusMinus, formatCarbon, parseCsv, resultsCsv, runCarbonFacts, runCostFacts } from '@erg/web';
import { footprintResults, results, runCarbon, runCost, summary } from './fixtures';

describe('carbon and cost in the results table', () => {
  it('appear only where some configuration has them', () => {
    expect(footprintColumns(results())).toEqual([]);
    expect(footprintNote(results())).toBeNull();
    const carbonOnly = footprintResults();
    for (const c of carbonOnly.configurations) c.cost = summary(null, 0, 0);
    expect(footprintColumns(carbonOnly).map((c) => c.key)).toEqual(['carbon']);
  });

  it('are the mean per run ± the half-width of its 95 % interval, cost in the results\' currency', () => {
    const r = footprintResults();
    const [carbon, cost] = footprintColumns(r);
    expect([carbon!.header, cost!.header]).toEqual(['Carbon per run (± 95 %)', 'Cost per run, EUR (± 95 %)']);
    const [a, , c, d] = r.configurations;
    expect(carbon!.cell(a!)).toBe('120 gCO₂e ± 10.0 gCO₂e');
    expect(cost!.cell(a!)).toBe('0.0500 EUR ± 0.00400 EUR');
    expect(cost!.cell(c!)).toBe('—');
    expect(carbon!.cell(d!)).toBe('—');
    expect(meanPlusMinus(summary(12, 3, 1), formatCarbon)).toBe('12.0 gCO₂e');
    expect(footprintNote(r)).toBe(
      "Carbon is gCO₂e per run (the nodes' energy × the site's PUE × the grid's intensity), cost is per run in EUR (node-hours and kWh at the cluster's price); each run's page shows what its figures were computed with.",
    );
  });

  it('go into the results CSV as the CLI writes them, and the marks say C and M', () => {
    const [header, ...rows] = parseCsv(resultsCsv(footprintResults()));
    const col = (h: string) => header!.indexOf(h);
    for (const h of ['carbon_gco2e', 'carbon_ci95_low', 'cost', 'currency', 'best_carbon', 'best_cost']) expect(col(h)).toBeGreaterThan(0);
    const b = rows.find((r) => r[0] === 'n=1;w=2')!;
    expect([b[col('carbon_gco2e')], b[col('cost')], b[col('currency')], b[col('best_carbon')], b[col('marks')]]).toEqual(['80', '0.03', 'EUR', 'true', 'P E C M']);
    expect(parseCsv(resultsCsv(results()))[0]).not.toContain('carbon_gco2e');
  });
});

describe("a run's carbon and cost", () => {
  it('say the figure, how it was computed and where the intensity came from', () => {
    expect(runCarbonFacts(runCarbon())).toEqual([
      { term: 'Carbon', value: '0.500 gCO₂e' },
      { term: 'Computed as', value: '0.000833 kWh × PUE 1.50 × 400 gCO₂e/kWh' },
      { term: 'Intensity source', value: "series — the cluster's series covers the whole window" },
      { term: 'Series used', value: '2 points, covering 100.0 % of the window' },
    ]);
    const constant = runCarbonFacts(runCarbon({ source: 'constant', series: null, note: 'no series covers the window' }));
    expect(constant.map((f) => f.term)).toEqual(['Carbon', 'Computed as', 'Intensity source']);
    expect(constant[2]!.value).toBe('constant — no series covers the window');
  });

  it('say the total and each part the cluster prices', () => {
    expect(runCostFacts(runCost())).toEqual([
      { term: 'Cost', value: '0.00590 EUR' },
      { term: 'Node time', value: '0.00278 node-hours (1 node) × 2.00 EUR per node-hour = 0.00556 EUR' },
      { term: 'Energy', value: '0.000833 kWh × PUE 1.50 × 0.250 EUR per kWh = 0.000313 EUR' },
    ]);
    expect(runCostFacts(runCost({ perNodeHour: null, nodeTimeCost: null })).map((f) => f.term)).toEqual(['Cost', 'Energy']);
  });
});
