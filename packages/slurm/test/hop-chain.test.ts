/**
 * The hop chain (hop-chain.ts): how a connection's settings become the hops one connect attempt
 * walks, what each hop is called in messages, which certificate has expired, and the failures
 * that need no server (an unusable key or certificate, a port nobody listens on).
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { utils } from 'ssh2';
import { ClusterUnreachableError, SshAuthError, type CertificateParse } from '../src';
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
    const err = await connectChain(hops, timing).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SshAuthError);
    expect((err as Error).message).toContain('cannot use the certificate for erg@login.example.org:22');
  });

  it('a private key ssh2 cannot use: SshAuthError (a configuration error), not retried as unreachable', async () => {
    const hops = hopsOf(options({ host: '127.0.0.1', port: 1 }), null, new Map());
    const err = await connectChain(hops, timing).catch((e: unknown) => e);
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
    const err = await connectChain(hops, timing).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClusterUnreachableError);
    expect(err).toMatchObject({ retryable: true });
    expect((err as Error).message).toBe(`cannot reach 127.0.0.1:${port}: connection refused (is sshd running on that port?)`);
  });
});
