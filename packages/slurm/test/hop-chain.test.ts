/**
 * The hop chain (hop-chain.ts): how a connection's settings become the hops one connect attempt
 * walks, what each hop is called in messages, which certificate has expired, and the failures
 * that need no server (an unusable key or certificate, a port nobody listens on).
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { utils } from 'ssh2';
import { AddressNotAllowedError, ClusterUnreachableError, SshAuthError, type CertificateParse } from '../src';
import { resolveConnectionOptions, type ClusterConnectionOptions } from '../src/connection-options';
import { connectChain, expiredHop, hopsOf } from '../src/hop-chain';

const certs = path.join(__dirname, 'fixtures', 'certificates');
/** Valid 2026-12-01T12:00:00Z to 20:00:00Z. */
const ed25519Cert = readFileSync(path.join(certs, 'ed25519_key-cert.pub'), 'utf8');
/** Valid forever. */
const rsaCert = readFileSync(path.join(certs, 'rsa_key-cert.pub'), 'utf8');

const base: ClusterConnectionOptions = { host: 'login.example.org', username: 'erg', privateKey: 'KEY', hostKeySha256: 'SHA256:login' };
const options = (overrides: Partial<ClusterConnectionOptions> = {}) => resolveConnectionOptions({ ...base, ...overrides });
const timing = { connectTimeoutMs: 2000, keepaliveIntervalMs: 15_000, keepaliveCountMax: 3 };
/** The chain settings of a test whose first hop is on loopback, allowed as a project's cluster policy would. */
const onLoopback = { ...timing, allowHosts: ['127.0.0.1'] };
/** login.example.org as a public name, without asking DNS. */
const publicLogin = { ...timing, resolve: async () => [{ address: '93.184.215.14', family: 4 }] };

describe('hopsOf', () => {
  it('without jump hosts is the login node alone, pinned as given, named host:port', () => {
    const [login, ...rest] = hopsOf(options({ clusterName: 'gh' }), 'SHA256:pinned', new Map());
    expect(rest).toEqual([]);
    expect(login).toEqual({
      label: 'login.example.org:22',
      account: 'erg@login.example.org:22',
      isJumpHost: false,
      host: 'login.example.org',
      port: 22,
      username: 'erg',
      privateKey: 'KEY',
      passphrase: undefined,
      certificate: null,
      certificateProblem: null,
      pin: 'SHA256:pinned',
      pinField: 'hostKeySha256',
      rotate: 'erg clusters credentials gh --cert FILE',
    });
  });

  it('puts the jump hosts first, in order, each named, pinned and rotated on its own', () => {
    const hops = hopsOf(
      options({
        port: 2222,
        certificate: ed25519Cert,
        jumpHosts: [
          { host: 'bastion.example.org', username: 'jump', privateKey: 'JKEY', hostKeySha256: 'SHA256:b1' },
          { host: 'inner.example.org', port: 2200, username: 'erg', privateKey: 'KEY', certificate: ed25519Cert, hostKeySha256: 'SHA256:b2' },
        ],
      }),
      null,
      new Map(),
    );
    expect(hops.map((h) => [h.label, h.account, h.isJumpHost, h.port, h.pin, h.pinField])).toEqual([
      ['jump host bastion.example.org:22', 'jump@bastion.example.org:22 (jump host 1)', true, 22, 'SHA256:b1', 'jumpHosts[0].hostKeySha256'],
      ['jump host inner.example.org:2200', 'erg@inner.example.org:2200 (jump host 2)', true, 2200, 'SHA256:b2', 'jumpHosts[1].hostKeySha256'],
      ['login.example.org:2222', 'erg@login.example.org:2222', false, 2222, null, 'hostKeySha256'],
    ]);
    // No cluster name: the message shows where it goes. A jump host with the cluster's own certificate is fixed by rotating that one.
    expect(hops[0]!.rotate).toBe(
      "erg clusters credentials NAME --jump 'USER@HOST:PORT,host-key=SHA256:…,key=FILE,cert=FILE' (every jump host, in order, jump host 1 with its new cert)",
    );
    expect(hops[1]!.rotate).toBe('erg clusters credentials NAME --cert FILE');
    expect(hops[1]!.certificate?.keyId).toBe('erg@gh200');
  });

  it('parses each certificate text once, and says why one cannot be used', () => {
    const cache = new Map<string, CertificateParse>();
    const o = options({ certificate: rsaCert, jumpHosts: [{ host: 'b', username: 'u', privateKey: 'K', certificate: 'not a certificate', hostKeySha256: 'SHA256:b' }] });
    const first = hopsOf(o, null, cache);
    const again = hopsOf(o, null, cache);
    expect(cache.size).toBe(2);
    expect(again[1]!.certificate).toBe(first[1]!.certificate);
    expect(first[0]!.certificate).toBeNull();
    expect(first[0]!.certificateProblem).toEqual(expect.any(String));
    expect(first[1]!.certificateProblem).toBeNull();
  });
});

describe('expiredHop', () => {
  const hops = hopsOf(options({ certificate: ed25519Cert, jumpHosts: [{ host: 'b', username: 'u', privateKey: 'K', certificate: rsaCert, hostKeySha256: 'SHA256:b' }] }), null, new Map());

  it('is the first hop whose certificate is past its end; a certificate valid forever never is', () => {
    expect(expiredHop(hops, new Date('2026-12-01T19:59:59Z'))).toBeUndefined();
    expect(expiredHop(hops, new Date('2026-12-01T20:00:00Z'))).toBe(hops[1]);
  });

  it('is none without certificates', () => {
    expect(expiredHop(hopsOf(options(), null, new Map()), new Date('2999-01-01T00:00:00Z'))).toBeUndefined();
  });
});

describe('connectChain failures that need no server', () => {
  it('a certificate that does not parse: SshAuthError naming the hop, before any connection', async () => {
    const hops = hopsOf(options({ certificate: 'not a certificate' }), null, new Map());
    const err = await connectChain(hops, publicLogin).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SshAuthError);
    expect((err as Error).message).toContain('cannot use the certificate for erg@login.example.org:22');
  });

  it('a private key ssh2 cannot use: SshAuthError (a configuration error), not retried as unreachable', async () => {
    const hops = hopsOf(options({ host: '127.0.0.1', port: 1 }), null, new Map());
    const err = await connectChain(hops, onLoopback).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SshAuthError);
    expect((err as Error).message).toContain('cannot use the private key for erg@127.0.0.1:1');
  });

  it('a port nobody listens on: ClusterUnreachableError that says the connection was refused', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    await new Promise((resolve) => server.close(resolve));
    const { private: privateKey } = utils.generateKeyPairSync('ed25519');
    const hops = hopsOf(options({ host: '127.0.0.1', port, privateKey }), null, new Map());
    const err = await connectChain(hops, onLoopback).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClusterUnreachableError);
    expect(err).toMatchObject({ retryable: true });
    expect((err as Error).message).toBe(`cannot reach 127.0.0.1:${port}: connection refused (is sshd running on that port?)`);
  });
});

describe('connectChain: where the first hop may be (the project cluster policy, allowHosts)', () => {
  const { private: privateKey } = utils.generateKeyPairSync('ed25519');

  /** A listener that counts the TCP connections it gets: an address refused must see none. */
  async function listener(): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
    let count = 0;
    const server = net.createServer((socket) => {
      count++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { port: (server.address() as net.AddressInfo).port, connections: () => count, close: () => new Promise((resolve) => server.close(() => resolve())) };
  }

  it.each([
    ['127.0.0.1', 'loopback', '127.0.0.1'],
    ['2130706433', 'loopback', '127.0.0.1'],
    ['::ffff:127.0.0.1', 'loopback', '::ffff:127.0.0.1'],
  ])('refuses %s (%s) without the allowance, before any TCP connection', async (host, cls, address) => {
    const open = await listener();
    try {
      const err = await connectChain(hopsOf(options({ host, port: open.port, privateKey }), null, new Map()), timing).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AddressNotAllowedError);
      expect(err).toMatchObject({ code: 'ERG_SSH_ADDRESS_NOT_ALLOWED', retryable: false, host, address, addressClass: cls, hop: `${host}:${open.port}` });
      expect(open.connections()).toBe(0);
    } finally {
      await open.close();
    }
  });

  it('checks every address a name resolves to, and names the one refused (IPv4, IPv6, IPv4-mapped)', async () => {
    const hops = hopsOf(options({ host: 'login.cluster.example', privateKey }), null, new Map());
    const answer = (...addresses: string[]) => ({ ...timing, resolve: async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })) });
    for (const [addresses, refused, cls] of [
      [['93.184.215.14', '10.1.2.3'], '10.1.2.3', 'private'],
      [['2606:4700:4700::1111', 'fd00:ec2::254'], 'fd00:ec2::254', 'private'],
      [['::ffff:169.254.169.254'], '::ffff:169.254.169.254', 'link-local'],
      [['169.254.169.254'], '169.254.169.254', 'link-local'],
    ] as const) {
      const err = await connectChain(hops, answer(...addresses)).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'ERG_SSH_ADDRESS_NOT_ALLOWED', host: 'login.cluster.example', address: refused, addressClass: cls });
      expect((err as Error).message).toContain(`login.cluster.example resolves to ${refused}, a ${cls} address`);
    }
  });

  it('connects to the address it checked, not to what the name resolves to later', async () => {
    const open = await listener();
    try {
      let calls = 0;
      // The first answer is checked and used; a second lookup (what DNS rebinding counts on) would get a forbidden address.
      const resolve = async () => (calls++ === 0 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '169.254.169.254', family: 4 }]);
      const hops = hopsOf(options({ host: 'login.rebind.test', port: open.port, privateKey }), null, new Map());
      const err = await connectChain(hops, { ...timing, allowHosts: ['127.0.0.1'], resolve }).catch((e: unknown) => e);
      // The listener is no sshd: the handshake fails, after the TCP connection reached the checked address.
      expect(err).toBeInstanceOf(ClusterUnreachableError);
      expect(open.connections()).toBe(1);
      expect(calls).toBe(1);
    } finally {
      await open.close();
    }
  });

  it('a name that does not resolve: a retryable ClusterUnreachableError naming it', async () => {
    const resolve = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.example'), { code: 'ENOTFOUND' });
    };
    const err = await connectChain(hopsOf(options({ host: 'nowhere.example', privateKey }), null, new Map()), { ...timing, resolve }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClusterUnreachableError);
    expect(err).toMatchObject({ retryable: true, message: 'cannot reach nowhere.example:22: host name does not resolve (ENOTFOUND nowhere.example)' });
  });

  it('checks only the first hop: the jump host resolves the login node in its own network', async () => {
    const hops = hopsOf(
      options({ host: '10.0.0.5', privateKey, jumpHosts: [{ host: '127.0.0.1', port: 1, username: 'j', privateKey, hostKeySha256: 'SHA256:b' }] }),
      null,
      new Map(),
    );
    const refused = await connectChain(hops, timing).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'ERG_SSH_ADDRESS_NOT_ALLOWED', hop: 'jump host 127.0.0.1:1', address: '127.0.0.1' });
    // Allowed, the jump host is tried (nobody listens on port 1); the private login node behind it was never checked.
    expect(await connectChain(hops, onLoopback).catch((e: unknown) => e)).toBeInstanceOf(ClusterUnreachableError);
  });
});
