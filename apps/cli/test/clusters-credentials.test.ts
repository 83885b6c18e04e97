import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseJumpSpec } from '../src/commands/clusters';
import { erg, routes, tempDir, type RecordedRequest } from './helpers';

const KEY = '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n';
const CERT = 'ssh-ed25519-cert-v01@openssh.com AAAAIHNzaC1lZDI1NTE5LWNlcnQtdjAxQG9wZW5zc2guY29t erg';
const FP = 'SHA256:' + 'B'.repeat(43);

function files(): { dir: string; key: string; cert: string } {
  const dir = tempDir();
  writeFileSync(path.join(dir, 'erg_key'), KEY);
  writeFileSync(path.join(dir, 'erg_key-cert.pub'), `${CERT}\n`);
  return { dir, key: path.join(dir, 'erg_key'), cert: path.join(dir, 'erg_key-cert.pub') };
}

const CERT_VIEW = {
  type: 'ssh-ed25519-cert-v01@openssh.com', keyId: 'erg@gh', serial: '7', principals: ['alice'], validAfter: '2026-12-01T08:00:00.000Z',
  validBefore: '2026-12-01T16:00:00.000Z', status: 'expiring', expiresInS: 5400, publicKeySha256: FP, signingKeySha256: FP,
};
const view = {
  id: 'c', name: 'gh', host: 'login', port: 22, user: 'alice', hostKeySha256: FP, hostKeyPolicy: 'pinned', defaultPartition: null, workDir: '/w',
  agentCommand: 'node', agentApiUrl: null, modelIdleW: 60, modelMaxW: 250, maxConcurrentRuns: null, powerHelper: '/usr/local/sbin/erg-power-helper',
  capabilities: null, lastError: null, lastContactAt: null, createdAt: '2026-11-30T12:00:00.000Z',
  certificate: CERT_VIEW,
  jumpHosts: [{ host: 'bastion.example.org', port: 22, user: 'alice', hostKeySha256: FP, ownKey: false, certificate: CERT_VIEW }],
  credentialsVersion: 3, credentialsUpdatedAt: '2026-12-01T14:30:00.000Z',
  warnings: ["the cluster's certificate expires in 1 h 30 min (2026-12-01T16:00:00.000Z); rotate it: erg clusters credentials gh --cert FILE"],
};

describe('--jump USER@HOST[:PORT],host-key=…[,key=FILE][,cert=FILE]', () => {
  test('a jump host with the cluster\'s key, and one with its own key and certificate', () => {
    const { dir, key, cert } = files();
    expect(parseJumpSpec(`erg@bastion.example.org,host-key=${FP}`, dir)).toEqual({ host: 'bastion.example.org', port: 22, user: 'erg', hostKeySha256: FP });
    expect(parseJumpSpec(`erg@[fd00::1]:2200,host-key=${FP},key=${key},cert=${path.basename(cert)}`, dir)).toEqual({
      host: 'fd00::1', port: 2200, user: 'erg', hostKeySha256: FP, privateKey: KEY, certificate: CERT,
    });
  });

  test.each([
    ['bastion.example.org,host-key=x', /expected USER@HOST\[:PORT\]/],
    ['erg@bastion', /host-key= is required \(jump hosts are always pinned\)[\s\S]*ssh-keyscan -p 22 bastion/],
    [`erg@bastion,host-key=${FP},cert=c.pub`, /cert= needs key=/],
    [`erg@bastion,host-key=${FP},password=x`, /unknown part "password=x"/],
    [`erg@bastion:70000,host-key=${FP}`, /port 70000 is not a port number/],
    [`erg@bastion,host-key=${FP},key=/nonexistent/k`, /--jump key= \/nonexistent\/k: cannot read it/],
  ])('%s is a usage error', (spec, why) => {
    let thrown: unknown;
    try {
      parseJumpSpec(spec, tempDir());
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toMatchObject({ exitCode: 2 });
    expect(`${(thrown as Error).message}\n${(thrown as { hint?: string }).hint ?? ''}`).toMatch(why);
  });
});

describe('erg clusters credentials (scripted API)', () => {
  test('--key and --cert: the files are sent, nothing else; the answer says the version and warns', async () => {
    const { key, cert } = files();
    const seen: RecordedRequest[] = [];
    const out = await erg(['clusters', 'credentials', 'gh', '--key', key, '--cert', cert], {
      api: routes({ 'PUT /v1/clusters/gh/credentials': (req) => (seen.push(req), { status: 200, body: view }) }),
    });
    expect(out.code).toBe(0);
    expect(JSON.parse(seen[0]!.body)).toEqual({ privateKey: KEY, certificate: CERT });
    expect(out.stdout).toMatch(/^Credentials of gh rotated \(version 3\): certificate valid until 2026-12-01T16:00:00.000Z \(in 90 min\); key id "erg@gh", serial 7, principals alice; via alice@bastion.example.org:22\n$/);
    expect(out.stderr).toContain("warning: the cluster's certificate expires in 1 h 30 min");
  });

  test('--no-cert sends null, --no-jump an empty chain, repeated --jump a chain in order', async () => {
    const seen: RecordedRequest[] = [];
    const api = routes({ 'PUT /v1/clusters/gh/credentials': (req) => (seen.push(req), { status: 200, body: view }) });
    expect((await erg(['clusters', 'credentials', 'gh', '--no-cert', '--no-jump'], { api })).code).toBe(0);
    expect(JSON.parse(seen[0]!.body)).toEqual({ certificate: null, jumpHosts: [] });
    expect((await erg(['clusters', 'credentials', 'gh', '--jump', `a@b1,host-key=${FP}`, '--jump', `a@b2:2222,host-key=${FP}`], { api })).code).toBe(0);
    expect(JSON.parse(seen[1]!.body).jumpHosts.map((j: { host: string; port: number }) => `${j.host}:${j.port}`)).toEqual(['b1:22', 'b2:2222']);
  });

  test('nothing to change is a usage error before any request', async () => {
    const out = await erg(['clusters', 'credentials', 'gh']);
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/nothing to change: give --key, --cert \(or --no-cert\) or --jump \(or --no-jump\)/);
    expect(out.requests).toEqual([]);
  });

  test('refused fields name their flags, a jump host\'s its --jump', async () => {
    const { cert } = files();
    const api = routes({
      'PUT /v1/clusters/gh/credentials': {
        status: 400,
        body: {
          error: {
            code: 'ERG_VALIDATION', message: 'invalid request body',
            issues: [
              { path: 'certificate', code: 'certificate_mismatch', message: 'does not go with the stored privateKey' },
              { path: 'jumpHosts[1].certificate', code: 'certificate_expired', message: 'expired at 2020-01-02T00:00:00.000Z' },
            ],
          },
        },
      },
    });
    const out = await erg(['clusters', 'credentials', 'gh', '--cert', cert, '--jump', `a@b1,host-key=${FP}`], { api });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain('certificate: does not go with the stored privateKey (--cert)');
    expect(out.stderr).toContain('jumpHosts[1].certificate: expired at 2020-01-02T00:00:00.000Z (--jump #2)');
  });
});

describe('erg clusters add with --cert and --jump; show and list', () => {
  test('add sends the certificate and the chain', async () => {
    const { key, cert } = files();
    const seen: RecordedRequest[] = [];
    const out = await erg(
      ['clusters', 'add', '--name', 'gh', '--host', 'login', '--user', 'alice', '--key-file', key, '--cert', cert, '--host-key', FP, '--work-dir', '/w', '--jump', `alice@bastion.example.org,host-key=${FP}`],
      { api: routes({ 'POST /v1/clusters': (req) => (seen.push(req), { status: 201, body: view }) }) },
    );
    expect(out.code).toBe(0);
    expect(JSON.parse(seen[0]!.body)).toMatchObject({ certificate: CERT, jumpHosts: [{ host: 'bastion.example.org', port: 22, user: 'alice', hostKeySha256: FP }] });
  });

  test('show lists the certificate, each jump host, the credentials version and the warnings; list shows the first warning', async () => {
    const api = routes({ 'GET /v1/clusters/gh': { status: 200, body: view }, 'GET /v1/clusters': { status: 200, body: { items: [view] } } });
    const show = await erg(['clusters', 'show', 'gh'], { api });
    expect(show.stdout).toMatch(/Certificate +valid until 2026-12-01T16:00:00.000Z \(in 90 min\); key id "erg@gh", serial 7, principals alice/);
    expect(show.stdout).toMatch(/Jump host 1 +alice@bastion.example.org:22, host key SHA256:B+, the cluster's key and certificate/);
    expect(show.stdout).toMatch(/Credentials +version 3, rotated 2026-12-01T14:30:00.000Z/);
    expect(show.stdout).toMatch(/Warning +the cluster's certificate expires in 1 h 30 min/);
    const list = await erg(['clusters', 'list'], { api });
    expect(list.stdout).toContain("warning: the cluster's certificate expires in 1 h 30 min");
  });
});
