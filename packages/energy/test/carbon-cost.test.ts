import { EnergyInputError, runCarbon, runCost, seriesIntensity, type IntensityPoint } from '../src';

const H = 3_600_000;
const T0 = Date.UTC(2026, 11, 4, 10);
/** Hourly values from 10:00: 100, 300, 200 gCO2e/kWh. */
const hourly: IntensityPoint[] = [
  { tMs: T0, gCO2ePerKWh: 100 },
  { tMs: T0 + H, gCO2ePerKWh: 300 },
  { tMs: T0 + 2 * H, gCO2ePerKWh: 200 },
];
const kWh = 3.6e6; // J

describe('seriesIntensity: a step series, time-weighted over the window', () => {
  test('a window inside one step takes that step\'s value', () => {
    expect(seriesIntensity(hourly, { startMs: T0 + 10 * 60_000, endMs: T0 + 50 * 60_000 })).toEqual({ gCO2ePerKWh: 100, coverage: 1, points: 1, firstMs: T0, lastMs: T0 });
  });

  test('a window across steps weighs each value by its time in the window', () => {
    // 10:30-11:30: half an hour at 100, half an hour at 300.
    const s = seriesIntensity(hourly, { startMs: T0 + H / 2, endMs: T0 + 1.5 * H })!;
    expect(s.gCO2ePerKWh).toBeCloseTo(200, 9);
    expect(s).toMatchObject({ coverage: 1, points: 2, firstMs: T0, lastMs: T0 + H });
    // 10:45-11:30: a quarter hour at 100, half an hour at 300 → (25 + 150) / 0.75.
    expect(seriesIntensity(hourly, { startMs: T0 + 0.75 * H, endMs: T0 + 1.5 * H })!.gCO2ePerKWh).toBeCloseTo(175 / 0.75, 9);
  });

  test('the last point holds for as long as the step before it, and no longer', () => {
    expect(seriesIntensity(hourly, { startMs: T0 + 2 * H + 60_000, endMs: T0 + 2.5 * H })).toMatchObject({ gCO2ePerKWh: 200, coverage: 1 });
    // 12:30-13:30: the series ends at 13:00, so it covers half the window.
    expect(seriesIntensity(hourly, { startMs: T0 + 2.5 * H, endMs: T0 + 3.5 * H })).toMatchObject({ gCO2ePerKWh: 200, coverage: 0.5 });
    expect(seriesIntensity(hourly, { startMs: T0 + 3 * H, endMs: T0 + 4 * H })).toBeNull();
  });

  test('a window before the series, an empty series and a lone point cover nothing', () => {
    expect(seriesIntensity(hourly, { startMs: T0 - H, endMs: T0 - 1 })).toBeNull();
    expect(seriesIntensity([], { startMs: T0, endMs: T0 + H })).toBeNull();
    expect(seriesIntensity([{ tMs: T0, gCO2ePerKWh: 50 }], { startMs: T0, endMs: T0 + H })).toBeNull();
  });

  test('a window of no length takes the value holding at its start', () => {
    expect(seriesIntensity(hourly, { startMs: T0 + H, endMs: T0 + H })).toMatchObject({ gCO2ePerKWh: 300, coverage: 1, points: 1 });
  });

  test('refuses a series out of time order and a reversed window', () => {
    expect(() => seriesIntensity([hourly[1]!, hourly[0]!], { startMs: T0, endMs: T0 + H })).toThrow(EnergyInputError);
    expect(() => seriesIntensity(hourly, { startMs: T0 + H, endMs: T0 })).toThrow(/before it starts/);
  });
});

describe('runCarbon: kWh × PUE × intensity', () => {
  const window = { startMs: T0 + H / 2, endMs: T0 + 1.5 * H };

  test('with a constant: 2 kWh at PUE 1.5 and 400 gCO2e/kWh is 1200 g', () => {
    expect(runCarbon({ energyJ: 2 * kWh, window, pue: 1.5, constant: 400, series: [] })).toEqual({
      gCO2e: 1200, energyKWh: 2, pue: 1.5, gCO2ePerKWh: 400, source: 'constant', series: null, note: "the cluster's constant",
    });
  });

  test('with a series covering the window: its time-weighted mean, the constant unused', () => {
    const c = runCarbon({ energyJ: 2 * kWh, window, pue: 1.2, constant: 999, series: hourly })!;
    expect(c.source).toBe('series');
    expect(c.gCO2ePerKWh).toBeCloseTo(200, 9);
    expect(c.gCO2e).toBeCloseTo(2 * 1.2 * 200, 9);
    expect(c.series).toEqual({ points: 2, firstMs: T0, lastMs: T0 + H, coverage: 1 });
    expect(c.note).toBe("the cluster's series over the window (time-weighted mean of 2 points)");
  });

  test('a series covering part of the window: the constant for the rest, else the series\' mean', () => {
    const late = { startMs: T0 + 2.5 * H, endMs: T0 + 3.5 * H }; // half covered, at 200
    const mixed = runCarbon({ energyJ: kWh, window: late, pue: 1, constant: 400, series: hourly })!;
    expect(mixed.gCO2ePerKWh).toBeCloseTo(300, 9);
    expect(mixed.series!.coverage).toBe(0.5);
    expect(mixed.note).toContain('covers 50.0 % of the window');
    const alone = runCarbon({ energyJ: kWh, window: late, pue: 1, constant: null, series: hourly })!;
    expect(alone.gCO2ePerKWh).toBe(200);
    expect(alone.note).toContain('its mean there stands for the rest');
  });

  test('a series that misses the window falls back to the constant, and says so', () => {
    const c = runCarbon({ energyJ: kWh, window: { startMs: T0 + 5 * H, endMs: T0 + 6 * H }, pue: 1, constant: 250, series: hourly })!;
    expect(c).toMatchObject({ source: 'constant', gCO2e: 250, note: "the cluster's constant: its series does not cover the window" });
  });

  test('without a constant and a series over the window there is no figure (null), never 0 g', () => {
    expect(runCarbon({ energyJ: kWh, window, pue: 1, constant: null, series: [] })).toBeNull();
    expect(runCarbon({ energyJ: kWh, window: { startMs: T0 - 2 * H, endMs: T0 - H }, pue: 1, constant: null, series: hourly })).toBeNull();
  });

  test('refuses a PUE below 1 and non-finite energy', () => {
    expect(() => runCarbon({ energyJ: kWh, window, pue: 0.9, constant: 1, series: [] })).toThrow(/at least 1/);
    expect(() => runCarbon({ energyJ: NaN, window, pue: 1, constant: 1, series: [] })).toThrow(EnergyInputError);
  });
});

describe('runCost: node-hours × perNodeHour + kWh × PUE × perKWh', () => {
  const base = { energyJ: 10 * kWh, timeS: 1800, nodes: 4, pue: 1.25 };

  test('per node-hour: 4 nodes for half an hour at 2.5 is 5', () => {
    expect(runCost({ ...base, price: { perNodeHour: 2.5, currency: 'EUR' } })).toEqual({
      total: 5, currency: 'EUR', nodes: 4, nodeHours: 2, perNodeHour: 2.5, nodeTimeCost: 5, energyKWh: 10, pue: 1.25, perKWh: null, energyCost: null,
    });
  });

  test('per kWh: 10 kWh at the nodes × PUE 1.25 at 0.2 is 2.5', () => {
    expect(runCost({ ...base, price: { perKWh: 0.2, currency: 'USD' } })).toMatchObject({ total: 2.5, currency: 'USD', nodeTimeCost: null, energyCost: 2.5 });
  });

  test('both add up', () => {
    const c = runCost({ ...base, price: { perNodeHour: 2.5, perKWh: 0.2, currency: 'CHF' } });
    expect(c.total).toBeCloseTo(7.5, 12);
    expect(c.nodeTimeCost! + c.energyCost!).toBeCloseTo(c.total, 12);
  });

  test('refuses a node count that is not a whole number', () => {
    expect(() => runCost({ ...base, nodes: 1.5, price: { perNodeHour: 1, currency: 'EUR' } })).toThrow(/whole number/);
  });
});
