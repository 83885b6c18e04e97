import { formatElapsed, formatEnergy, formatPercent, formatPower, formatTime, NO_VALUE, secondsSince, toMs, withPrefix } from '@erg/web';

describe('units', () => {
  it('writes three significant digits with an SI prefix', () => {
    expect(formatEnergy(46)).toBe('46.0 J');
    expect(formatEnergy(12_345)).toBe('12.3 kJ');
    expect(formatEnergy(999.5)).toBe('1.00 kJ');
    expect(formatPower(0.0123)).toBe('12.3 mW');
    expect(withPrefix(0, 'W')).toBe('0 W');
    expect(formatEnergy(null)).toBe(NO_VALUE);
    expect(formatPower(Number.NaN)).toBe(NO_VALUE);
  });

  it('writes durations like the CLI', () => {
    expect(formatTime(0.223)).toBe('223 ms');
    expect(formatTime(3.214)).toBe('3.21 s');
    expect(formatTime(59.96)).toBe('1 min 00 s');
    expect(formatTime(3725)).toBe('1 h 02 min');
    expect(formatElapsed(42.4)).toBe('42 s');
    expect(formatElapsed(65)).toBe('1 min 05 s');
    expect(formatElapsed(-3)).toBe('0 s');
    expect(formatPercent(0.1234)).toBe('12.3 %');
    expect(formatPercent(-0.0004)).toBe('0.0 %');
  });

  it('reads times as Unix ms or ISO 8601', () => {
    expect(toMs('2026-11-30T03:00:00.000Z')).toBe(Date.UTC(2026, 10, 30, 3));
    expect(toMs(1764480000000)).toBe(1764480000000);
    expect(toMs('1764480000000')).toBe(1764480000000);
    expect(toMs('nope')).toBeNull();
    expect(toMs(null)).toBeNull();
    expect(secondsSince('2026-11-30T03:00:00.000Z', Date.UTC(2026, 10, 30, 3, 1))).toBe(60);
  });
});
