/**
 * ClusterConnection through jump hosts and with OpenSSH user certificates, against real sshd
 * processes of the test's own (@erg/testkit test-sshd): bastions that only forward (no shell, no
 * tty, PermitOpen), and a login node on this machine — so its sessions reach the local Slurm
 * cluster — that takes only certificates of a test CA (TrustedUserCAKeys, no authorized keys).
 * The local cluster's shared sshd (127.0.0.1:2222) is not touched.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  LOOPBACK_ALLOW_HOSTS, makeTestCa, makeTestKey, startTcpRelay, startTestSshd, waitFor, type TcpRelay, type TestCa, type TestKey, type TestSshd,
} from '@erg/testkit';
import {
  CertificateExpiredError,
  ClusterConnection,
  ClusterUnreachableError,
  ConnectionLostError,
  HostKeyMismatchError,
  SshAuthError,
  type ClusterConnectionOptions,
  type JumpHostOptions,
} from '../src';

jest.setTimeout(120_000);

let keys: string;
let ca: TestCa;
/** erg's key for the login node: accepted only with a certificate of `ca`. */
let ergKey: TestKey;
let ergCert: string;
/** The bastions' own keys (authorized there), and the second bastion's certificate. */
let bastionKey: TestKey;
let login: TestSshd;
let bastion: TestSshd;
let bastion2: TestSshd;
const opened: ClusterConnection[] = [];

function connect(overrides: Partial<ClusterConnectionOptions> = {}): ClusterConnection {
  const c = new ClusterConnection({
    host: login.host,
    port: login.port,
    username: 'root',
    privateKey: ergKey.privateKey,
    certificate: ergCert,
    hostKeySha256: login.hostKeySha256,
    clusterName: 'gh',
    connectTimeoutMs: 5000,
    // Every sshd here listens on loopback (the first hop is what erg checks).
    allowHosts: LOOPBACK_ALLOW_HOSTS,
    ...overrides,
  });
  opened.push(c);
  return c;
}

const viaBastion = (overrides: Partial<JumpHostOptions> = {}): JumpHostOptions => ({
  host: bastion.host, port: bastion.port, username: 'root', privateKey: bastionKey.privateKey, hostKeySha256: bastion.hostKeySha256, ...overrides,
});

beforeAll(async () => {
  keys = mkdtempSync(path.join(os.tmpdir(), 'erg-jump-cert-'));
  ca = makeTestCa(keys);
  ergKey = makeTestKey(keys, 'erg');
  ergCert = ca.sign(ergKey, { principals: ['root'], keyId: 'erg@gh', serial: 10 });
  bastionKey = makeTestKey(keys, 'bastion-user');
  login = await startTestSshd({ role: 'login', trustedUserCaKeys: [ca.key.publicKey] });
  // Forwarding only, to the login node (and, for the first, to the second bastion).
  bastion2 = await startTestSshd({ role: 'jump', trustedUserCaKeys: [ca.key.publicKey], permitOpen: [`127.0.0.1:${login.port}`] });
  bastion = await startTestSshd({ role: 'jump', authorizedKeys: [bastionKey.publicKey], permitOpen: [`127.0.0.1:${login.port}`, `127.0.0.1:${bastion2.port}`] });
});

afterAll(async () => {
  await Promise.all(opened.map((c) => c.close()));
  await Promise.all([login, bastion, bastion2].map((s) => s?.stop()));
  if (keys) rmSync(keys, { recursive: true, force: true });
});

describe('OpenSSH user certificates', () => {
  it('log in where only the CA is trusted, and reach the local Slurm cluster', async () => {
    const conn = connect();
    const r = await conn.exec('id -un; sinfo --version');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^root\nslurm(-wlm)? \d/);
    // SFTP rides the same certificate-authenticated connection.
    const dir = `/tmp/${path.basename(keys)}-sftp`;
    await conn.writeFiles(dir, [{ name: 'a.txt', content: 'hello', mode: 0o600 }]);
    expect((await conn.readFile(`${dir}/a.txt`))?.text).toBe('hello');
    await conn.exec(`rm -rf ${dir}`);
  });

  it.each(['rsa', 'ecdsa'] as const)('work with %s keys too', async (type) => {
    const key = makeTestKey(keys, `erg-${type}`, type);
    const conn = connect({ privateKey: key.privateKey, certificate: ca.sign(key, { serial: 20 }) });
    expect((await conn.exec('echo ok')).stdout).toBe('ok\n');
  });

  it('without the certificate the same key is refused: the login node takes certificates only', async () => {
    const err = await connect({ certificate: null }).exec('true').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SshAuthError);
  });

  it('a certificate of a CA the server does not trust fails as SshAuthError that describes the certificate', async () => {
    const other = makeTestCa(keys, 'other-ca');
    const err = await connect({ certificate: other.sign(ergKey, { keyId: 'untrusted' }) }).exec('true').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SshAuthError);
    expect((err as Error).message).toMatch(/failed with the certificate \(key id "untrusted".*TrustedUserCAKeys/);
  });

  it('an expired certificate is not offered at all: CertificateExpiredError, which says how to rotate it, and no backoff', async () => {
    const expired = ca.sign(ergKey, { validity: '20200101:20200102' });
    const conn = connect({ certificate: expired });
    const err = await conn.exec('true').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CertificateExpiredError);
    expect(err).toMatchObject({ code: 'ERG_SSH_CERTIFICATE_EXPIRED', retryable: false });
    expect((err as Error).message).toBe(
      `certificate expired (the certificate for root@${login.host}:${login.port} was valid until 2020-01-02T00:00:00.000Z); rotate it: erg clusters credentials gh --cert FILE`,
    );
    expect(conn.state).toBe('idle');
    expect(conn.lastError).toBe(err);
  });

  it('a session whose certificate expires takes no new work; what runs on it finishes', async () => {
    const conn = connect({ certificate: ca.sign(ergKey, { validity: '-1m:+6s', serial: 30 }) });
    const running = conn.exec('sleep 8; echo finished', { timeoutMs: 30_000 });
    await waitFor(() => conn.channelStats.open === 1, { what: 'the long command to start' });
    // Past the certificate's end: new work is refused, the command started before goes on.
    await waitFor(async () => (await conn.exec('true').catch((e: unknown) => e)) instanceof CertificateExpiredError, {
      timeoutMs: 20_000, intervalMs: 500, what: 'the certificate to expire',
    });
    expect((await running).stdout).toBe('finished\n');
  });
});

describe('jump hosts', () => {
  it('reach the login node through one bastion that only forwards', async () => {
    const conn = connect({ jumpHosts: [viaBastion()] });
    expect((await conn.exec('id -un; squeue --version')).stdout).toMatch(/^root\nslurm(-wlm)? \d/);
    // The bastion itself runs nothing: ForceCommand /bin/false.
    const direct = connect({ host: bastion.host, port: bastion.port, privateKey: bastionKey.privateKey, certificate: null, hostKeySha256: bastion.hostKeySha256 });
    expect((await direct.exec('echo should-not-print')).code).toBe(1);
  });

  it('reach it through two, the second logging in with a certificate', async () => {
    const second: JumpHostOptions = { host: bastion2.host, port: bastion2.port, username: 'root', privateKey: ergKey.privateKey, certificate: ergCert, hostKeySha256: bastion2.hostKeySha256 };
    const conn = connect({ jumpHosts: [viaBastion(), second] });
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => conn.exec(`echo ${i}`)));
    expect(results.map((r) => r.stdout)).toEqual(Array.from({ length: 12 }, (_, i) => `${i}\n`));
    await conn.close();
    expect(conn.state).toBe('closed');
  });

  it('a jump host whose certificate expired is named, and nothing is attempted', async () => {
    const second: JumpHostOptions = {
      host: bastion2.host, port: bastion2.port, username: 'root', privateKey: ergKey.privateKey,
      certificate: ca.sign(ergKey, { validity: '20200101:20200102' }), hostKeySha256: bastion2.hostKeySha256,
    };
    const err = await connect({ jumpHosts: [viaBastion(), second] }).exec('true').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CertificateExpiredError);
    expect((err as Error).message).toContain(`the certificate for root@${bastion2.host}:${bastion2.port} (jump host 2) was valid until 2020-01-02`);
    expect((err as Error).message).toMatch(/rotate it: erg clusters credentials gh --jump .*jump host 2 with its new cert/);
    // The same certificate as the login node's (the jump host has no key of its own): rotating that one fixes both.
    const shared = ca.sign(ergKey, { validity: '20200101:20200102' });
    const both = await connect({ certificate: shared, jumpHosts: [viaBastion(), { ...second, certificate: shared }] }).exec('true').catch((e: unknown) => e);
    expect((both as Error).message).toMatch(/\(jump host 2\) was valid until .*; rotate it: erg clusters credentials gh --cert FILE$/);
  });

  it('a bastion that may not forward to the login node says so, naming both', async () => {
    const strict = await startTestSshd({ role: 'jump', authorizedKeys: [bastionKey.publicKey], permitOpen: ['127.0.0.1:1'] });
    try {
      const err = await connect({ jumpHosts: [viaBastion({ port: strict.port, hostKeySha256: strict.hostKeySha256 })] }).exec('true').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ClusterUnreachableError);
      expect((err as Error).message).toContain(`cannot reach ${login.host}:${login.port}: jump host 127.0.0.1:${strict.port} refused to forward`);
    } finally {
      await strict.stop();
    }
  });

  it('a bastion that refuses erg\'s key fails as SshAuthError naming the jump host', async () => {
    const err = await connect({ jumpHosts: [viaBastion({ privateKey: ergKey.privateKey })] }).exec('true').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SshAuthError);
    expect((err as Error).message).toContain(`at jump host ${bastion.host}:${bastion.port}`);
  });

  it('a bastion whose host key changed: HostKeyMismatchError naming the hop and its setting, never retried silently', async () => {
    const moved = await startTestSshd({ role: 'jump', authorizedKeys: [bastionKey.publicKey], permitOpen: [`127.0.0.1:${login.port}`] });
    try {
      const pinned = moved.hostKeySha256;
      const conn = connect({ jumpHosts: [viaBastion({ port: moved.port, hostKeySha256: pinned })], backoff: { initialMs: 60_000, maxMs: 60_000, jitter: 0 } });
      expect((await conn.exec('echo before')).stdout).toBe('before\n');
      await moved.restart({ newHostKey: true });
      // The old chain still works (its keys were checked when it connected); drop it so a new one is made.
      await conn.close();
      const again = connect({ jumpHosts: [viaBastion({ port: moved.port, hostKeySha256: pinned })], backoff: { initialMs: 60_000, maxMs: 60_000, jitter: 0 } });
      const err = await again.exec('true').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(HostKeyMismatchError);
      expect(err).toMatchObject({ code: 'ERG_SSH_HOST_KEY_MISMATCH', retryable: false, hostPort: `jump host 127.0.0.1:${moved.port}`, expected: pinned, actual: moved.hostKeySha256 });
      expect((err as Error).message).toContain(`host key of jump host 127.0.0.1:${moved.port} does not match`);
      expect((err as Error).message).toContain("update the cluster's jumpHosts[0].hostKeySha256");
      // Backing off: the next call fails at once with the same error, without a new attempt.
      const started = Date.now();
      expect(await again.exec('true').catch((e: unknown) => e)).toBe(err);
      expect(Date.now() - started).toBeLessThan(100);
      expect(again.state).toBe('backoff');
    } finally {
      await moved.stop();
    }
  });

  it('a bastion that drops ends the session with ConnectionLostError naming it; the next call reconnects', async () => {
    let relay: TcpRelay | null = null;
    try {
      relay = await startTcpRelay({ host: bastion.host, port: bastion.port });
      const conn = connect({ jumpHosts: [viaBastion({ port: relay.port })], keepaliveIntervalMs: 1000, keepaliveCountMax: 2 });
      expect((await conn.exec('echo up')).stdout).toBe('up\n');
      const inFlight = conn.exec('sleep 30', { timeoutMs: 60_000 });
      await waitFor(() => conn.channelStats.open === 1, { what: 'the command to start' });
      relay.cut();
      const err = await inFlight.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConnectionLostError);
      expect((err as Error).message).toContain(`jump host ${bastion.host}:${relay.port} closed the connection`);
      expect((await conn.exec('echo back')).stdout).toBe('back\n');
    } finally {
      await relay?.close();
    }
  });
});

describe('rotating credentials', () => {
  it('reconfigure: a command in flight finishes on the old session; new work uses the new key and certificate', async () => {
    const oldKey = makeTestKey(keys, 'erg-old');
    const conn = connect({ privateKey: oldKey.privateKey, certificate: ca.sign(oldKey, { serial: 40 }), jumpHosts: [viaBastion()] });
    // Each session is told apart by its client port on the login node ($SSH_CONNECTION), not by counting
    // the login node's connections: other tests' connections open and close meanwhile.
    const clientPort = (stdout: string) => Number(stdout.trim().split(/\s+/)[1]);
    const oldPort = clientPort((await conn.exec('echo $SSH_CONNECTION')).stdout);
    const established = async (port: number) =>
      Number((await conn.exec(`ss -Htn state established '( sport = :${login.port} and dport = :${port} )' | wc -l`)).stdout.trim());
    // The long command runs until the test lets it finish (a file it waits for), so no timing decides the test.
    const release = path.join(keys, 'release-in-flight');
    const inFlight = conn.exec(`while [ ! -e '${release}' ]; do sleep 0.1; done; echo survived`, { timeoutMs: 60_000 });
    await waitFor(() => conn.channelStats.open === 1, { what: 'the long command to start' });

    const newKey = makeTestKey(keys, 'erg-new');
    conn.reconfigure({
      host: login.host, port: login.port, username: 'root', privateKey: newKey.privateKey, certificate: ca.sign(newKey, { serial: 41 }),
      jumpHosts: [viaBastion()], hostKeySha256: login.hostKeySha256, clusterName: 'gh', allowHosts: LOOPBACK_ALLOW_HOSTS,
    });
    // The old key is no good any more for new logins; the new one is.
    login.revoke([oldKey.publicKey]);
    const newPort = clientPort((await conn.exec('echo $SSH_CONNECTION')).stdout);
    // A new session (the revoked key could not have opened it) beside the old one, still running the command.
    expect(newPort).not.toBe(oldPort);
    expect(await established(oldPort)).toBe(1);
    expect((await conn.exec('echo rotated')).stdout).toBe('rotated\n');
    writeFileSync(release, '');
    expect((await inFlight).stdout).toBe('survived\n');
    // Both sessions were open at once; the old one closes once its command is done.
    await waitFor(async () => (await established(oldPort)) === 0, { timeoutMs: 15_000, intervalMs: 250, what: 'the retired session to close' });
  });
});
