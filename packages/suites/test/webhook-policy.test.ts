// Where a webhook may go (issue 10 §3): every spelling a URL can give an internal address, and the
// allow-list that lets internal CI hosts through. The address classes themselves and the
// allowance's grammar are @erg/address-policy's (packages/address-policy/test).
import { checkWebhookUrl, compilePolicy, DEFAULT_WEBHOOK_POLICY, policyIssues, webhookUrlIssues } from '@erg/suites';

const strict = compilePolicy(DEFAULT_WEBHOOK_POLICY);
const withHttp = compilePolicy({ allowHttp: true, allowHosts: [] });

describe('checkWebhookUrl at register time', () => {
  test('https by default; http only where the policy allows it', () => {
    expect(checkWebhookUrl('https://ci.example/hook', strict).ok).toBe(true);
    const http = checkWebhookUrl('http://ci.example/hook', strict);
    expect(http).toMatchObject({ ok: false, refusal: { reason: 'scheme', message: expect.stringContaining('allowHttp') } });
    expect(checkWebhookUrl('http://ci.example/hook', withHttp).ok).toBe(true);
    expect(checkWebhookUrl('ftp://ci.example/hook', withHttp)).toMatchObject({ ok: false, refusal: { reason: 'scheme' } });
  });

  test('credentials in the URL are refused, with what to do instead', () => {
    for (const url of ['https://user:pass@ci.example/hook', 'https://token@ci.example/hook', 'https://:pw@ci.example/']) {
      const checked = checkWebhookUrl(url, strict);
      expect(checked).toMatchObject({ ok: false, refusal: { reason: 'credentials' } });
      if (!checked.ok) expect(checked.refusal.message).toMatch(/webhook\.secret.*X-Erg-Signature/);
    }
  });

  // WHATWG URL reads all of these as a loopback, private or link-local address.
  test.each([
    'http://127.0.0.1/', 'http://2130706433/', 'http://0x7f.1/', 'http://0x7f000001/', 'http://0177.0.0.1/', 'http://127.1/', 'http://017700000001/',
    'http://%31%32%37.0.0.1/', 'http://[::1]/', 'http://[::ffff:127.0.0.1]/', 'http://[::ffff:7f00:1]:8080/x', 'http://[0:0:0:0:0:ffff:7f00:1]/',
    'http://0/', 'http://[::]/', 'http://169.254.169.254/latest/meta-data', 'http://0xa9.0xfe.0xa9.0xfe/', 'http://10.1/', 'http://[fd00::1]/',
    'http://[fe80::1]/', 'http://localhost/', 'http://LOCALHOST./', 'http://ci.localhost/', 'http://[64:ff9b::7f00:1]/', 'http://[::127.0.0.1]/',
  ])('%s is refused before any DNS', (url) => {
    const checked = checkWebhookUrl(url, withHttp);
    expect(checked).toMatchObject({ ok: false, refusal: { reason: 'address' } });
    if (!checked.ok) expect(checked.refusal.message).toMatch(/allowHosts/);
  });

  test('public literal addresses and names pass (names are checked when delivering)', () => {
    expect(checkWebhookUrl('https://8.8.8.8/hook', strict)).toMatchObject({ ok: true, target: { literal: '8.8.8.8' } });
    expect(checkWebhookUrl('https://[2606:4700:4700::1111]/hook', strict)).toMatchObject({ ok: true, target: { literal: '2606:4700:4700::1111' } });
    expect(checkWebhookUrl('https://internal.corp/hook', strict)).toMatchObject({ ok: true, target: { literal: null, trustedName: false } });
  });

  test('webhookUrlIssues names webhook.url', () => {
    expect(webhookUrlIssues('https://u:p@ci.example/', DEFAULT_WEBHOOK_POLICY)).toEqual([
      { path: 'webhook.url', code: 'invalid_value', message: expect.stringContaining('credentials') },
    ]);
    expect(webhookUrlIssues('https://ci.example/', DEFAULT_WEBHOOK_POLICY)).toEqual([]);
  });
});

describe('the allow-list', () => {
  const policy = compilePolicy({ allowHttp: true, allowHosts: ['ci.internal', '*.build.corp', '10.20.0.0/16', '127.0.0.1', 'fd00:1::/64', 'LOUD.Example.'] });

  test('CIDR blocks and addresses let exactly their literal addresses through', () => {
    expect(checkWebhookUrl('http://2130706433:8080/', policy).ok).toBe(true);
    expect(checkWebhookUrl('http://10.20.0.9/', policy).ok).toBe(true);
    expect(checkWebhookUrl('http://[fd00:1::9]/', policy).ok).toBe(true);
    expect(checkWebhookUrl('http://10.30.0.9/', policy).ok).toBe(false);
  });

  test('listed names (exact or below a *.suffix, any case) are trusted wherever they resolve', () => {
    expect(checkWebhookUrl('http://ci.internal/h', policy)).toMatchObject({ ok: true, target: { trustedName: true } });
    expect(checkWebhookUrl('http://CI.internal./h', policy)).toMatchObject({ ok: true, target: { trustedName: true } });
    expect(checkWebhookUrl('http://runner-7.build.corp/h', policy)).toMatchObject({ ok: true, target: { trustedName: true } });
    expect(checkWebhookUrl('http://loud.example/h', policy)).toMatchObject({ ok: true, target: { trustedName: true } });
    expect(checkWebhookUrl('http://build.corp/h', policy)).toMatchObject({ ok: true, target: { trustedName: false } });
    expect(checkWebhookUrl('http://evil-ci.internal/h', policy)).toMatchObject({ ok: true, target: { trustedName: false } });
  });

  test('localhost passes only when listed or when loopback is', () => {
    expect(checkWebhookUrl('http://localhost:9/', policy).ok).toBe(true);
    expect(checkWebhookUrl('http://localhost:9/', compilePolicy({ allowHttp: true, allowHosts: ['localhost'] })).ok).toBe(true);
    expect(checkWebhookUrl('http://localhost:9/', compilePolicy({ allowHttp: true, allowHosts: ['ci.internal'] })).ok).toBe(false);
  });
});

test('policyIssues names the allow-list entries at fault', () => {
  expect(policyIssues({ allowHttp: false, allowHosts: ['ok.example', '0.0.0.0/0'] })).toEqual([{ path: 'allowHosts.1', code: 'invalid_value', message: expect.stringMatching(/too wide/) }]);
});
