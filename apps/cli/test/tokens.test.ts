import { erg, routes, type RecordedRequest } from './helpers';

const TOKEN_ID = '0b6f1d2e-3c4a-4b5d-8e6f-7a8b9c0d1e2f';
const view = (over: Record<string, unknown> = {}) => ({
  id: TOKEN_ID, name: 'ci', prefix: 'erg_AbCdEf', user: 'ci-gemm', expiresAt: '2027-11-30T12:00:00.000Z', projects: ['gemm'], role: 'researcher',
  createdAt: '2026-11-30T12:00:00.000Z', lastUsedAt: null, revokedAt: null, ...over,
});

describe('erg tokens (scripted API)', () => {
  test('create sends the scope and prints the token alone on stdout', async () => {
    const seen: RecordedRequest[] = [];
    const out = await erg(['tokens', 'create', 'ci', '--project', 'gemm', '--role', 'researcher', '--expires-in', '365d', '--user', 'ci-gemm'], {
      api: routes({ 'POST /v1/tokens': (req) => (seen.push(req), { status: 201, body: { ...view(), token: 'erg_secret-token-value' } }) }),
    });
    expect(out.code).toBe(0);
    expect(JSON.parse(seen[0]!.body)).toEqual({ name: 'ci', expiresInDays: 365, projects: ['gemm'], role: 'researcher', user: 'ci-gemm' });
    expect(out.stdout).toBe('erg_secret-token-value\n');
    expect(out.stderr).toContain('shown once');
    expect(out.stderr).toContain('gemm as researcher at most');
  });

  test('list shows prefixes, scope and state, never secrets', async () => {
    const out = await erg(['tokens', 'list'], { api: routes({ 'GET /v1/tokens': { status: 200, body: { items: [view(), view({ id: 'x', name: 'old', revokedAt: '2026-11-29T00:00:00.000Z', projects: [], role: null })] } } }) });
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/erg_AbCdEf…/);
    expect(out.stdout).toContain('all projects');
    expect(out.stdout).toContain('revoked 2026-11-29');
  });

  test('revoke; an unknown token is exit 2; a bad role or duration is a usage error', async () => {
    const ok = await erg(['tokens', 'revoke', TOKEN_ID], { api: routes({ [`DELETE /v1/tokens/${TOKEN_ID}`]: { status: 200, body: view({ revokedAt: '2026-11-30T12:01:00.000Z' }) } }) });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('revoked');
    expect((await erg(['tokens', 'revoke', TOKEN_ID], { api: routes({}) })).code).toBe(2);
    const role = await erg(['tokens', 'create', 'x', '--role', 'owner']);
    expect(role.code).toBe(2);
    expect(role.stderr).toContain('viewer, researcher, maintainer');
    expect((await erg(['tokens', 'create', 'x', '--expires-in', 'soon'])).code).toBe(2);
  });

  test('projects lists your role in each', async () => {
    const out = await erg(['projects'], {
      api: routes({ 'GET /v1/projects': { status: 200, body: { items: [{ id: 'p', name: 'gemm', description: 'GEMM study', maxConcurrentRuns: null, role: 'maintainer', createdAt: '2026-11-30T12:00:00.000Z' }] } } }),
    });
    expect(out.stdout).toMatch(/gemm\s+maintainer\s+GEMM study/);
  });
});
