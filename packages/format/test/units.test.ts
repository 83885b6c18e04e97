import {
  formatByteRate, formatBytes, formatCarbon, formatCost, formatEdp, formatElapsed, formatEnergy, formatIntensity, formatJoulesPerGB, formatNumber, linkKindLabel, formatP, formatPercent, formatPower, formatTime, formatWh, NO_VALUE,
  plural, whIsHelpful, withPrefix,
} from '@erg/format';

describe('energy', () => {
  test.each([
    [0, '0 J'],
    [1, '1.00 J'],
    [46.028370345993835, '46.0 J'],
    [143.2, '143 J'],
    [999.4, '999 J'],
    [999.5, '1.00 kJ'],
    [1000, '1.00 kJ'],
    [12_345, '12.3 kJ'],
    [999_500, '1.00 MJ'],
    [2.5e9, '2.50 GJ'],
    [0.5, '500 mJ'],
    [-1500, '-1.50 kJ'],
    [-999.5, '-1.00 kJ'],
  ])('%p J → %s', (joules, text) => {
    expect(formatEnergy(joules)).toBe(text);
  });

  test.each([null, undefined, Number.NaN, Number.POSITIVE_INFINITY])('%p → —', (value) => {
    expect(formatEnergy(value)).toBe(NO_VALUE);
    expect(formatTime(value)).toBe(NO_VALUE);
    expect(formatPower(value)).toBe(NO_VALUE);
    expect(formatEdp(value)).toBe(NO_VALUE);
    expect(formatWh(value)).toBe(NO_VALUE);
    expect(formatElapsed(value)).toBe(NO_VALUE);
    expect(formatPercent(value)).toBe(NO_VALUE);
    expect(formatP(value)).toBe(NO_VALUE);
  });

  test('beyond the largest prefix the mantissa grows instead of switching to exponents', () => {
    expect(withPrefix(5e15, 'J')).toBe('5000 TJ');
  });

  test('watt-hours, and when they help', () => {
    expect(formatWh(12_300)).toBe('3.42 Wh');
    expect(formatWh(3600)).toBe('1.00 Wh');
    expect(formatWh(3.6e6)).toBe('1.00 kWh');
    expect(whIsHelpful(3599)).toBe(false);
    expect(whIsHelpful(3600)).toBe(true);
    expect(whIsHelpful(null)).toBe(false);
  });
});

describe('power and EDP', () => {
  test.each([
    [206.39, '206 W'],
    [1200, '1.20 kW'],
    [0, '0 W'],
    [-5, '-5.00 W'],
  ])('%p W → %s', (watts, text) => expect(formatPower(watts)).toBe(text));

  test.each([
    [10.287, '10.3 J·s'],
    [4560, '4.56 kJ·s'],
    [7.1e6, '7.10 MJ·s'],
    [999.5, '1.00 kJ·s'],
  ])('%p J·s → %s', (js, text) => expect(formatEdp(js)).toBe(text));
});

describe('time', () => {
  test.each([
    [0, '0 s'],
    [0.00085, '850 µs'],
    [0.2227880859375, '223 ms'],
    [0.9996, '1.00 s'],
    [3.2149, '3.21 s'],
    [59.94, '59.9 s'],
    [59.96, '1 min 00 s'],
    [65, '1 min 05 s'],
    [3599.4, '59 min 59 s'],
    [3599.6, '1 h 00 min'],
    [3720, '1 h 02 min'],
    [86_399, '1 d 00 h'],
    [2 * 86_400 + 3 * 3600, '2 d 03 h'],
    [-3.2149, '-3.21 s'],
    [-65, '-1 min 05 s'],
  ])('%p s → %s', (seconds, text) => {
    expect(formatTime(seconds)).toBe(text);
  });

  test.each([
    [0, '0 s'],
    [0.4, '0 s'],
    [42.4, '42 s'],
    [59.6, '1 min 00 s'],
    [3720, '1 h 02 min'],
  ])('elapsed %p s → %s', (seconds, text) => expect(formatElapsed(seconds)).toBe(text));
});

describe('percentages, p-values, counts', () => {
  test('percent with and without a sign', () => {
    expect(formatPercent(0.1234)).toBe('12.3 %');
    expect(formatPercent(0.1234, { signed: true })).toBe('+12.3 %');
    expect(formatPercent(-0.05, { signed: true })).toBe('-5.0 %');
    expect(formatPercent(-0.0004, { signed: true })).toBe('±0.0 %');
    expect(formatPercent(0, { signed: true })).toBe('±0.0 %');
    expect(formatPercent(-0.0004)).toBe('0.0 %');
  });

  test('p-values', () => {
    expect(formatP(0.0123456)).toBe('0.0123');
    expect(formatP(0.00001)).toBe('< 0.0001');
    expect(formatP(1)).toBe('1.0000');
  });

  test('plural', () => {
    expect(plural(1, 'run')).toBe('1 run');
    expect(plural(12_345, 'run')).toBe('12,345 runs');
    expect(plural(0, 'configuration')).toBe('0 configurations');
  });
});

describe('carbon and cost', () => {
  test.each([
    [0, '0 gCO₂e'],
    [0.512, '0.512 gCO₂e'],
    [0.0123, '0.0123 gCO₂e'],
    [8.6100001, '8.61 gCO₂e'],
    [999.5, '1.00 kgCO₂e'],
    [12_345, '12.3 kgCO₂e'],
    [4_560_000, '4.56 tCO₂e'],
    [5e12, '5000000 tCO₂e'],
  ])('%p g → %s (prefixes g, kg, t)', (grams, text) => {
    expect(formatCarbon(grams)).toBe(text);
  });

  test.each([
    [12.3, 'EUR', '12.30 EUR'],
    [1234.5, 'USD', '1,234.50 USD'],
    [0.9996, 'EUR', '1.00 EUR'],
    [0.0854, 'EUR', '0.0854 EUR'],
    [0.00738, 'CHF', '0.00738 CHF'],
    [0, 'EUR', '0.00 EUR'],
    [12.3, null, '12.30'],
  ])('%p %s → %s: cents from 1 up, three significant digits below', (amount, currency, text) => {
    expect(formatCost(amount, currency)).toBe(text);
  });

  test('intensities and the plain factors of a product', () => {
    expect(formatIntensity(312.5)).toBe('313 gCO₂e/kWh');
    expect(formatIntensity(56.78)).toBe('56.8 gCO₂e/kWh');
    expect(formatNumber(2 * 61.5 / 3600)).toBe('0.0342');
    expect(formatNumber(1.2)).toBe('1.20');
    expect(formatNumber(1234.5)).toBe('1230');
  });

  test.each([null, undefined, Number.NaN])('%p → —', (value) => {
    expect(formatCarbon(value)).toBe(NO_VALUE);
    expect(formatCost(value, 'EUR')).toBe(NO_VALUE);
    expect(formatIntensity(value)).toBe(NO_VALUE);
    expect(formatNumber(value)).toBe(NO_VALUE);
  });
});

describe('data movement', () => {
  test.each([
    [0, '0 B'],
    [512, '512 B'],
    [12_345_678_901, '12.3 GB'],
    [999.6e9, '1.00 TB'],
  ])('%p bytes → %s (decimal prefixes, as link bandwidths are quoted)', (bytes, text) => {
    expect(formatBytes(bytes)).toBe(text);
  });

  test('rates and J per GB', () => {
    expect(formatByteRate(2e9)).toBe('2.00 GB/s');
    expect(formatByteRate(450e6)).toBe('450 MB/s');
    expect(formatJoulesPerGB(45.04)).toBe('45.0 J/GB');
    expect(formatJoulesPerGB(1204)).toBe('1.20 kJ/GB');
    expect(formatJoulesPerGB(null)).toBe(NO_VALUE);
  });
});

test('kinds of link read as people name them; an unknown one as it is', () => {
  expect(['pcie', 'nvlink', 'c2c', 'memory', 'infiniband', 'network', 'cxl'].map(linkKindLabel)).toEqual(['PCIe', 'NVLink', 'NVLink-C2C', 'host memory', 'InfiniBand', 'network', 'cxl']);
});
