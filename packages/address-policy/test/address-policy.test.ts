// Which addresses erg connects to on a user's behalf (issue 10 §3, issue 27 §4): every internal
// address range in every spelling a resolver, a URL or an SSH host can give it; the allowance an
// admin grants a project; and the checked resolution, which looks at every address a name has.
import type { LookupAddress } from 'node:dns';
import {
  addressRefusal, allowanceIssues, compileAllowance, forbiddenClass, hostRefusal, literalAddress, NO_ALLOWANCE, resolveAllowed, type Resolver,
} from '@erg/address-policy';

describe('forbiddenClass: addresses erg never reaches by default', () => {
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
    // fd00:ec2::254 is AWS's IPv6 metadata service: a unique local address.
    ['fd00:ec2::254', 'private'],
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

describe('literalAddress: what a host means without DNS', () => {
  test.each([
    ['127.0.0.1', '127.0.0.1'], ['2130706433', '127.0.0.1'], ['0x7f.1', '127.0.0.1'], ['0177.0.0.1', '127.0.0.1'], ['127.1', '127.0.0.1'],
    ['0xa9.0xfe.0xa9.0xfe', '169.254.169.254'], ['::1', '::1'], ['[::1]', '::1'], ['::ffff:127.0.0.1', '::ffff:127.0.0.1'], ['fe80::1%eth0', 'fe80::1'],
  ])('%s is %s', (host, address) => {
    expect(literalAddress(host)).toBe(address);
  });

  test.each(['login.example.org', 'deadbeef.cafe', 'localhost', 'a-b', '999.1.1.1'])('%s is a name', (host) => {
    expect(literalAddress(host)).toBeNull();
  });
});

describe('an allowance', () => {
  const allowance = compileAllowance(['ci.internal', '*.build.corp', '10.20.0.0/16', '127.0.0.1', 'fd00:1::/64', 'LOUD.Example.']);

  test('CIDR blocks and addresses let exactly their addresses through, in any IPv4/IPv6 form', () => {
    expect(addressRefusal(allowance, '10.20.3.4')).toBeNull();
    expect(addressRefusal(allowance, '::ffff:10.20.3.4')).toBeNull();
    expect(addressRefusal(allowance, '10.21.0.1')).toBe('private');
    expect(addressRefusal(allowance, '127.0.0.1')).toBeNull();
    expect(addressRefusal(allowance, '::ffff:127.0.0.1')).toBeNull();
    expect(addressRefusal(allowance, '127.0.0.2')).toBe('loopback');
    expect(addressRefusal(allowance, 'fd00:1::5')).toBeNull();
    expect(addressRefusal(allowance, 'fd00:2::5')).toBe('private');
    expect(addressRefusal(allowance, '169.254.169.254')).toBe('link-local');
    expect(addressRefusal(NO_ALLOWANCE, '8.8.8.8')).toBeNull();
  });

  test('entries that are not names, addresses or blocks, or are too wide, are named', () => {
    const issues = allowanceIssues(['ok.example', '10.0.0.0/33', '0.0.0.0/0', '::/0', '0x7f.1', '2130706433', 'bad host', '*.com', 'a..b', 'fd00::/8']);
    expect(issues.map((i) => i.path)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => `allowHosts.${i}`));
    expect(issues[1]!.message).toMatch(/too wide/);
    expect(issues[0]!.message).toMatch(/CIDR/);
    expect(allowanceIssues(['bad host'], 'clusterPolicy.allowHosts')[0]!.path).toBe('clusterPolicy.allowHosts.0');
  });

  test('hostRefusal, before any DNS: literal addresses in any spelling, and localhost as loopback', () => {
    expect(hostRefusal(NO_ALLOWANCE, '127.0.0.1')).toEqual({ address: '127.0.0.1', cls: 'loopback' });
    expect(hostRefusal(NO_ALLOWANCE, '2130706433')).toEqual({ address: '127.0.0.1', cls: 'loopback' });
    expect(hostRefusal(NO_ALLOWANCE, '::ffff:10.0.0.1')).toEqual({ address: '::ffff:10.0.0.1', cls: 'private' });
    expect(hostRefusal(NO_ALLOWANCE, '169.254.169.254')).toEqual({ address: '169.254.169.254', cls: 'link-local' });
    expect(hostRefusal(NO_ALLOWANCE, 'fd00:ec2::254')).toEqual({ address: 'fd00:ec2::254', cls: 'private' });
    expect(hostRefusal(NO_ALLOWANCE, 'LOCALHOST')).toEqual({ address: 'LOCALHOST', cls: 'loopback' });
    expect(hostRefusal(NO_ALLOWANCE, 'login.example.org')).toBeNull();
    expect(hostRefusal(NO_ALLOWANCE, '8.8.8.8')).toBeNull();
    expect(hostRefusal(allowance, '127.0.0.1')).toBeNull();
    expect(hostRefusal(allowance, 'localhost')).toBeNull();
    expect(hostRefusal(compileAllowance(['localhost']), 'localhost')).toBeNull();
  });
});

describe('resolveAllowed: every address a name resolves to is checked, and the one returned is the one to use', () => {
  const answers: Record<string, LookupAddress[]> = {
    'public.example': [{ address: '93.184.215.14', family: 4 }, { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 }],
    'mixed.example': [{ address: '93.184.215.14', family: 4 }, { address: '10.0.0.7', family: 4 }],
    'mixed6.example': [{ address: '2606:4700:4700::1111', family: 6 }, { address: 'fd12::7', family: 6 }],
    'mapped.example': [{ address: '::ffff:169.254.169.254', family: 6 }],
    'login.cluster.internal': [{ address: '10.1.2.3', family: 4 }, { address: '10.1.2.4', family: 4 }],
    'empty.example': [],
  };
  const asked: string[] = [];
  const resolve: Resolver = async (host) => {
    asked.push(host);
    const found = answers[host];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found;
  };

  test('a name whose addresses are all public: the first', async () => {
    expect(await resolveAllowed('public.example', NO_ALLOWANCE, resolve)).toEqual({ ok: true, address: { address: '93.184.215.14', family: 4 } });
  });

  test('one internal address among public ones refuses the name, naming that address (IPv4, IPv6, IPv4-mapped IPv6)', async () => {
    expect(await resolveAllowed('mixed.example', NO_ALLOWANCE, resolve)).toEqual({ ok: false, reason: 'address', address: '10.0.0.7', cls: 'private' });
    expect(await resolveAllowed('mixed6.example', NO_ALLOWANCE, resolve)).toEqual({ ok: false, reason: 'address', address: 'fd12::7', cls: 'private' });
    expect(await resolveAllowed('mapped.example', NO_ALLOWANCE, resolve)).toEqual({ ok: false, reason: 'address', address: '::ffff:169.254.169.254', cls: 'link-local' });
  });

  test('allowed blocks let their addresses through; a listed name may resolve anywhere', async () => {
    expect(await resolveAllowed('mixed.example', compileAllowance(['10.0.0.0/24']), resolve)).toMatchObject({ ok: true, address: { address: '93.184.215.14' } });
    expect(await resolveAllowed('login.cluster.internal', compileAllowance(['10.1.2.3']), resolve)).toMatchObject({ ok: false, address: '10.1.2.4' });
    expect(await resolveAllowed('login.cluster.internal', compileAllowance(['*.cluster.internal']), resolve)).toMatchObject({ ok: true, address: { address: '10.1.2.3' } });
  });

  test('a literal address is checked without asking the resolver', async () => {
    asked.length = 0;
    expect(await resolveAllowed('127.0.0.1', NO_ALLOWANCE, resolve)).toEqual({ ok: false, reason: 'address', address: '127.0.0.1', cls: 'loopback' });
    expect(await resolveAllowed('0x7f.1', compileAllowance(['127.0.0.1']), resolve)).toEqual({ ok: true, address: { address: '127.0.0.1', family: 4 } });
    expect(await resolveAllowed('::1', compileAllowance(['::1']), resolve)).toEqual({ ok: true, address: { address: '::1', family: 6 } });
    expect(asked).toEqual([]);
  });

  test('a name that does not resolve, or to nothing, is not found', async () => {
    expect(await resolveAllowed('nowhere.example', NO_ALLOWANCE, resolve)).toMatchObject({ ok: false, reason: 'not-found', code: 'ENOTFOUND' });
    expect(await resolveAllowed('empty.example', NO_ALLOWANCE, resolve)).toMatchObject({ ok: false, reason: 'not-found', code: 'ENODATA' });
  });
});
