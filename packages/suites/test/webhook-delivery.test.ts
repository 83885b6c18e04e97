// Delivery-time checks (issue 10 §3): the name a webhook URL uses is resolved once per attempt,
// every address is checked, and the connection goes to exactly the address checked — a name
// that resolves to 127.0.0.1 reaches nothing unless the project's policy allows it. The
// resolver is the test's (no /etc/hosts edits); the receivers are real, on 127.0.0.1.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { LookupAddress } from 'node:dns';
import { closedPort } from '@erg/testkit';
import { deliverWebhook, INTERNAL_FAILURE, NO_WEBHOOK_FAILURE, viewerDeliveryError, WebhookError, type Resolver } from '@erg/suites';

const LOOPBACK_ALLOWED = { allowHttp: true, allowHosts: ['127.0.0.1'] };
const HTTP_ONLY = { allowHttp: true, allowHosts: [] };

/** A resolver that answers from a table and counts its calls. */
function fakeDns(table: Record<string, string[]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = (async (hostname: string): Promise<LookupAddress[]> => {
    calls.push(hostname);
    const answer = table[hostname];
    if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  }) as Resolver & { calls: string[] };
  resolve.calls = calls;
  return resolve;
}

async function failure(p: Promise<unknown>): Promise<WebhookError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(WebhookError);
  return err as WebhookError;
}

describe('webhook delivery: addresses checked when delivering', () => {
  let server: http.Server;
  let port = 0;
  const received: { host: string | undefined; body: string }[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ host: req.headers.host, body });
        res.statusCode = 500;
        // A body a viewer must never see, with an internal address in it.
        res.end('internal error at 10.9.8.7: db password=hunter2');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  test('a name that resolves to 127.0.0.1 is refused, and nothing is sent', async () => {
    const dns = fakeDns({ 'hooks.rebind.test': ['127.0.0.1'] });
    const before = received.length;
    const err = await failure(deliverWebhook(`http://hooks.rebind.test:${port}/hook`, '{}', { deliveryId: 'd1', secret: null, policy: HTTP_ONLY, resolve: dns }));
    expect(err.message).toBe('delivery failed (address not allowed)');
    expect(err.permanent).toBe(true);
    expect(err.detail).toContain('127.0.0.1 is loopback');
    expect(received.length).toBe(before);
  });

  test('one internal address among public ones is enough to refuse', async () => {
    const dns = fakeDns({ 'mixed.test': ['8.8.8.8', '::ffff:169.254.169.254'] });
    const err = await failure(deliverWebhook('https://mixed.test/hook', '{}', { deliveryId: 'd2', secret: null, resolve: dns }));
    expect(err.message).toBe('delivery failed (address not allowed)');
    expect(err.detail).toContain('link-local');
  });

  test('allowed by the policy, the same name is delivered to the very address checked (resolved once)', async () => {
    // No real DNS knows this name: the request can only have gone to the address the check saw.
    const dns = fakeDns({ 'ci.rebind.test': ['127.0.0.1'] });
    await failure(deliverWebhook(`http://ci.rebind.test:${port}/hook`, '{"x":1}', { deliveryId: 'd3', secret: null, policy: LOOPBACK_ALLOWED, resolve: dns }));
    expect(dns.calls).toEqual(['ci.rebind.test']);
    expect(received.at(-1)).toEqual({ host: `ci.rebind.test:${port}`, body: '{"x":1}' });
  });

  test('a listed name may resolve to an internal address', async () => {
    const dns = fakeDns({ 'runner.ci.internal': ['127.0.0.1'] });
    const err = await failure(
      deliverWebhook(`http://runner.ci.internal:${port}/hook`, '{}', { deliveryId: 'd4', secret: null, policy: { allowHttp: true, allowHosts: ['*.ci.internal'] }, resolve: dns }),
    );
    // It got through to the receiver, which answered 500.
    expect(err.message).toBe('delivery failed (status 500)');
  });

  test('what the receiver answered stays out of the message; the log detail has the status', async () => {
    const err = await failure(deliverWebhook(`http://127.0.0.1:${port}/hook`, '{}', { deliveryId: 'd5', secret: null, policy: LOOPBACK_ALLOWED }));
    expect(err.message).toBe('delivery failed (status 500)');
    expect(err.permanent).toBe(false);
    expect(err.message).not.toMatch(/10\.9\.8\.7|hunter2|127\.0\.0\.1/);
    expect(err.detail).toContain('500');
  });

  test('literal loopback URLs in any spelling are refused without a policy entry', async () => {
    for (const url of [`http://2130706433:${port}/`, `http://0x7f.1:${port}/`, `http://[::ffff:127.0.0.1]:${port}/`, `http://localhost:${port}/`]) {
      const before = received.length;
      const err = await failure(deliverWebhook(url, '{}', { deliveryId: 'd6', secret: null, policy: HTTP_ONLY }));
      expect(err.message).toBe('delivery failed (address not allowed)');
      expect(received.length).toBe(before);
    }
    // Allowed, the odd spelling reaches the receiver.
    expect((await failure(deliverWebhook(`http://0x7f.1:${port}/`, '{}', { deliveryId: 'd7', secret: null, policy: LOOPBACK_ALLOWED }))).message).toBe('delivery failed (status 500)');
  });

  test('http, credentials and unknown names fail with messages that name only the reason', async () => {
    expect((await failure(deliverWebhook(`http://127.0.0.1:${port}/`, '{}', { deliveryId: 'd8', secret: null }))).message).toBe('delivery failed (http not allowed)');
    expect((await failure(deliverWebhook('https://u:p@ci.example/', '{}', { deliveryId: 'd9', secret: null }))).message).toBe('delivery failed (credentials in URL not allowed)');
    const unknown = await failure(deliverWebhook('https://nowhere.test/', '{}', { deliveryId: 'd10', secret: null, resolve: fakeDns({}) }));
    expect(unknown.message).toBe('delivery failed (host not found)');
    expect(unknown.permanent).toBe(false);
  });

  test('a refused connection says so and nothing more', async () => {
    const closed = await closedPort();
    const err = await failure(deliverWebhook(`http://127.0.0.1:${closed}/hook`, '{}', { deliveryId: 'd11', secret: null, policy: LOOPBACK_ALLOWED, timeoutMs: 2000 }));
    expect(err.message).toBe('delivery failed (connection refused)');
    expect(err.detail).toMatch(/ECONNREFUSED/);
  });

  test('redirects are not followed', async () => {
    const redirector = http.createServer((_req, res) => {
      res.writeHead(307, { location: `http://127.0.0.1:${port}/internal` }).end();
    });
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
    try {
      const before = received.length;
      const err = await failure(deliverWebhook(`http://127.0.0.1:${(redirector.address() as AddressInfo).port}/`, '{}', { deliveryId: 'd12', secret: null, policy: LOOPBACK_ALLOWED }));
      expect(err.message).toBe('delivery failed (status 307)');
      expect(received.length).toBe(before);
    } finally {
      await new Promise((resolve) => redirector.close(resolve));
    }
  });
});

describe('webhook delivery over TLS to a pinned address', () => {
  let dir = '';
  let cert = '';
  let server: https.Server;
  let port = 0;
  const sni: (string | undefined)[] = [];
  const hosts: (string | undefined)[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'erg-webhook-tls-'));
    // A self-signed certificate for hooks.ci.test only (not for 127.0.0.1).
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', '/CN=hooks.ci.test',
      '-addext', 'subjectAltName=DNS:hooks.ci.test', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'),
    ], { stdio: 'ignore' });
    cert = readFileSync(path.join(dir, 'cert.pem'), 'utf8');
    server = https.createServer({ key: readFileSync(path.join(dir, 'key.pem')), cert }, (req, res) => {
      hosts.push(req.headers.host);
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    });
    server.on('secureConnection', (socket) => sni.push((socket as unknown as { servername?: string }).servername));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  test('the URL\'s name is the TLS server name and the Host, while the connection goes to the checked address', async () => {
    const dns = fakeDns({ 'hooks.ci.test': ['127.0.0.1'] });
    await deliverWebhook(`https://hooks.ci.test:${port}/hook`, '{}', { deliveryId: 't1', secret: null, policy: { allowHttp: false, allowHosts: ['127.0.0.1/32'] }, resolve: dns, ca: cert });
    expect(sni.at(-1)).toBe('hooks.ci.test');
    expect(hosts.at(-1)).toBe(`hooks.ci.test:${port}`);
    expect(dns.calls).toEqual(['hooks.ci.test']);
  });

  test('the certificate is checked against the name: another name on the same address fails', async () => {
    const dns = fakeDns({ 'other.ci.test': ['127.0.0.1'] });
    const err = await failure(deliverWebhook(`https://other.ci.test:${port}/hook`, '{}', { deliveryId: 't2', secret: null, policy: { allowHttp: false, allowHosts: ['127.0.0.1'] }, resolve: dns, ca: cert }));
    expect(err.message).toBe('delivery failed (TLS error)');
  });

  test('an untrusted certificate fails', async () => {
    const dns = fakeDns({ 'hooks.ci.test': ['127.0.0.1'] });
    const err = await failure(deliverWebhook(`https://hooks.ci.test:${port}/hook`, '{}', { deliveryId: 't3', secret: null, policy: { allowHttp: false, allowHosts: ['127.0.0.1'] }, resolve: dns }));
    expect(err.message).toBe('delivery failed (TLS error)');
  });
});

describe('viewerDeliveryError', () => {
  test('the texts erg stores now pass as they are; older ones, which named receivers, do not', () => {
    for (const text of ['delivery failed (status 503)', 'delivery failed (connection refused)', 'delivery failed (address not allowed)', INTERNAL_FAILURE, NO_WEBHOOK_FAILURE]) {
      expect(viewerDeliveryError(text)).toBe(text);
    }
    expect(viewerDeliveryError('POST http://10.0.0.5:5432/ failed: ECONNREFUSED')).toBe('delivery failed');
    expect(viewerDeliveryError('POST https://ci.example/hook answered 500 Internal Server Error')).toBe('delivery failed');
    expect(viewerDeliveryError('delivery failed (status 500) from 10.0.0.5')).toBe('delivery failed');
    expect(viewerDeliveryError(null)).toBeNull();
  });
});
