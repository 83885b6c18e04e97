// Cluster registration validates what it stores: a key the SSH client can use, a power model whose
// watts rise, a host ssh can be given, an agent URL without credentials. Each refusal is a 400
// naming the field.
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
  async function register(body: Record<string, unknown>, how: 'POST' | 'PUT' = 'POST') {
    const name = `c${++n}`;
    const res = await t.app.inject({
      method: how, url: how === 'POST' ? '/v1/clusters' : `/v1/clusters/${name}`, headers: { authorization: `Bearer ${t.token}` },
      payload: how === 'POST' ? { name, ...body } : body,
    });
    return { status: res.statusCode, body: res.json(), name };
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

  test('hosts ssh accepts are accepted: names, IPv4 and IPv6', async () => {
    for (const host of ['login.cluster.example.org', 'localhost', '10.1.2.3', '::1', '2001:db8::7']) {
      expect((await register({ ...BODY, host })).status).toBe(201);
    }
  });
});
