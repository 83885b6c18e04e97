// Cluster registration validates what it stores: a key the SSH client can use, a power model whose
// watts rise, a host ssh can be given and the project's cluster policy allows, an agent URL
// without credentials. Each refusal is a 400 naming the field.
import { generateKeyPairSync } from 'node:crypto';
import { findClusterByName } from '@erg/db';
import { secretBoxFrom } from '@erg/secrets';
import { startTestApi, type TestApi } from './helpers';

const ed25519Pkcs8 = () => generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const ecKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'sec1', format: 'pem' }).toString();
const BODY = { host: '127.0.0.1', port: 2222, user: 'root', privateKey: ecKey, hostKeySha256: 'SHA256:' + 'A'.repeat(43), workDir: '/var/lib/erg-test' };

describe('cluster registration validates what it stores (Postgres + Redis)', () => {
  let t: TestApi;
  let n = 0;
  async function register(body: Record<string, unknown>, how: 'POST' | 'PUT' = 'POST', project?: string) {
    const name = `c${++n}`;
    const query = project === undefined ? '' : `?project=${project}`;
    const res = await t.app.inject({
      method: how, url: how === 'POST' ? `/v1/clusters${query}` : `/v1/clusters/${name}${query}`, headers: { authorization: `Bearer ${t.token}` },
      payload: how === 'POST' ? { name, ...body } : body,
    });
    return { status: res.statusCode, body: res.json(), name };
  }
  async function admin(method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) {
    const res = await t.app.inject({ method, url, headers: { authorization: `Bearer ${t.token}` }, ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.json() };
  }
  const issuePaths = (body: { error: { issues?: { path: string }[] } }) => (body.error.issues ?? []).map((i) => i.path);

  beforeAll(async () => {
    t = await startTestApi();
  });
  afterAll(async () => {
    await t.close();
  });

  test.each(['POST', 'PUT'] as const)('%s: a private key that does not parse is a 400 naming privateKey', async (how) => {
    const res = await register({ ...BODY, privateKey: '-----BEGIN OPENSSH PRIVATE KEY-----\nbm90IGEga2V5\n-----END OPENSSH PRIVATE KEY-----\n' }, how);
    expect(res.status).toBe(400);
    expect(res.body.error.issues).toEqual([expect.objectContaining({ path: 'privateKey', code: 'invalid_key', message: expect.stringContaining('ssh-keygen -t ed25519') })]);
  });

  test('a key with a passphrase is a 400 naming privateKey that says how to remove it', async () => {
    const encrypted = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'pw' }).toString();
    const res = await register({ ...BODY, privateKey: encrypted });
    expect(res.status).toBe(400);
    expect(res.body.error.issues).toEqual([expect.objectContaining({ path: 'privateKey', code: 'encrypted_key', message: expect.stringContaining("ssh-keygen -p -N ''") })]);
  });

  test('a PKCS#8 Ed25519 key is accepted and stored as an OpenSSH key the SSH client reads', async () => {
    const res = await register({ ...BODY, privateKey: ed25519Pkcs8() });
    expect(res.status).toBe(201);
    const row = (await findClusterByName(t.db, res.name))!;
    const stored = secretBoxFrom(t.config).open(row.privateKey, `cluster:${row.id}:private_key`);
    expect(stored).toMatch(/^-----BEGIN OPENSSH PRIVATE KEY-----\n/);
  });

  test.each(['POST', 'PUT'] as const)('%s: maxQueuedJobs is a whole number from 1, stored and shown; 0 or a fraction is a 400 naming it', async (how) => {
    for (const bad of [0, 2.5, -1, '10']) {
      const res = await register({ ...BODY, maxQueuedJobs: bad }, how);
      expect(res.status).toBe(400);
      expect(issuePaths(res.body)).toEqual(['maxQueuedJobs']);
    }
    const ok = await register({ ...BODY, maxQueuedJobs: 10 }, how);
    expect(ok.status).toBeLessThan(300);
    expect(ok.body.maxQueuedJobs).toBe(10);
    expect((await findClusterByName(t.db, ok.name))!.maxQueuedJobs).toBe(10);
    expect((await register(BODY, how)).body.maxQueuedJobs).toBeNull();
  });

  test.each(['POST', 'PUT'] as const)('%s: model watts in the wrong order are a 400 naming modelMaxW', async (how) => {
    const res = await register({ ...BODY, modelIdleW: 300, modelMaxW: 200 }, how);
    expect(res.status).toBe(400);
    expect(res.body.error.issues).toEqual([expect.objectContaining({ path: 'modelMaxW', message: expect.stringContaining('modelIdleW (300 W)') })]);
    // Only idle given, above the default maximum (250 W): the same.
    expect(issuePaths((await register({ ...BODY, modelIdleW: 300 }, how)).body)).toEqual(['modelMaxW']);
    expect((await register({ ...BODY, modelIdleW: 100, modelMaxW: 100 }, how)).status).toBeLessThan(300);
  });

  test('every issue of a body is named at once', async () => {
    const res = await register({ ...BODY, privateKey: '-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----', modelIdleW: 500, modelMaxW: 100, hostKeySha256: undefined });
    expect(res.status).toBe(400);
    expect(issuePaths(res.body).sort()).toEqual(['hostKeySha256', 'modelMaxW', 'privateKey']);
  });

  test.each([
    ['host', '-oProxyCommand'],
    ['host', 'login..cluster'],
    ['host', 'login-.cluster'],
    ['agentApiUrl', 'http://erg:secret@api.example.org:8080'],
  ])('%s %j is a 400 naming it', async (field, value) => {
    const res = await register({ ...BODY, [field]: value });
    expect(res.status).toBe(400);
    expect(issuePaths(res.body)).toEqual([field]);
  });

  test('hosts ssh accepts are accepted: names, IPv4 and IPv6 (internal ones where the project allows them)', async () => {
    expect((await admin('POST', '/v1/projects', { name: 'internal' })).status).toBe(201);
    expect((await admin('PUT', '/v1/projects/internal/cluster-policy', { allowHosts: ['127.0.0.1', '10.1.2.3', '::1', '2001:db8::/32'] })).status).toBe(200);
    for (const host of ['login.cluster.example.org', 'localhost', '10.1.2.3', '::1', '2001:db8::7']) {
      expect((await register({ ...BODY, host }, 'POST', 'internal')).status).toBe(201);
    }
  });

  describe("the first hop's address: refused inside erg's own network unless the project's cluster policy allows it", () => {
    const jump = (host: string) => ({ host, port: 22, user: 'jump', hostKeySha256: 'SHA256:' + 'B'.repeat(43) });

    beforeAll(async () => {
      // A project as every project starts: no cluster policy (startTestApi allows loopback in the default project only).
      expect((await admin('POST', '/v1/projects', { name: 'locked' })).status).toBe(201);
    });

    test.each([
      ['127.0.0.1', 'loopback', '127.0.0.1'],
      ['2130706433', 'loopback', '127.0.0.1'],
      ['localhost', 'loopback', 'localhost'],
      ['10.0.0.7', 'private', '10.0.0.7'],
      ['192.168.1.20', 'private', '192.168.1.20'],
      ['100.64.0.1', 'carrier-grade NAT', '100.64.0.1'],
      ['169.254.169.254', 'link-local', '169.254.169.254'],
      ['fd00:ec2::254', 'private', 'fd00:ec2::254'],
      ['::ffff:10.0.0.1', 'private', '::ffff:10.0.0.1'],
      ['fe80::1', 'link-local', 'fe80::1'],
    ])('host %s (%s) is a 400 naming host and how an admin allows it', async (host, cls, address) => {
      for (const how of ['POST', 'PUT'] as const) {
        const res = await register({ ...BODY, host }, how, 'locked');
        expect(res.status).toBe(400);
        expect(res.body.error.issues).toEqual([{
          path: 'host', code: 'invalid_value',
          message: expect.stringContaining(`${address} (the login node) is a ${cls} address, inside erg's own network`),
        }]);
        expect(res.body.error.issues[0].message).toContain(`erg clusters policy --project locked --allow ${address} (PUT /v1/projects/locked/cluster-policy;`);
        expect(await findClusterByName(t.db, res.name)).toBeNull();
      }
    });

    test('the first jump host is the one checked (jumpHosts[0].host); the login node behind it is the jump host\'s to reach', async () => {
      const refused = await register({ ...BODY, host: 'login.example.org', jumpHosts: [jump('169.254.169.254')] }, 'POST', 'locked');
      expect(refused.status).toBe(400);
      expect(refused.body.error.issues).toEqual([expect.objectContaining({ path: 'jumpHosts[0].host', message: expect.stringMatching(/^169\.254\.169\.254 \(the first jump host\) is a link-local address/) })]);
      // A private login node behind a public jump host: erg reaches only the jump host itself.
      expect((await register({ ...BODY, host: '10.0.0.5', jumpHosts: [jump('bastion.example.org')] }, 'POST', 'locked')).status).toBe(201);
      // Names are checked where they are resolved, at every connection.
      expect((await register({ ...BODY, host: 'login.example.org' }, 'POST', 'locked')).status).toBe(201);
    });

    test('rotating to a jump host inside erg\'s network is refused too, naming jumpHosts[0].host', async () => {
      const created = await register({ ...BODY, host: 'login.example.org' }, 'POST', 'locked');
      expect(created.status).toBe(201);
      const rotate = await admin('PUT', `/v1/clusters/${created.name}/credentials`, { jumpHosts: [jump('10.9.9.9')] });
      expect(rotate.status).toBe(400);
      expect(rotate.body.error.issues.map((i: { path: string }) => i.path)).toEqual(['jumpHosts[0].host']);
      expect((await findClusterByName(t.db, created.name))!.jumpHosts).toEqual([]);
    });

    test('once an admin allows the host in the project\'s cluster policy, the same registration is taken', async () => {
      expect((await register({ ...BODY, host: '10.0.0.7' }, 'POST', 'locked')).status).toBe(400);
      const set = await admin('PUT', '/v1/projects/locked/cluster-policy', { allowHosts: ['10.0.0.0/24', 'login.cluster.internal'] });
      expect(set).toEqual({ status: 200, body: { project: 'locked', allowHosts: ['10.0.0.0/24', 'login.cluster.internal'] } });
      expect((await admin('GET', '/v1/projects/locked/cluster-policy')).body).toEqual({ project: 'locked', allowHosts: ['10.0.0.0/24', 'login.cluster.internal'] });
      const ok = await register({ ...BODY, host: '10.0.0.7' }, 'POST', 'locked');
      expect(ok.status).toBe(201);
      // The record carries the policy its connections check against.
      expect((await findClusterByName(t.db, ok.name))!.clusterPolicy).toEqual({ allowHosts: ['10.0.0.0/24', 'login.cluster.internal'] });
      expect((await register({ ...BODY, host: '10.0.1.7' }, 'POST', 'locked')).status).toBe(400);
    });

    test('a policy entry that is no host, address or block, or too wide, is a 400 naming it', async () => {
      const res = await admin('PUT', '/v1/projects/locked/cluster-policy', { allowHosts: ['ok.example', '0.0.0.0/0', '0x7f.1'] });
      expect(res.status).toBe(400);
      expect(res.body.error.issues.map((i: { path: string }) => i.path)).toEqual(['allowHosts.1', 'allowHosts.2']);
      expect((await admin('PUT', '/v1/projects/nope/cluster-policy', { allowHosts: [] })).status).toBe(404);
    });
  });
});
