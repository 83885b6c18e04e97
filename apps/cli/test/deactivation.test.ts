import { erg, routes, type RecordedRequest } from './helpers';

const user = (over: Record<string, unknown> = {}) => ({ id: 'u1', name: 'alice', kind: 'person', isAdmin: false, createdAt: '2026-11-30T12:00:00.000Z', deactivatedAt: null, ...over });

describe('erg users, and deactivate / reactivate of users, projects and clusters (scripted API)', () => {
  test.each([
    ['users', 'alice', '/v1/users/alice'],
    ['projects', 'gemm', '/v1/projects/gemm'],
    ['clusters', 'gh', '/v1/clusters/gh'],
  ])('erg %s deactivate NAME posts to …/deactivate and says what it does', async (command, name, path) => {
    const seen: RecordedRequest[] = [];
    const body = { ...user({ name }), deactivatedAt: '2026-12-10T04:00:00.000Z' };
    const out = await erg([command, 'deactivate', name], { api: routes({ [`POST ${path}/deactivate`]: (req) => (seen.push(req), { status: 200, body }) }) });
    expect(out.code).toBe(0);
    expect(seen).toHaveLength(1);
    expect(out.stdout).toMatch(new RegExp(`^\\w+ "${name}" is deactivated \\(since 2026-12-10T04:00:00\\.000Z\\): `));
    const back = await erg([command, 'reactivate', name], { api: routes({ [`POST ${path}/reactivate`]: { status: 200, body: { ...body, deactivatedAt: null } } }) });
    expect(back.stdout).toMatch(new RegExp(`^\\w+ "${name}" is active: `));
  });

  test('deactivating yourself is refused by the API: exit 1 with its message', async () => {
    const out = await erg(['users', 'deactivate', 'admin'], {
      api: routes({ 'POST /v1/users/admin/deactivate': { status: 409, body: { error: { code: 'ERG_CONFLICT', message: 'you cannot deactivate yourself: ask another admin' } } } }),
    });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain('you cannot deactivate yourself');
  });

  test('users list shows who is deactivated; projects (still the default) marks a deactivated project', async () => {
    const list = await erg(['users', 'list'], { api: routes({ 'GET /v1/users': { status: 200, body: { items: [user(), user({ name: 'bob', deactivatedAt: '2026-12-10T04:00:00.000Z' })] } } }) });
    expect(list.stdout).toMatch(/^alice\s+person\s+no\s+\S+\s+active$/m);
    expect(list.stdout).toMatch(/^bob\s+person\s+no\s+\S+\s+deactivated 2026-12-10T04:00:00\.000Z$/m);
    const project = { id: 'p', name: 'gemm', description: 'GEMM study', maxConcurrentRuns: null, role: 'maintainer', createdAt: '2026-11-30T12:00:00.000Z', deactivatedAt: '2026-12-10T04:00:00.000Z' };
    const projects = await erg(['projects'], { api: routes({ 'GET /v1/projects': { status: 200, body: { items: [project] } } }) });
    expect(projects.stdout).toMatch(/gemm \(deactivated\)\s+maintainer\s+GEMM study/);
  });
});
