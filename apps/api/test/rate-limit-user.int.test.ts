// Rate limits count per user as well as per token: minting a new token does not buy a fresh bucket.
import { randomUUID } from 'node:crypto';
import { createApiToken, createUser } from '@erg/db';
import { startTestApi, type TestApi } from './helpers';

describe('rate limits per user and per token (Postgres + Redis)', () => {
  let t: TestApi;
  const cancel = () => `/v1/campaigns/${randomUUID()}/cancel`;
  const post = (token: string, url: string) => t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${token}` } });
  const users = new Map<string, string>();
  // Minted straight in the database: through the API they would count against the admin's own buckets.
  const tokenFor = async (user: string, name: string) => (await createApiToken(t.db, name, { userId: users.get(user)! })).token;

  beforeAll(async () => {
    t = await startTestApi({ ERG_RATE_LIMIT_MUTATIONS: '3', ERG_RATE_LIMIT_USER_MUTATIONS: '5' });
    for (const name of ['ada', 'bob']) users.set(name, (await createUser(t.db, { name })).id);
  });
  afterAll(async () => {
    await t.close();
  });

  test('a second token of the same user shares the user\'s bucket: the 6th change of the user is refused', async () => {
    const first = await tokenFor('ada', 'first');
    for (let i = 0; i < 3; i++) expect((await post(first, cancel())).statusCode).toBe(404);
    // The token's own bucket is spent ...
    const fourth = await post(first, cancel());
    expect(fourth.statusCode).toBe(429);
    expect(fourth.json().error.message).toContain('with this token');

    // ... and a new token starts with what is left of ada's.
    const second = await tokenFor('ada', 'second');
    const fifth = await post(second, cancel());
    expect(fifth.statusCode).toBe(404);
    // The user's bucket binds now (4 counted, the refused one included): 5 - 5 = 0 left after this one.
    expect(fifth.headers['ratelimit-limit']).toBe('5');
    expect(fifth.headers['ratelimit-remaining']).toBe('0');
    const sixth = await post(second, cancel());
    expect(sixth.statusCode).toBe(429);
    expect(sixth.json().error.code).toBe('ERG_RATE_LIMITED');
    expect(sixth.json().error.message).toMatch(/by user "ada" \(all of their tokens together\): the limit is 5 a minute/);
    expect(Number(sixth.headers['retry-after'])).toBeGreaterThanOrEqual(1);

    // Another user is not affected.
    expect((await post(await tokenFor('bob', 'bob'), cancel())).statusCode).toBe(404);
  });
});
