import { countedFigures, type StoredFigures } from '../src';

const measured: StoredFigures = { timeS: 10, energyJ: 1000, edpJs: 10_000, ed2pJs2: 100_000, avgPowerW: 100, coverage: 1, components: { gpu: 1000 } };

describe('countedFigures: the one rule for which runs count in results and verdicts', () => {
  test('a measured run counts with every figure', () => {
    expect(countedFigures(measured)).toEqual({ figures: { timeS: 10, energyJ: 1000, edpJs: 10_000, ed2pJs2: 100_000, avgPowerW: 100, components: { gpu: 1000 } }, leftOut: null });
  });

  test('a run without power samples in its window keeps its time, never 0 J', () => {
    const unmeasured = { ...measured, energyJ: 0, edpJs: 0, ed2pJs2: 0, avgPowerW: 0, coverage: 0, components: {} };
    expect(countedFigures(unmeasured)).toEqual({
      figures: { timeS: 10, energyJ: null, edpJs: null, ed2pJs2: null, avgPowerW: null },
      leftOut: { what: 'energy', why: 'no power samples inside its window' },
    });
  });

  test('a measured 0 J is left out too, saying so', () => {
    expect(countedFigures({ ...measured, energyJ: 0 }).leftOut).toEqual({ what: 'energy', why: 'its measured energy is 0 J' });
  });

  test('a run with no stored figures, or an empty window, is left out whole', () => {
    expect(countedFigures(null)).toEqual({ figures: { timeS: null, energyJ: null, edpJs: null, ed2pJs2: null, avgPowerW: null }, leftOut: { what: 'run', why: 'no telemetry reached erg for its window, so it has no figures' } });
    expect(countedFigures({ ...measured, timeS: 0 }).leftOut).toEqual({ what: 'run', why: 'its workload window is empty (0 s)' });
  });
});

describe('countedFigures: carbon and cost', () => {
  const priced = { ...measured, carbonG: 42, costTotal: 1.5, costCurrency: 'EUR' };

  test('a measured run counts its carbon and its cost', () => {
    expect(countedFigures({ ...priced, costPerKWh: 0.2 }).figures).toMatchObject({ carbonG: 42, cost: 1.5, costCurrency: 'EUR' });
  });

  test('a run without carbon or cost figures (no cluster settings) has none, not 0', () => {
    const { figures } = countedFigures({ ...measured, carbonG: null, costTotal: null, costCurrency: null, costPerKWh: null });
    expect(figures).not.toHaveProperty('carbonG');
    expect(figures).not.toHaveProperty('cost');
  });

  test('a run whose energy does not count loses its carbon, and its cost where the price is per kWh', () => {
    const unmeasured = { ...priced, coverage: 0 };
    expect(countedFigures({ ...unmeasured, costPerKWh: 0.2 }).figures).not.toHaveProperty('cost');
    expect(countedFigures({ ...unmeasured, costPerKWh: 0.2 }).figures).not.toHaveProperty('carbonG');
    // Priced per node-hour only: the time is all the cost needs.
    expect(countedFigures({ ...unmeasured, costPerKWh: null }).figures).toMatchObject({ timeS: 10, energyJ: null, cost: 1.5, costCurrency: 'EUR' });
    expect(countedFigures({ ...unmeasured, costPerKWh: null }).figures).not.toHaveProperty('carbonG');
  });
});

describe('countedFigures: invalid runs', () => {
  const invalid = { valid: false, excluded: false, reasons: ['longest gap 20.1 s > 3 s at n1 cpu0.power'], failed: ['longest_gap' as const] };

  test('an invalid run counts, flagged, unless its campaign or the reader leaves it out', () => {
    expect(countedFigures({ ...measured, flags: ['invalid'], validity: invalid })).toEqual({ figures: { ...countedFigures(measured).figures, flags: ['invalid'] }, leftOut: null });
  });

  test("the campaign's validity.excludeInvalid leaves it out whole, with its reasons", () => {
    expect(countedFigures({ ...measured, validity: { ...invalid, excluded: true } })).toEqual({
      figures: { timeS: null, energyJ: null, edpJs: null, ed2pJs2: null, avgPowerW: null },
      leftOut: { what: 'run', why: 'invalid measurement (validity.excludeInvalid): longest gap 20.1 s > 3 s at n1 cpu0.power' },
    });
  });

  test('valid runs only (?valid=only) leaves out invalid runs, never valid or unchecked ones', () => {
    expect(countedFigures({ ...measured, validity: invalid }, { validOnly: true }).leftOut).toEqual({ what: 'run', why: 'invalid measurement (valid runs only): longest gap 20.1 s > 3 s at n1 cpu0.power' });
    expect(countedFigures({ ...measured, validity: { ...invalid, valid: true, reasons: [], failed: [] } }, { validOnly: true }).leftOut).toBeNull();
    expect(countedFigures({ ...measured, validity: null }, { validOnly: true }).leftOut).toBeNull();
  });
});
