import { backoffDelay } from '@erg/backoff';
import { SSH_RECONNECT_BACKOFF } from '../src';

describe('SSH_RECONNECT_BACKOFF', () => {
  const noJitter = { ...SSH_RECONNECT_BACKOFF, jitter: 0 };
  it('doubles from 250 ms and caps at 30 s', () => {
    expect([0, 1, 2, 3, 4, 8, 20, 1000].map((n) => backoffDelay(n, noJitter))).toEqual([0, 250, 500, 1000, 2000, 30_000, 30_000, 30_000]);
  });

  it('jitters down to half the delay by default, never above the cap', () => {
    expect(backoffDelay(3, SSH_RECONNECT_BACKOFF, () => 0)).toBe(500);
    expect(backoffDelay(3, SSH_RECONNECT_BACKOFF, () => 0.999999)).toBe(1000);
    expect(backoffDelay(20, SSH_RECONNECT_BACKOFF, () => 0.999999)).toBe(30_000);
  });
});
