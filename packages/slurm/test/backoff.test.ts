import { backoffDelayMs } from '../src';

describe('backoffDelayMs', () => {
  const noJitter = { jitter: 0 };
  it('doubles from 250 ms and caps at 30 s', () => {
    expect([0, 1, 2, 3, 4, 8, 20, 1000].map((n) => backoffDelayMs(n, noJitter))).toEqual([0, 250, 500, 1000, 2000, 30_000, 30_000, 30_000]);
  });

  it('jitters within ±20 % by default, never above the cap', () => {
    expect(backoffDelayMs(3, {}, () => 0)).toBe(800);
    expect(backoffDelayMs(3, {}, () => 1)).toBe(1200);
    expect(backoffDelayMs(20, {}, () => 1)).toBe(30_000);
  });
});
