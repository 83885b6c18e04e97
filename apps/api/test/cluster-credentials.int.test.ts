// A cluster's credentials through the API: certificates and jump hosts at registration, rotation
// with PUT /v1/clusters/{name}/credentials, what the cluster view and /metrics say about them, and
// every refusal a 400 naming the field. Certificates are real ones, signed by a test CA with ssh-keygen.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findClusterByName, jumpHostKeyContext, listAudit, openClusterCredentials } from '@erg/db';
import { secretBoxFrom } from '@erg/secrets';
import { makeTestCa, makeTestKey, parsePrometheusText, sampleValue, waitFor, type TestCa, type TestKey } from '@erg/testkit';
import { startTestApi, type TestApi } from './helpers';

const FP = (c: string) => `SHA256:${c.repeat(43)}`;

describe('cluster credentials: certificates, jump hosts, rotation (Postgres + Redis)', () => {
  let t: TestApi;
  let dir: string;
  let ca: TestCa;
  let key: TestKey;
  let bastionKey: TestKey;
  let n = 0;

  async function call(method: string, url: string, body?: unknown) {
    const res = await t.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${t.token}` }, ...(body === undefined ? {} : { payload: body as object }) });
    return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : null };
  }
  const base = () => ({ name: `cc${++n}`, host: 'login.example.org', user: 'root', privateKey: key.privateKey, hostKeySha256: FP('A'), workDir: '/w' });
  const issues = (body: { error: { issues?: { path: string; code: string; message: string }[] } }) => body.error.issues ?? [];

  beforeAll(async () => {
    t = await startTestApi();
    dir = mkdtempSync(path.join(os.tmpdir(), 'erg-credentials-'));
    ca = makeTestCa(dir);
    key = makeTestKey(dir, 'erg');
    bastionKey = makeTestKey(dir, 'bastion', 'ecdsa');
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('registers a certificate and a chain of jump hosts; the view shows what they say, never a key', async () => {
    const certificate = ca.sign(key, { keyId: 'erg@gh', serial: 5, principals: ['root', 'erg'], validity: '-1m:+30d' });
    const bastionCert = ca.sign(bastionKey, { serial: 6, validity: '-1m:+30d' });
    const body = {
      ...base(), certificate,
      jumpHosts: [
        { host: 'bastion.example.org', user: 'erg', privateKey: bastionKey.privateKey, certificate: bastionCert, hostKeySha256: FP('B') },
        { host: '10.0.0.2', port: 2200, user: 'erg', hostKeySha256: FP('C') },
      ],
    };
    const res = await call('POST', '/v1/clusters', body);
    expect(res.status).toBe(201);
    expect(res.body.certificate).toMatchObject({ type: 'ssh-ed25519-cert-v01@openssh.com', keyId: 'erg@gh', serial: '5', principals: ['root', 'erg'], status: 'valid' });
    expect(res.body.certificate.expiresInS).toBeGreaterThan(29 * 86_400);
    expect(res.body.jumpHosts).toEqual([
      expect.objectContaining({ host: 'bastion.example.org', port: 22, user: 'erg', hostKeySha256: FP('B'), ownKey: true, certificate: expect.objectContaining({ serial: '6' }) }),
      // No key of its own: the cluster's key and certificate log in there.
      expect.objectContaining({ host: '10.0.0.2', port: 2200, ownKey: false, certificate: expect.objectContaining({ serial: '5' }) }),
    ]);
    expect(res.body).toMatchObject({ credentialsVersion: 1, credentialsUpdatedAt: null, warnings: [] });
    expect(JSON.stringify(res.body)).not.toContain('PRIVATE KEY');

    // Stored sealed, each jump host's key under a context of its own.
    const stored = (await findClusterByName(t.db, body.name))!;
    expect(stored.jumpHosts[0]!.privateKey).toMatch(/^erg1:/);
    expect(stored.jumpHosts[1]!.privateKey).toBeNull();
    const secrets = secretBoxFrom(t.config);
    expect(secrets.openStored(stored.jumpHosts[0]!.privateKey!, jumpHostKeyContext(stored.id, 0))).toBe(bastionKey.privateKey);
    const opened = openClusterCredentials(secrets, stored);
    expect(opened.jumpHosts.map((j) => [j.privateKey, j.certificate])).toEqual([[bastionKey.privateKey, bastionCert], [key.privateKey, certificate]]);
  });

  test('refusals name the field: a certificate of another key, an expired one, a host certificate, a jump host certificate without its key', async () => {
    const other = makeTestKey(dir, 'other');
    const res = await call('POST', '/v1/clusters', {
      ...base(),
      certificate: ca.sign(other),
      jumpHosts: [
        { host: 'b1.example.org', user: 'erg', privateKey: bastionKey.privateKey, certificate: ca.sign(bastionKey, { validity: '20200101:20200102' }), hostKeySha256: FP('B') },
        { host: 'b2.example.org', user: 'erg', certificate: ca.sign(key), hostKeySha256: FP('C') },
        { host: 'b3.example.org', user: 'erg', privateKey: '-----BEGIN OPENSSH PRIVATE KEY-----\nbm90IGEga2V5\n-----END OPENSSH PRIVATE KEY-----\n', hostKeySha256: FP('D') },
      ],
    });
    expect(res.status).toBe(400);
    const byPath = Object.fromEntries(issues(res.body).map((i) => [i.path, i]));
    expect(byPath.certificate).toMatchObject({ code: 'certificate_mismatch', message: expect.stringMatching(/does not go with privateKey: it certifies the key SHA256:\S+, not this private key/) });
    expect(byPath['jumpHosts[0].certificate']).toMatchObject({ code: 'certificate_expired', message: expect.stringContaining('expired at 2020-01-02T00:00:00.000Z') });
    expect(byPath['jumpHosts[1].privateKey']).toMatchObject({ code: 'required' });
    expect(byPath['jumpHosts[2].privateKey']).toMatchObject({ code: 'invalid_key' });
    // A jump host is always pinned; a host certificate does not log in.
    const unpinned = await call('POST', '/v1/clusters', { ...base(), jumpHosts: [{ host: 'b.example.org', user: 'erg' }] });
    expect(unpinned.status).toBe(400);
    expect(issues(unpinned.body).map((i) => i.path)).toContain('jumpHosts[0].hostKeySha256');
    const hostCert = await call('POST', '/v1/clusters', { ...base(), certificate: ca.sign(key, { host: true }) });
    expect(hostCert.status).toBe(400);
    expect(issues(hostCert.body)[0]).toMatchObject({ path: 'certificate', code: 'certificate_mismatch', message: expect.stringContaining('host certificate') });
    const notACert = await call('POST', '/v1/clusters', { ...base(), certificate: key.publicKey });
    expect(notACert.status).toBe(400);
    expect(issues(notACert.body)[0]).toMatchObject({ path: 'certificate' });
  });

  test('PUT …/credentials rotates only what is given, bumps the version, and is audited', async () => {
    const body = { ...base(), certificate: ca.sign(key, { serial: 1 }) };
    expect((await call('POST', '/v1/clusters', body)).status).toBe(201);
    const url = `/v1/clusters/${body.name}/credentials`;

    // A new certificate alone: the key is kept.
    const rotated = await call('PUT', url, { certificate: ca.sign(key, { serial: 2 }) });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ credentialsVersion: 2, certificate: { serial: '2' } });
    expect(rotated.body.credentialsUpdatedAt).not.toBeNull();

    // A new key without a certificate: the stored one certifies the old key.
    const newKey = makeTestKey(dir, 'erg-new');
    const mismatch = await call('PUT', url, { privateKey: newKey.privateKey });
    expect(mismatch.status).toBe(400);
    expect(issues(mismatch.body)).toEqual([
      expect.objectContaining({ path: 'certificate', code: 'certificate_mismatch', message: expect.stringMatching(/^the stored certificate does not certify the new privateKey: .*send the new key's certificate with it, or certificate: null$/) }),
    ]);
    // With its certificate, or dropping the certificate, it goes.
    const both = await call('PUT', url, { privateKey: newKey.privateKey, certificate: ca.sign(newKey, { serial: 3 }) });
    expect(both.status).toBe(200);
    expect(both.body).toMatchObject({ credentialsVersion: 3, certificate: { serial: '3' } });
    const stored = (await findClusterByName(t.db, body.name))!;
    expect(openClusterCredentials(secretBoxFrom(t.config), stored).privateKey).toBe(newKey.privateKey);

    // The jump hosts: replaced as a whole; [] removes them.
    const chain = await call('PUT', url, { jumpHosts: [{ host: 'bastion.example.org', user: 'erg', hostKeySha256: FP('B') }] });
    expect(chain.body.jumpHosts).toHaveLength(1);
    expect((await call('PUT', url, { jumpHosts: [] })).body.jumpHosts).toEqual([]);
    const dropped = await call('PUT', url, { certificate: null });
    expect(dropped.body).toMatchObject({ certificate: null, credentialsVersion: 6 });

    // Nothing to change, or an unknown field: 400 with the path.
    expect(issues((await call('PUT', url, {})).body)[0]).toMatchObject({ path: '(root)', code: 'required' });
    expect((await call('PUT', url, { user: 'x' })).status).toBe(400);
    expect((await call('PUT', '/v1/clusters/nope/credentials', { certificate: null })).status).toBe(404);

    const audited = await waitFor(
      async () => {
        const rows = (await listAudit(t.db, { limit: 1000 })).items.filter((r) => r.action === 'cluster.credentials' && r.resourceId === body.name);
        return rows.length >= 8 ? rows : undefined;
      },
      { timeoutMs: 10_000, what: 'the audit rows of the rotations' },
    );
    expect(audited.map((r) => r.statusCode).sort()).toEqual([200, 200, 200, 200, 200, 400, 400, 400]);
  });

  test('re-applying the same registration (PUT /v1/clusters/NAME) does not bump the version; a new key does', async () => {
    const { name, ...body } = base();
    expect((await call('PUT', `/v1/clusters/${name}`, body)).body.credentialsVersion).toBe(1);
    expect((await call('PUT', `/v1/clusters/${name}`, body)).body.credentialsVersion).toBe(1);
    const other = makeTestKey(dir, 'erg-again');
    expect((await call('PUT', `/v1/clusters/${name}`, { ...body, privateKey: other.privateKey })).body.credentialsVersion).toBe(2);
  });

  test('a certificate in its warning window or expired warns in the cluster view and on /metrics', async () => {
    // Valid 4 h, 1 h left: inside the default window (24 h, or the last quarter of the validity);
    // the jump host's: valid 1 h, 10 min left.
    const soon = { ...base(), certificate: ca.sign(key, { validity: '-3h:+1h' }) };
    const later = { ...base(), certificate: ca.sign(key, { validity: '-1m:+30d' }), jumpHosts: [{ host: 'b.example.org', user: 'erg', privateKey: bastionKey.privateKey, certificate: ca.sign(bastionKey, { validity: '-50m:+10m' }), hostKeySha256: FP('B') }] };
    expect((await call('POST', '/v1/clusters', soon)).status).toBe(201);
    expect((await call('POST', '/v1/clusters', later)).status).toBe(201);
    const view = (await call('GET', `/v1/clusters/${soon.name}`)).body;
    expect(view.certificate.status).toBe('expiring');
    expect(view.warnings).toEqual([expect.stringMatching(new RegExp(`^the cluster's certificate expires in (59|60) min \\(.*\\); rotate it: erg clusters credentials ${soon.name} --cert FILE$`))]);
    const laterView = (await call('GET', `/v1/clusters/${later.name}`)).body;
    expect(laterView.certificate.status).toBe('valid');
    expect(laterView.warnings).toEqual([expect.stringMatching(/^the certificate of jump host 1 \(b\.example\.org:22\) expires in (9|10) min/)]);
    const list = (await call('GET', '/v1/clusters')).body.items;
    expect(list.find((c: { name: string }) => c.name === soon.name).warnings).toHaveLength(1);

    const res = await t.app.inject({ method: 'GET', url: '/metrics' });
    const samples = parsePrometheusText(res.body);
    const id = (name: string) => findClusterByName(t.db, name).then((c) => c!.id);
    // An open /metrics labels clusters by id, hops by position (no host names).
    const soonId = await id(soon.name);
    const laterId = await id(later.name);
    expect(sampleValue(samples, 'erg_cluster_certificate_warning', { cluster: soonId, hop: 'login' })).toBe(1);
    expect(sampleValue(samples, 'erg_cluster_certificate_expiry_seconds', { cluster: soonId, hop: 'login' })).toBeGreaterThan(3500);
    expect(sampleValue(samples, 'erg_cluster_certificate_warning', { cluster: laterId, hop: 'login' })).toBe(0);
    expect(sampleValue(samples, 'erg_cluster_certificate_warning', { cluster: laterId, hop: 'jump1' })).toBe(1);
    expect(res.body).not.toContain('b.example.org');
  });
});
