// Abuse limits: per-token rate limits on mutations (Redis, shared by API instances) with their own
// bucket for telemetry, and per-route body limits.
import { randomUUID } from 'node:crypto';
import { createApiToken } from '@erg/db';
import { startTestApi, type TestApi } from './helpers';

const json = { 'content-type': 'application/json' };

/** A JSON body of exactly `bytes` bytes. */
function bodyOf(bytes: number): string {
  const head = '{"pad":"';
  return head + 'a'.repeat(bytes - head.length - 2) + '"}';
}

describe('rate limits per token', () => {
  let t: TestApi;
  const inject = (method: string, url: string, token: string, payload?: string) =>
    t.app.inject({ method: method as 'POST', url, headers: { authorization: `Bearer ${token}`, ...(payload ? json : {}) }, ...(payload ? { payload } : {}) });

  beforeAll(async () => {
    t = await startTestApi({ ERG_RATE_LIMIT_MUTATIONS: '3', ERG_RATE_LIMIT_TELEMETRY: '5' });
  });
  afterAll(async () => {
    await t.close();
  });

  test('the 4th mutation in a minute is refused with 429, Retry-After and RateLimit headers; reads and other tokens are not limited', async () => {
    const cancel = `/v1/campaigns/${randomUUID()}/cancel`;
    for (let i = 0; i < 3; i++) {
      const res = await inject('POST', cancel, t.token);
      expect(res.statusCode).toBe(404); // counted, whatever the answer
      expect(res.headers['ratelimit-limit']).toBe('3');
      expect(res.headers['ratelimit-remaining']).toBe(String(2 - i));
    }
    const refused = await inject('POST', cancel, t.token);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.code).toBe('ERG_RATE_LIMITED');
    expect(refused.json().error.message).toMatch(/limit is 3 a minute; retry in \d+ s/);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    expect(Number(refused.headers['ratelimit-reset'])).toBe(retryAfter);
    // Another mutating method on another route shares the bucket.
    expect((await inject('PUT', '/v1/clusters/nope', t.token, '{}')).statusCode).toBe(429);

    // Reads are not limited, and carry no RateLimit headers.
    for (let i = 0; i < 10; i++) {
      const res = await inject('GET', '/v1/campaigns', t.token);
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-limit']).toBeUndefined();
    }

    // Another token has its own bucket.
    const other = (await createApiToken(t.db, 'other')).token;
    const res = await inject('POST', cancel, other);
    expect(res.statusCode).toBe(404);
    expect(res.headers['ratelimit-remaining']).toBe('2');

    // Telemetry ingest has its own, higher bucket: not refused although the mutation bucket is spent.
    const telemetry = `/v1/runs/${randomUUID()}/telemetry`;
    for (let i = 0; i < 5; i++) {
      const r = await inject('POST', telemetry, t.token, '{}');
      expect(r.statusCode).not.toBe(429);
      expect(r.headers['ratelimit-limit']).toBe('5');
    }
    const sixth = await inject('POST', telemetry, t.token, '{}');
    expect(sixth.statusCode).toBe(429);
    expect(sixth.json().error.message).toContain('telemetry batches');
  });

  test('unauthenticated requests are refused with 401 before they are counted', async () => {
    const res = await t.app.inject({ method: 'POST', url: `/v1/campaigns/${randomUUID()}/cancel` });
    expect(res.statusCode).toBe(401);
    expect(res.headers['ratelimit-limit']).toBeUndefined();
  });
});

describe('body limits per route', () => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi();
  });
  afterAll(async () => {
    await t.close();
  });

  const KiB = 1024;
  const MiB = 1024 * KiB;
  const id = randomUUID();
  test.each([
    ['POST', '/v1/campaigns', MiB, '1 MiB'],
    ['POST', '/v1/suites', MiB, '1 MiB'],
    ['PUT', '/v1/suites/nightly', MiB, '1 MiB'],
    ['POST', '/v1/clusters', 64 * KiB, '64 KiB'],
    ['PUT', '/v1/clusters/alpha', 64 * KiB, '64 KiB'],
    ['POST', `/v1/campaigns/${id}/cancel`, 16 * KiB, '16 KiB'],
    ['POST', '/v1/suites/nightly/trigger', 16 * KiB, '16 KiB'],
    ['POST', `/v1/runs/${id}/finish`, 16 * KiB, '16 KiB'],
  ])('%s %s: one byte over %d is refused with 413 naming the limit; at the limit it is not', async (method, url, limit, named) => {
    const over = await t.app.inject({ method: method as 'POST', url, headers: { authorization: `Bearer ${t.token}`, ...json }, payload: bodyOf(limit + 1) });
    expect(over.statusCode).toBe(413);
    expect(over.json().error).toEqual({
      code: 'FST_ERR_CTP_BODY_TOO_LARGE',
      message: expect.stringContaining(`larger than ${named}, the limit of ${method} `),
    });
    const at = await t.app.inject({ method: method as 'POST', url, headers: { authorization: `Bearer ${t.token}`, ...json }, payload: bodyOf(limit) });
    expect(at.statusCode).not.toBe(413);
  });

  test('telemetry ingest has a 16 MiB limit (of the inflated body): room for the largest batch, 200,000 samples', async () => {
    const url = `/v1/runs/${id}/telemetry`;
    const at = await t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${t.token}`, ...json }, payload: bodyOf(16 * MiB) });
    expect(at.statusCode).not.toBe(413);
    const over = await t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${t.token}`, ...json }, payload: bodyOf(16 * MiB + 1) });
    expect(over.statusCode).toBe(413);
    expect(over.json().error.message).toContain('16 MiB');
  });
});
