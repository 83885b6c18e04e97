import {
  CarbonIntensityPut, carbonIntensityIssues, carbonPointMs, ClusterCarbon, ClusterCreate, ClusterPrice, humanErrorMap, issuesFromZodError, ObjectivesQuery, parseObjectives,
} from '../src';
import type { ZodType } from 'zod';

/** The issues the API would answer with (path, code, message), or [] when it parses. */
function issues(schema: ZodType, value: unknown) {
  const r = schema.safeParse(value, { error: humanErrorMap });
  return r.success ? [] : issuesFromZodError(r.error);
}
const paths = (schema: ZodType, value: unknown) => issues(schema, value).map((i) => i.path);

describe('a cluster\'s carbon settings', () => {
  test('a constant and a PUE; the PUE defaults to 1; the constant may be left to the series', () => {
    expect(ClusterCarbon.parse({ gCO2ePerKWh: 350, pue: 1.2 })).toEqual({ gCO2ePerKWh: 350, pue: 1.2 });
    expect(ClusterCarbon.parse({ gCO2ePerKWh: 0 })).toEqual({ gCO2ePerKWh: 0, pue: 1 });
    expect(ClusterCarbon.parse({ pue: 1.1 })).toEqual({ pue: 1.1 });
  });

  test('a PUE below 1, an intensity out of range or of the wrong type name the field and say what fits', () => {
    expect(issues(ClusterCarbon, { pue: 0.9 })).toEqual([{ path: 'pue', code: 'too_small', message: expect.stringContaining('at least 1') }]);
    expect(issues(ClusterCarbon, { gCO2ePerKWh: 350_000 })).toEqual([{ path: 'gCO2ePerKWh', code: 'too_big', message: expect.stringContaining('per kWh, not per MWh') }]);
    expect(issues(ClusterCarbon, { gCO2ePerKWh: -1 })[0]).toMatchObject({ path: 'gCO2ePerKWh', code: 'too_small' });
    expect(issues(ClusterCarbon, { gCO2ePerKWh: '350' })[0]).toMatchObject({ path: 'gCO2ePerKWh', code: 'invalid_type' });
    expect(paths(ClusterCarbon, { gCO2ePerKWh: 1, series: [] })).toEqual(['series']);
  });
});

describe('a cluster\'s price', () => {
  test('per node-hour, per kWh or both, in an ISO 4217 currency', () => {
    expect(ClusterPrice.parse({ perNodeHour: 2.5, currency: 'EUR' })).toEqual({ perNodeHour: 2.5, currency: 'EUR' });
    expect(ClusterPrice.parse({ perKWh: 0.3, perNodeHour: 0, currency: 'USD' })).toEqual({ perKWh: 0.3, perNodeHour: 0, currency: 'USD' });
  });

  test('a price needs one of the two, and says so at price', () => {
    expect(issues(ClusterCreate.shape.price, { currency: 'EUR' })).toEqual([{ path: '(root)', code: 'custom', message: expect.stringContaining('give perNodeHour, perKWh or both') }]);
  });

  test('a currency that is not an ISO 4217 code, a negative price: each named', () => {
    expect(issues(ClusterPrice, { perKWh: 1, currency: 'eur' })).toEqual([{ path: 'currency', code: 'invalid_format', message: expect.stringContaining('three upper-case letters such as EUR') }]);
    expect(issues(ClusterPrice, { perKWh: 1, currency: 'EUX' })).toEqual([{ path: 'currency', code: 'custom', message: '"EUX" is not an ISO 4217 currency code (such as EUR, USD or CHF)' }]);
    expect(issues(ClusterPrice, { perKWh: -1, perNodeHour: 1, currency: 'EUR' })[0]).toMatchObject({ path: 'perKWh', code: 'too_small' });
    expect(paths(ClusterPrice, { perKWh: 1 })).toEqual(['currency']);
  });

  test('in a cluster body, carbon and price default to null and their issues carry their paths', () => {
    const body = { name: 'c', host: 'h', user: 'u', privateKey: '-----BEGIN OPENSSH PRIVATE KEY-----\nx\n-----END OPENSSH PRIVATE KEY-----', workDir: '/w' };
    expect(ClusterCreate.parse(body)).toMatchObject({ carbon: null, price: null });
    expect(paths(ClusterCreate, { ...body, carbon: { pue: 0 }, price: { currency: 'EUR' } }).sort()).toEqual(['carbon.pue', 'price']);
    expect(paths(ClusterCreate, { ...body, price: { perNodeHour: 1, currency: 'dollars' } })).toEqual(['price.currency']);
  });
});

describe('a carbon intensity series', () => {
  test('times as ISO 8601 with an offset or Unix ms; seconds are refused with a hint', () => {
    expect(carbonPointMs('2026-12-04T12:00:00Z')).toEqual({ ms: Date.UTC(2026, 11, 4, 12) });
    expect(carbonPointMs('2026-12-04T13:00:00+01:00')).toEqual({ ms: Date.UTC(2026, 11, 4, 12) });
    expect(carbonPointMs(Date.UTC(2026, 11, 4))).toEqual({ ms: Date.UTC(2026, 11, 4) });
    expect(carbonPointMs(Date.UTC(2026, 11, 4) / 1000)).toEqual({ why: expect.stringContaining('looks like Unix seconds') });
    expect(carbonPointMs('2026-12-04 12:00')).toEqual({ why: expect.stringContaining('ISO 8601') });
    expect(carbonPointMs('2026-12-04T12:00:00')).toEqual({ why: expect.stringContaining('with its offset') });
  });

  test('each bad point is named by its index and field', () => {
    const body = { points: [{ t: '2026-12-04T12:00:00Z', gCO2ePerKWh: 300 }, { t: 1_764_849_600, gCO2ePerKWh: 300 }, { t: true, gCO2ePerKWh: -5 }, { t: '2026-12-04T13:00:00Z' }] };
    expect(paths(CarbonIntensityPut, body)).toEqual(['points[1].t', 'points[2].t', 'points[2].gCO2ePerKWh', 'points[3].gCO2ePerKWh']);
    expect(issues(CarbonIntensityPut, body)[1]!.message).toBe('expected a string or a number, got boolean');
  });

  test('bounded: at most 10,000 points a request, refused by their number', () => {
    const many = Array.from({ length: 10_001 }, (_, i) => ({ t: Date.UTC(2026, 0, 1) + i * 3_600_000, gCO2ePerKWh: 1 }));
    expect(issues(CarbonIntensityPut, { points: many })).toEqual([{ path: 'points', code: 'too_big', message: expect.stringContaining('at most 10000 points') }]);
    expect(CarbonIntensityPut.parse({ points: many.slice(1) }).replace).toBe(false);
  });

  test('two points at the same time (however written) are refused at the second', () => {
    expect(carbonIntensityIssues([
      { t: '2026-12-04T12:00:00Z', gCO2ePerKWh: 1 }, { t: '2026-12-04T13:00:00Z', gCO2ePerKWh: 1 }, { t: Date.UTC(2026, 11, 4, 12), gCO2ePerKWh: 2 },
    ])).toEqual([{ path: 'points[2].t', code: 'duplicate_value', message: 'the same time as points[0] (2026-12-04T12:00:00.000Z): give each time one value' }]);
  });
});

describe('objectives', () => {
  test('any two distinct of time, energy, edp, carbon, cost; absent: time,energy', () => {
    expect(ObjectivesQuery.parse(undefined)).toEqual(['time', 'energy']);
    expect(ObjectivesQuery.parse('time,carbon')).toEqual(['time', 'carbon']);
    expect(ObjectivesQuery.parse(' cost , edp ')).toEqual(['cost', 'edp']);
  });

  test.each(['time', 'time,time', 'time,energy,cost', 'time,co2', '', 'Time,energy'])('%j is refused, saying what fits', (text) => {
    const r = parseObjectives(text);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.message).toContain('two distinct objectives separated by a comma, of time, energy, edp, carbon, cost (e.g. time,carbon)');
    expect(paths(ObjectivesQuery, text)).toEqual(['(root)']);
  });

  test('an unknown one is named', () => {
    expect(parseObjectives('time,co2')).toEqual({ ok: false, message: expect.stringMatching(/^"co2" is not an objective: /) });
  });
});
