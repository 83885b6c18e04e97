// Tokens never widen: a token creates only tokens within its own bounds (expiry, projects, role),
// and sees and revokes only those; an admin's full token is the exception.
import { startTestApi, type TestApi } from './helpers';

const DAY = 86_400_000;

describe('tokens never widen (Postgres + Redis)', () => {
  let t: TestApi;
  /** ada: maintainer of alpha, viewer of beta; her full token (no projects, no role cap, no expiry). */
  let full: { id: string; token: string };

  async function call(token: string, method: string, url: string, body?: unknown) {
    const res = await t.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${token}` }, ...(body === undefined ? {} : { payload: body as object }) });
    return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : null };
  }
  const admin = (method: string, url: string, body?: unknown) => call(t.token, method, url, body);
  async function mint(token: string, body: Record<string, unknown>) {
    const res = await call(token, 'POST', '/v1/tokens', body);
    if (res.status !== 201) throw new Error(`POST /v1/tokens ${JSON.stringify(body)}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { id: string; token: string; expiresAt: string | null; projects: string[]; role: string | null };
  }

  beforeAll(async () => {
    t = await startTestApi();
    for (const p of ['alpha', 'beta', 'gamma']) expect((await admin('POST', '/v1/projects', { name: p })).status).toBe(201);
    expect((await admin('POST', '/v1/users', { name: 'ada' })).status).toBe(201);
    expect((await admin('PUT', '/v1/projects/alpha/members/ada', { role: 'maintainer' })).status).toBe(200);
    expect((await admin('PUT', '/v1/projects/beta/members/ada', { role: 'viewer' })).status).toBe(200);
    full = await mint(t.token, { name: 'ada-full', user: 'ada' });
  });
  afterAll(async () => {
    await t.close();
  });

  test('a narrowed token\'s child inherits its bounds when it names none', async () => {
    const parent = await mint(full.token, { name: 'ci', projects: ['alpha'], role: 'researcher', expiresInDays: 10 });
    const child = await mint(parent.token, { name: 'ci-child' });
    expect(child.projects).toEqual(['alpha']);
    expect(child.role).toBe('researcher');
    // A parent with an expiry never mints a token without one: the child expires with it.
    expect(child.expiresAt).toBe(parent.expiresAt);
  });

  test('a child that would outlive its parent is refused with 403 naming expiresInDays', async () => {
    const parent = await mint(full.token, { name: 'short', expiresInDays: 2 });
    const res = await call(parent.token, 'POST', '/v1/tokens', { name: 'longer', expiresInDays: 30 });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('ERG_TOKEN_WIDER');
    expect(res.body.error.issues).toEqual([expect.objectContaining({ path: 'expiresInDays', code: 'exceeds_parent' })]);
    expect(res.body.error.message).toMatch(/expiresInDays: .*expires at \d{4}-\d\d-\d\dT/);
    // Within the parent's life it is fine, and a parent without expiry limits nothing.
    const inside = await mint(parent.token, { name: 'inside', expiresInDays: 1 });
    expect(Date.parse(inside.expiresAt!)).toBeLessThanOrEqual(Date.parse(parent.expiresAt!));
    expect((await mint(full.token, { name: 'long', expiresInDays: 365 })).expiresAt).not.toBeNull();
  });

  test('a child with a higher role than its parent is refused with 403 naming role', async () => {
    const parent = await mint(full.token, { name: 'viewer-cap', role: 'viewer' });
    const res = await call(parent.token, 'POST', '/v1/tokens', { name: 'wider', role: 'maintainer' });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('ERG_TOKEN_WIDER');
    expect(res.body.error.issues).toEqual([expect.objectContaining({ path: 'role', code: 'exceeds_parent' })]);
    expect(res.body.error.message).toContain('viewer');
    // Both bounds exceeded at once: both named.
    const both = await mint(full.token, { name: 'both', role: 'viewer', expiresInDays: 1 });
    const refused = await call(both.token, 'POST', '/v1/tokens', { name: 'x', role: 'researcher', expiresInDays: 5 });
    expect(refused.status).toBe(403);
    expect(refused.body.error.issues.map((i: { path: string }) => i.path).sort()).toEqual(['expiresInDays', 'role']);
  });

  test('a child naming a project outside its parent\'s gets the 404 of a project that does not exist', async () => {
    const parent = await mint(full.token, { name: 'alpha-only', projects: ['alpha'] });
    const outside = await call(parent.token, 'POST', '/v1/tokens', { name: 'beta', projects: ['beta'] });
    const missing = await call(parent.token, 'POST', '/v1/tokens', { name: 'nope', projects: ['no-such-project'] });
    expect(outside.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(outside.body.error.message.replace('beta', 'X')).toBe(missing.body.error.message.replace('no-such-project', 'X'));
    // The user's full token may name any project of the user's, not others.
    expect((await mint(full.token, { name: 'beta', projects: ['beta'] })).projects).toEqual(['beta']);
    expect((await call(full.token, 'POST', '/v1/tokens', { name: 'gamma', projects: ['gamma'] })).status).toBe(404);
  });

  test('an admin\'s full token mints anything, for anyone; an admin token with an expiry keeps its children within it', async () => {
    const made = await mint(t.token, { name: 'svc', user: 'ada', projects: ['beta'], role: 'maintainer' });
    expect(made).toMatchObject({ projects: ['beta'], role: 'maintainer', expiresAt: null });
    const narrowAdmin = await mint(t.token, { name: 'admin-short', expiresInDays: 1 });
    const res = await call(narrowAdmin.token, 'POST', '/v1/tokens', { name: 'forever' });
    // An admin token with an expiry is still within its own bounds: the child expires with it.
    expect(res.status).toBe(201);
    expect(res.body.expiresAt).toBe(narrowAdmin.expiresAt);
    const outlive = await call(narrowAdmin.token, 'POST', '/v1/tokens', { name: 'svc-long', user: 'ada', expiresInDays: 30 });
    expect(outlive.status).toBe(403);
    expect(outlive.body.error.issues[0].path).toBe('expiresInDays');
  });

  test('a narrowed token sees and revokes only tokens within its bounds; the full token and admins revoke any', async () => {
    const narrow = await mint(full.token, { name: 'narrow', projects: ['alpha'], role: 'researcher', expiresInDays: 5 });
    const child = await mint(narrow.token, { name: 'narrow-child', role: 'viewer' });
    const sibling = await mint(full.token, { name: 'sibling-wider', projects: ['alpha'], role: 'maintainer', expiresInDays: 5 });

    const seen = (await call(narrow.token, 'GET', '/v1/tokens')).body.items.map((x: { name: string }) => x.name).sort();
    // Not the full token, nor the sibling with a higher role, nor earlier tests' tokens (other projects, later expiry).
    expect(seen).toEqual(['narrow', 'narrow-child']);
    const refused = await call(narrow.token, 'DELETE', `/v1/tokens/${full.id}`);
    const missing = await call(narrow.token, 'DELETE', '/v1/tokens/00000000-0000-4000-8000-000000000000');
    expect(refused.status).toBe(404);
    expect(refused.body.error.message.replace(full.id, 'X')).toBe(missing.body.error.message.replace('00000000-0000-4000-8000-000000000000', 'X'));
    expect((await call(narrow.token, 'DELETE', `/v1/tokens/${sibling.id}`)).status).toBe(404);
    expect((await call(full.token, 'GET', '/v1/me')).status).toBe(200);

    // Within: its own child, and itself.
    expect((await call(narrow.token, 'DELETE', `/v1/tokens/${child.id}`)).body.revokedAt).not.toBeNull();
    expect((await call(child.token, 'GET', '/v1/me')).status).toBe(401);
    // The user's full token sees every token of hers and revokes the wider sibling; an admin revokes any.
    const all = (await call(full.token, 'GET', '/v1/tokens')).body.items.map((x: { name: string }) => x.name);
    expect(all).toEqual(expect.arrayContaining(['ada-full', 'narrow', 'narrow-child', 'sibling-wider']));
    expect((await call(full.token, 'DELETE', `/v1/tokens/${sibling.id}`)).status).toBe(200);
    expect((await admin('DELETE', `/v1/tokens/${narrow.id}`)).status).toBe(200);
    expect((await call(narrow.token, 'GET', '/v1/me')).status).toBe(401);
  });
});
