import ipaddr from 'ipaddr.js';

/**
 * Which IP addresses are erg's own network rather than the internet: the one classification of
 * addresses that every connection erg makes on a user's behalf is checked against (a suite's
 * webhook, a cluster's SSH login node or first jump host).
 *
 * Glossary:
 * - forbidden address: loopback, private (RFC 1918, fc00::/7), carrier-grade NAT, link-local (the
 *   cloud metadata service 169.254.169.254 and fd00:ec2::254 among them), multicast, unspecified,
 *   broadcast, documentation, benchmarking or otherwise reserved; IPv4 in IPv6 (mapped
 *   ::ffff:a.b.c.d, NAT64 64:ff9b::a.b.c.d) is judged by its IPv4 address, the deprecated
 *   IPv4-compatible ::a.b.c.d and 6to4 forms are reserved outright.
 * - public address: any other; erg connects there without anyone's leave.
 */

/** Why an address is not a public one; null for a public unicast address. */
export type AddressClass =
  | 'unspecified' | 'loopback' | 'private' | 'carrier-grade NAT' | 'link-local' | 'multicast' | 'broadcast' | 'documentation'
  | 'benchmarking' | 'reserved';

type Bytes = readonly number[];
/** A CIDR block in the 16-byte form (IPv4 as IPv4-mapped IPv6, its prefix length counted from there). */
export interface Block {
  bytes: Bytes;
  bits: number;
}

/** An address as 16 bytes: IPv4 as IPv4-mapped IPv6, so that one table and one match serve both. */
export function toBytes(address: ipaddr.IPv4 | ipaddr.IPv6): number[] {
  return address.kind() === 'ipv4' ? [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...address.toByteArray()] : address.toByteArray();
}

function block(cidr: string): Block {
  const [address, bits] = ipaddr.parseCIDR(cidr);
  return { bytes: toBytes(address), bits: address.kind() === 'ipv4' ? bits + 96 : bits };
}

export function inBlock(bytes: Bytes, b: Block): boolean {
  for (let bit = 0; bit < b.bits; bit += 8) {
    const left = Math.min(8, b.bits - bit);
    const mask = (0xff << (8 - left)) & 0xff;
    if ((bytes[bit / 8]! & mask) !== (b.bytes[bit / 8]! & mask)) return false;
  }
  return true;
}

// First match wins: the more specific blocks come first. IPv4 blocks are matched in their
// IPv4-mapped form, so ::ffff:127.0.0.1 is loopback exactly as 127.0.0.1 is.
const table = (rows: readonly (readonly [string, AddressClass])[]): readonly [Block, AddressClass][] => rows.map(([cidr, cls]) => [block(cidr), cls]);
const FORBIDDEN_V4 = table([
  ['255.255.255.255/32', 'broadcast'],
  ['0.0.0.0/8', 'unspecified'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'carrier-grade NAT'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'reserved'],
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', 'reserved'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
]);
const FORBIDDEN_V6 = table([
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['64:ff9b:1::/48', 'private'],
  // The deprecated IPv4-compatible form (::a.b.c.d), IPv4-translated, and the rest of ::/8.
  ['::/8', 'reserved'],
  ['100::/64', 'reserved'],
  ['2001:db8::/32', 'documentation'],
  ['2001:2::/48', 'benchmarking'],
  // IETF protocol assignments: Teredo (which hides an IPv4 address), ORCHID, AMT, …
  ['2001::/23', 'reserved'],
  // 6to4, deprecated, carries an IPv4 address.
  ['2002::/16', 'reserved'],
  ['3fff::/20', 'documentation'],
  ['5f00::/16', 'reserved'],
  // Unique local addresses, AWS's IPv6 metadata service fd00:ec2::254 among them.
  ['fc00::/7', 'private'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'private'],
  ['ff00::/8', 'multicast'],
]);
const IPV4_MAPPED = block('::ffff:0:0/96');
const NAT64 = block('64:ff9b::/96');
const GLOBAL_UNICAST_V6 = block('2000::/3');

const first = (bytes: Bytes, rows: readonly [Block, AddressClass][]): AddressClass | null => rows.find(([b]) => inBlock(bytes, b))?.[1] ?? null;

export function classOfBytes(bytes: Bytes): AddressClass | null {
  if (inBlock(bytes, IPV4_MAPPED)) return first(bytes, FORBIDDEN_V4);
  // NAT64 (an IPv6-only network reaching IPv4): judged as the IPv4 address it carries.
  if (inBlock(bytes, NAT64)) return first([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...bytes.slice(12)], FORBIDDEN_V4);
  // Everything IPv6 outside 2000::/3 is unassigned or special.
  return first(bytes, FORBIDDEN_V6) ?? (inBlock(bytes, GLOBAL_UNICAST_V6) ? null : 'reserved');
}

/**
 * Parses an IP address as DNS answers or URLs write it: dotted-quad IPv4, or IPv6 (in brackets
 * or not; a zone id is dropped). Null if it is not one.
 */
export function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return ipaddr.IPv4.parse(bare);
  if (!bare.includes(':')) return null;
  // A dotted IPv4 tail in hex, as ipaddr.js would read "::a.b.c.d" as IPv4-mapped (::ffff:a.b.c.d).
  const hex = bare.replace(/(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/, (_m, a: string, b: string, c: string, d: string) =>
    [[a, b], [c, d]].map(([hi, lo]) => ((Number(hi) << 8) | Number(lo)).toString(16)).join(':'),
  );
  return ipaddr.IPv6.isValid(hex) ? ipaddr.IPv6.parse(hex) : null;
}

/** Whether `text` is an IP address in dotted-quad IPv4 or IPv6 form (brackets allowed). */
export function isIpAddress(text: string): boolean {
  return parseAddress(text) !== null;
}

/** The class that forbids `address` (a dotted-quad IPv4 or an IPv6 address), or null when it is public. */
export function forbiddenClass(address: string): AddressClass | null {
  const parsed = parseAddress(address);
  if (!parsed) throw new Error(`not an IP address: ${JSON.stringify(address)}`);
  return classOfBytes(toBytes(parsed));
}

/**
 * The address a host as written means without any DNS, or null for a name. Besides dotted quads
 * and IPv6, the other spellings of IPv4 that both URLs (WHATWG) and the system resolver
 * (inet_aton) read as an address: `2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1` are all 127.0.0.1.
 */
export function literalAddress(host: string): string | null {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const direct = parseAddress(bare);
  if (direct) return direct.kind() === 'ipv6' ? bare.replace(/%.*$/, '') : bare;
  if (bare.includes(':') || !/^[0-9a-fA-FxX.]+$/.test(bare)) return null;
  let hostname: string;
  try {
    hostname = new URL(`http://${bare}/`).hostname;
  } catch {
    return null;
  }
  return ipaddr.IPv4.isValidFourPartDecimal(hostname) ? hostname : null;
}
