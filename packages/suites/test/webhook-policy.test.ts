// Where a webhook may go (issue 10 §3): every forbidden address range, in every spelling a URL
// or a resolver can give it, and the allow-list that lets internal CI hosts through.
import { addressRefusal, checkWebhookUrl, compilePolicy, DEFAULT_WEBHOOK_POLICY, forbiddenClass, policyIssues, webhookUrlIssues } from '@erg/suites';

const strict = compilePolicy(DEFAULT_WEBHOOK_POLICY);
const withHttp = compilePolicy({ allowHttp: true, allowHosts: [] });

describe('forbiddenClass: addresses a webhook never reaches by default', () => {
  test.each([
    ['0.0.0.0', 'unspecified'], ['0.1.2.3', 'unspecified'],
    ['10.0.0.1', 'private'], ['10.255.255.255', 'private'], ['172.16.0.1', 'private'], ['172.31.255.254', 'private'], ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'], ['100.127.255.254', 'carrier-grade NAT'],
    ['127.0.0.1', 'loopback'], ['127.255.255.254', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['224.0.0.1', 'multicast'], ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'], ['192.0.0.8', 'reserved'], ['192.88.99.1', 'reserved'],
    ['192.0.2.1', 'documentation'], ['198.51.100.7', 'documentation'], ['203.0.113.9', 'documentation'],
    ['198.18.0.1', 'benchmarking'], ['198.19.255.255', 'benchmarking'],
    ['::', 'unspecified'], ['::1', 'loopback'],
    ['fc00::1', 'private'], ['fd12:3456::1', 'private'], ['fec0::1', 'private'],
    ['fe80::1', 'link-local'], ['fe80::1%eth0', 'link-local'], ['febf::1', 'link-local'],
    ['ff02::1', 'multicast'], ['ff05::2', 'multicast'],
    ['2001:db8::1', 'documentation'], ['3fff::1', 'documentation'],
    ['2001::1', 'reserved'], ['2001:2::1', 'benchmarking'], ['2002:7f00:1::1', 'reserved'], ['100::1', 'reserved'], ['5f00::1', 'reserved'],
    ['64:ff9b:1::1', 'private'],
    // IPv4 inside IPv6: judged by the IPv4 address.
    ['::ffff:127.0.0.1', 'loopback'], ['::ffff:7f00:1', 'loopback'], ['::ffff:10.1.2.3', 'private'], ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:0.0.0.0', 'unspecified'], ['64:ff9b::127.0.0.1', 'loopback'], ['64:ff9b::a9fe:a9fe', 'link-local'],
    // The deprecated IPv4-compatible and IPv4-translated forms: reserved, whatever they carry.
    ['::7f00:1', 'reserved'], ['::127.0.0.1', 'reserved'], ['::8.8.8.8', 'reserved'], ['::ffff:0:7f00:1', 'reserved'],
    // Unassigned IPv6 (outside 2000::/3).
    ['4000::1', 'reserved'], ['e000::1', 'reserved'],
  ])('%s is %s', (address, cls) => {
    expect(forbiddenClass(address)).toBe(cls);
  });

  test.each(['8.8.8.8', '1.1.1.1', '100.63.255.255', '100.128.0.1', '172.15.255.255', '172.32.0.1', '192.167.1.1', '169.253.1.1', '223.255.255.255',
    '2606:4700:4700::1111', '2a00:1450:4001:82a::200e', '::ffff:8.8.8.8', '64:ff9b::8.8.8.8'])('%s is public', (address) => {
    expect(forbiddenClass(address)).toBeNull();
  });
});

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

  test('CIDR blocks and addresses let exactly their addresses through, in any IPv4/IPv6 form', () => {
    expect(addressRefusal(policy, '10.20.3.4')).toBeNull();
    expect(addressRefusal(policy, '::ffff:10.20.3.4')).toBeNull();
    expect(addressRefusal(policy, '10.21.0.1')).toBe('private');
    expect(addressRefusal(policy, '127.0.0.1')).toBeNull();
    expect(addressRefusal(policy, '127.0.0.2')).toBe('loopback');
    expect(addressRefusal(policy, 'fd00:1::5')).toBeNull();
    expect(addressRefusal(policy, 'fd00:2::5')).toBe('private');
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

  test('entries that are not names, addresses or blocks, or are too wide, are named', () => {
    const issues = policyIssues({ allowHttp: false, allowHosts: ['ok.example', '10.0.0.0/33', '0.0.0.0/0', '::/0', '0x7f.1', '2130706433', 'bad host', '*.com', 'a..b', 'fd00::/8'] });
    expect(issues.map((i) => i.path)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => `allowHosts.${i}`));
    expect(issues[1]!.message).toMatch(/too wide/);
    expect(issues[0]!.message).toMatch(/CIDR/);
  });
});
