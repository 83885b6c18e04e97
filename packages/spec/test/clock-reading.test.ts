import { clockReading, MAX_CLOCK_READING_MS, SENT_AT_HEADER } from '../src';

describe('clockReading: what a push says of its agent\'s clock', () => {
  const received = 1_764_460_800_000;

  it('is sentAt − receivedAt: the offset less the one-way latency', () => {
    expect(SENT_AT_HEADER).toBe('x-erg-sent-at');
    expect(clockReading(String(received + 3_000), received)).toBe(3_000);
    expect(clockReading(`${received - 12}.250`, received)).toBe(-11.75);
  });

  it('is no reading for an absent, repeated or malformed header: the batch is never refused for it', () => {
    for (const header of [undefined, '', ' 1764460800000', '1764460800000ms', '-5', '1e12', '0x1A', 'NaN', '1764460800000.', '1.2.3', ['1764460800000', '1764460800001']]) {
      expect(clockReading(header, received)).toBeNull();
    }
  });

  it('is no reading more than a day off the server: seconds or microseconds sent for milliseconds', () => {
    expect(clockReading(String(received / 1000), received)).toBeNull();
    expect(clockReading(String(received * 1000), received)).toBeNull();
    expect(clockReading(String(received + MAX_CLOCK_READING_MS), received)).toBe(MAX_CLOCK_READING_MS);
    expect(clockReading(String(received + MAX_CLOCK_READING_MS + 1), received)).toBeNull();
  });
});
