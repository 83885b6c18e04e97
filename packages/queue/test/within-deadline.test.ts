import { ErgError } from '@erg/spec';
import { RedisUnavailableError, withinDeadline } from '../src';

describe('withinDeadline', () => {
  test('gives the answer when Redis answers in time', async () => {
    await expect(withinDeadline(Promise.resolve('OK'), 1_000)).resolves.toBe('OK');
  });

  test("past the deadline, fails with RedisUnavailableError: one of erg's errors, retryable", async () => {
    const err = await withinDeadline(new Promise(() => undefined), 10).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RedisUnavailableError);
    expect(err).toBeInstanceOf(ErgError);
    expect(err).toMatchObject({ code: 'ERG_REDIS_UNAVAILABLE', status: 503, retryable: true, message: 'Redis did not answer within 10 ms' });
  });
});
