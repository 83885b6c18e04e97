// Existence oracles: what a caller learns about things outside their projects. A cluster of
// another project answers PUT like a free name would for that caller, /metrics without its token
// names no cluster, and maintainers cannot probe for users outside their projects.
import { generateKeyPairSync } from 'node:crypto';
import { parsePrometheusText } from '@erg/testkit';
import { startTestApi, type TestApi } from './helpers';

const PRIVATE_KEY = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'sec1', format: 'pem' }).toString();
const BODY = { host: '127.0.0.1', port: 2222, user: 'root', privateKey: PRIVATE_KEY, hostKeySha256: 'SHA256:' + 'A'.repeat(43), workDir: '/var/lib/erg-test' };

type Call = (method: string, url: string, body?: unknown) => Promise<{ status: number; body: { error?: { code: string; message: string } } & Record<string, unknown> }>;

function caller(t: TestApi, token: string): Call {
  return async (method, url, body) => {
    const res = await t.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${token}` }, ...(body === undefined ? {} : { payload: body as object }) });
    return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : null };
  };
}

/** What a caller sees of an answer: the status and the message with the probed name blanked out. */
const seen = (r: Awaited<ReturnType<Call>>, name: string) => ({ status: r.status, code: r.body?.error?.code, message: r.body?.error?.message?.replaceAll(name, 'NAME') });

describe('existence oracles (Postgres + Redis)', () => {
  let t: TestApi;
  let admin: Call;
  const as = {} as Record<'viewer' | 'researcher' | 'maintainer', Call>;

  beforeAll(async () => {
    t = await startTestApi();
    admin = caller(t, t.token);
    for (const p of ['alpha', 'beta', 'gamma']) {
      expect((await admin('POST', '/v1/projects', { name: p })).status).toBe(201);
      // The clusters here are registered at 127.0.0.1: the admin allows loopback for each project, as for the quickstart.
      expect((await admin('PUT', `/v1/projects/${p}/cluster-policy`, { allowHosts: ['127.0.0.1'] })).status).toBe(200);
    }
    expect((await admin('POST', '/v1/clusters?project=beta', { name: 'hidden', ...BODY })).status).toBe(201);
    for (const role of ['viewer', 'researcher', 'maintainer'] as const) {
      expect((await admin('POST', '/v1/users', { name: role })).status).toBe(201);
      expect((await admin('PUT', `/v1/projects/alpha/members/${role}`, { role })).status).toBe(200);
      as[role] = caller(t, (await admin('POST', '/v1/tokens', { name: role, user: role })).body.token as string);
    }
  });
  afterAll(async () => {
    await t.close();
  });

  describe('PUT /v1/clusters/{name}', () => {
    test('callers who may not register clusters get the same answer for another project\'s cluster and a free name', async () => {
      for (const role of ['viewer', 'researcher'] as const) {
        const hidden = await as[role]('PUT', '/v1/clusters/hidden', BODY);
        const free = await as[role]('PUT', '/v1/clusters/free-name', BODY);
        expect(hidden.status).toBe(403);
        expect(seen(hidden, 'hidden')).toEqual(seen(free, 'free-name'));
      }
      // Naming a project one cannot see: the same 404 either way.
      const hidden = await as.maintainer('PUT', '/v1/clusters/hidden?project=beta', BODY);
      const free = await as.maintainer('PUT', '/v1/clusters/free-name?project=beta', BODY);
      expect(hidden.status).toBe(404);
      expect(seen(hidden, 'hidden')).toEqual(seen(free, 'free-name'));
    });

    test('a maintainer who may register learns only that the name is taken, exactly as POST /v1/clusters says it', async () => {
      const put = await as.maintainer('PUT', '/v1/clusters/hidden', BODY);
      const post = await as.maintainer('POST', '/v1/clusters', { name: 'hidden', ...BODY });
      expect(put.status).toBe(409);
      expect(seen(put, 'hidden')).toEqual(seen(post, 'hidden'));
      // Nothing about the other project's cluster: its project, host or user.
      expect(put.body.error!.message).not.toMatch(/beta|127\.0\.0\.1|root/);
      // The other project's cluster is untouched.
      expect((await admin('GET', '/v1/clusters/hidden')).body).toMatchObject({ port: 2222 });
      // A free name is registered in the maintainer's project, and a cluster of their own is replaced.
      expect((await as.maintainer('PUT', '/v1/clusters/mine', BODY)).status).toBe(200);
      expect((await as.maintainer('PUT', '/v1/clusters/mine', { ...BODY, port: 2223 })).body).toMatchObject({ port: 2223 });
      // Below maintainer in the owning project: 403, as before.
      expect((await as.viewer('PUT', '/v1/clusters/mine', BODY)).status).toBe(403);
    });
  });

  describe('/metrics without ERG_METRICS_TOKEN', () => {
    test('labels runs by cluster id, never by cluster name', async () => {
      expect((await admin('POST', '/v1/campaigns', { name: 'm', cluster: 'hidden', parameters: { n: [1] }, run: 'true' })).status).toBe(201);
      const res = await t.app.inject({ url: '/metrics' });
      expect(res.statusCode).toBe(200);
      expect(res.body).not.toContain('hidden');
      const id = (await admin('GET', '/v1/clusters/hidden')).body.id as string;
      const runs = parsePrometheusText(res.body).filter((s) => s.name === 'erg_runs' && s.labels.state === 'pending');
      expect(runs).toContainEqual(expect.objectContaining({ labels: { cluster: id, state: 'pending' }, value: 1 }));
    });
  });

  describe('users outside a maintainer\'s projects', () => {
    beforeAll(async () => {
      // outsider: only in beta. colleague: viewer in gamma, where the maintainer is a viewer too.
      for (const name of ['outsider', 'colleague']) expect((await admin('POST', '/v1/users', { name })).status).toBe(201);
      expect((await admin('PUT', '/v1/projects/beta/members/outsider', { role: 'viewer' })).status).toBe(200);
      expect((await admin('PUT', '/v1/projects/gamma/members/colleague', { role: 'viewer' })).status).toBe(200);
      expect((await admin('PUT', '/v1/projects/gamma/members/maintainer', { role: 'viewer' })).status).toBe(200);
    });

    test('giving a role to a user who shares no project with the maintainer answers like a user that does not exist', async () => {
      const outsider = await as.maintainer('PUT', '/v1/projects/alpha/members/outsider', { role: 'viewer' });
      const nobody = await as.maintainer('PUT', '/v1/projects/alpha/members/nobody', { role: 'viewer' });
      expect(outsider.status).toBe(404);
      expect(seen(outsider, 'outsider')).toEqual(seen(nobody, 'nobody'));
      const removeOutsider = await as.maintainer('DELETE', '/v1/projects/alpha/members/outsider');
      const removeNobody = await as.maintainer('DELETE', '/v1/projects/alpha/members/nobody');
      expect(seen(removeOutsider, 'outsider')).toEqual(seen(removeNobody, 'nobody'));
      // Not added behind the 404.
      const members = (await admin('GET', '/v1/projects/alpha')).body.members as { user: string }[];
      expect(members.map((m) => m.user)).not.toContain('outsider');
    });

    test('a user who shares a project with the maintainer can be given a role; admins may add anyone', async () => {
      expect((await as.maintainer('PUT', '/v1/projects/alpha/members/colleague', { role: 'researcher' })).status).toBe(200);
      expect((await admin('PUT', '/v1/projects/alpha/members/outsider', { role: 'viewer' })).status).toBe(200);
    });
  });
});
