import ipaddr from 'ipaddr.js';
import type { SpecIssue, WebhookPolicy } from '@erg/spec';

/**
 * Where a suite's webhook may go. A webhook is a request erg makes on behalf of whoever wrote
 * the suite, from inside erg's network: without these rules a suite could POST to erg's own
 * database port, a cloud metadata service or any internal host, and read the answer's status.
 *
 * Glossary:
 * - forbidden address: loopback, private (RFC 1918, fc00::/7), carrier-grade NAT, link-local,
 *   multicast, unspecified, broadcast, documentation, benchmarking or otherwise reserved; IPv4
 *   in IPv6 (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::a.b.c.d) is judged by its IPv4 address, the
 *   deprecated IPv4-compatible ::a.b.c.d and 6to4 forms are reserved outright.
 * - policy: the project's `WebhookPolicy` — `allowHttp`, and `allowHosts` (names, *.suffixes,
 *   addresses, CIDR blocks) that let internal CI hosts through.
 * - register time: PUT/POST of a suite; only what needs no DNS is checked (scheme, credentials,
 *   a literal address). Delivery time: every attempt, on the addresses the name resolves to
 *   then, which the connection then uses (see webhook.ts) — the check that counts.
 */

/** Why an address is not one a webhook may reach; null for a public unicast address. */
export type AddressClass =
  | 'unspecified' | 'loopback' | 'private' | 'carrier-grade NAT' | 'link-local' | 'multicast' | 'broadcast' | 'documentation'
  | 'benchmarking' | 'reserved';

type Bytes = readonly number[];
interface Block {
  bytes: Bytes;
  bits: number;
}

/** An address as 16 bytes: IPv4 as IPv4-mapped IPv6, so that one table and one match serve both. */
function toBytes(address: ipaddr.IPv4 | ipaddr.IPv6): number[] {
  return address.kind() === 'ipv4' ? [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...address.toByteArray()] : address.toByteArray();
}

function block(cidr: string): Block {
  const [address, bits] = ipaddr.parseCIDR(cidr);
  return { bytes: toBytes(address), bits: address.kind() === 'ipv4' ? bits + 96 : bits };
}

function inBlock(bytes: Bytes, b: Block): boolean {
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
  ['fc00::/7', 'private'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'private'],
  ['ff00::/8', 'multicast'],
]);
const IPV4_MAPPED = block('::ffff:0:0/96');
const NAT64 = block('64:ff9b::/96');
const GLOBAL_UNICAST_V6 = block('2000::/3');

const first = (bytes: Bytes, rows: readonly [Block, AddressClass][]): AddressClass | null => rows.find(([b]) => inBlock(bytes, b))?.[1] ?? null;

function classOfBytes(bytes: Bytes): AddressClass | null {
  if (inBlock(bytes, IPV4_MAPPED)) return first(bytes, FORBIDDEN_V4);
  // NAT64 (an IPv6-only network reaching IPv4): judged as the IPv4 address it carries.
  if (inBlock(bytes, NAT64)) return first([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...bytes.slice(12)], FORBIDDEN_V4);
  // Everything IPv6 outside 2000::/3 is unassigned or special.
  return first(bytes, FORBIDDEN_V6) ?? (inBlock(bytes, GLOBAL_UNICAST_V6) ? null : 'reserved');
}

/** Parses an IP address as DNS answers or URLs write it (an IPv6 zone id is dropped); null if it is not one. */
function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return ipaddr.IPv4.parse(bare);
  if (!bare.includes(':')) return null;
  // A dotted IPv4 tail in hex, as ipaddr.js would read "::a.b.c.d" as IPv4-mapped (::ffff:a.b.c.d).
  const hex = bare.replace(/(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/, (_m, a: string, b: string, c: string, d: string) =>
    [[a, b], [c, d]].map(([hi, lo]) => ((Number(hi) << 8) | Number(lo)).toString(16)).join(':'),
  );
  return ipaddr.IPv6.isValid(hex) ? ipaddr.IPv6.parse(hex) : null;
}

/** The class that forbids `address` (a dotted-quad IPv4 or an IPv6 address), or null when it is public. */
export function forbiddenClass(address: string): AddressClass | null {
  const parsed = parseAddress(address);
  if (!parsed) throw new Error(`not an IP address: ${JSON.stringify(address)}`);
  return classOfBytes(toBytes(parsed));
}

/** A policy made ready to match: names lower-cased, blocks parsed. */
export interface CompiledPolicy {
  allowHttp: boolean;
  names: ReadonlySet<string>;
  /** `*.ci.internal` → `.ci.internal` */
  suffixes: readonly string[];
  blocks: readonly Block[];
}

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;
/** Blocks wider than these let in most of the internal network; list the CI hosts' networks instead. */
const MIN_BITS = { ipv4: 8, ipv6: 16 };

const normalName = (name: string) => name.toLowerCase().replace(/\.$/, '');

type Entry = { kind: 'name'; name: string } | { kind: 'suffix'; suffix: string } | { kind: 'block'; block: Block };

function parseEntry(entry: string): Entry | { problem: string } {
  if (entry.includes('/')) {
    const [addr, bits] = entry.split('/');
    const address = parseAddress(addr ?? '');
    const n = Number(bits);
    if (!address || !/^\d{1,3}$/.test(bits ?? '') || n > (address.kind() === 'ipv4' ? 32 : 128)) {
      return { problem: `"${entry}" is not a CIDR block; write it as 10.20.0.0/16 or fd00:1::/64` };
    }
    if (n < MIN_BITS[address.kind()]) return { problem: `"${entry}" is too wide (at most /${MIN_BITS[address.kind()]}); list the CI hosts' own networks` };
    return { kind: 'block', block: { bytes: toBytes(address), bits: address.kind() === 'ipv4' ? n + 96 : n } };
  }
  const address = parseAddress(entry);
  if (address) return { kind: 'block', block: { bytes: toBytes(address), bits: 128 } };
  const name = normalName(entry);
  if (name.startsWith('*.') && HOST_NAME.test(name.slice(2)) && name.slice(2).includes('.')) return { kind: 'suffix', suffix: name.slice(1) };
  // A last label that is a number (2130706433, 0x7f.1): URLs read the whole name as an IPv4 address.
  if (HOST_NAME.test(name) && !/(^|\.)(0x[0-9a-f]*|[0-9]+)$/.test(name)) return { kind: 'name', name };
  return { problem: `"${entry}" is not a host name, *.suffix, IP address (in dotted-decimal or IPv6 form) or CIDR block` };
}

/** Problems with a policy's entries, with paths `allowHosts.<i>`. */
export function policyIssues(policy: WebhookPolicy): SpecIssue[] {
  const issues: SpecIssue[] = [];
  policy.allowHosts.forEach((entry, i) => {
    const parsed = parseEntry(entry);
    if ('problem' in parsed) issues.push({ path: `allowHosts.${i}`, code: 'invalid_value', message: parsed.problem });
  });
  return issues;
}

/** The default: https only, public addresses only. */
export const DEFAULT_WEBHOOK_POLICY: WebhookPolicy = { allowHttp: false, allowHosts: [] };

export function compilePolicy(policy: WebhookPolicy): CompiledPolicy {
  const names = new Set<string>();
  const suffixes: string[] = [];
  const blocks: Block[] = [];
  for (const entry of policy.allowHosts) {
    const parsed = parseEntry(entry);
    // Entries were checked when the policy was stored; one that no longer parses allows nothing.
    if ('problem' in parsed) continue;
    if (parsed.kind === 'name') names.add(parsed.name);
    else if (parsed.kind === 'suffix') suffixes.push(parsed.suffix);
    else blocks.push(parsed.block);
  }
  return { allowHttp: policy.allowHttp, names, suffixes, blocks };
}

/** Whether the policy lists this host name (exactly or below a *.suffix). */
export function nameAllowed(policy: CompiledPolicy, hostname: string): boolean {
  const name = normalName(hostname);
  return policy.names.has(name) || policy.suffixes.some((s) => name.endsWith(s));
}

/** null when `address` may be reached under the policy, else the class that forbids it. */
export function addressRefusal(policy: CompiledPolicy, address: string): AddressClass | null {
  const parsed = parseAddress(address);
  if (!parsed) return 'reserved';
  const bytes = toBytes(parsed);
  const cls = classOfBytes(bytes);
  if (cls === null || policy.blocks.some((b) => inBlock(bytes, b))) return null;
  return cls;
}

/** Why a URL is refused before any connection: what a viewer may read, and what the log gets. */
export type UrlRefusal =
  | { reason: 'invalid'; message: string }
  | { reason: 'scheme'; message: string }
  | { reason: 'credentials'; message: string }
  | { reason: 'address'; message: string; address: string; cls: AddressClass };

/** What a delivery connects to once the URL has passed: the literal address, or a name to resolve. */
export type UrlTarget = { url: URL; literal: string | null; trustedName: boolean };

const LOCALHOST = /(^|\.)localhost\.?$/i;

export const CREDENTIALS_MESSAGE =
  'must not carry credentials (user:password@): URLs are shown to every viewer of the suite and written to logs; ' +
  'set webhook.secret instead, and have the receiver check the X-Erg-Signature header';

/** Whether a URL carries a user name or password (`https://user:pass@host/`). */
export function hasCredentials(url: URL): boolean {
  return url.username !== '' || url.password !== '';
}

/**
 * The checks a URL passes before any DNS: its scheme (https, or http where allowed), no
 * credentials, and — when its host is an IP address in any spelling WHATWG URL accepts
 * (2130706433, 0x7f.1 and [::ffff:7f00:1] are all 127.0.0.1) — that address; `localhost`
 * names count as loopback.
 */
export function checkWebhookUrl(raw: string, policy: CompiledPolicy): { ok: true; target: UrlTarget } | { ok: false; refusal: UrlRefusal } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, refusal: { reason: 'invalid', message: 'not a URL' } };
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    return {
      ok: false,
      refusal: {
        reason: 'scheme',
        message: url.protocol === 'http:'
          ? "use https:// — http is accepted only where an admin allows it in the project's webhook policy (PUT /v1/projects/{name}/webhook-policy, allowHttp)"
          : 'use an https:// URL',
      },
    };
  }
  if (hasCredentials(url)) return { ok: false, refusal: { reason: 'credentials', message: CREDENTIALS_MESSAGE } };
  const literal = parseAddress(url.hostname) ? url.hostname.replace(/^\[|\]$/g, '') : null;
  if (literal !== null) {
    const cls = addressRefusal(policy, literal);
    if (cls) return { ok: false, refusal: addressRefusalOf(literal, cls) };
    return { ok: true, target: { url, literal, trustedName: false } };
  }
  const trustedName = nameAllowed(policy, url.hostname);
  if (!trustedName && LOCALHOST.test(url.hostname) && addressRefusal(policy, '127.0.0.1') !== null) {
    return { ok: false, refusal: addressRefusalOf(url.hostname, 'loopback') };
  }
  return { ok: true, target: { url, literal: null, trustedName } };
}

function addressRefusalOf(address: string, cls: AddressClass): UrlRefusal {
  return {
    reason: 'address', address, cls,
    message: `${address} is a ${cls} address: erg does not send webhooks into its own network unless an admin lists the host in the project's webhook policy (allowHosts)`,
  };
}

/** Register-time problems with a suite's webhook URL, with the path `webhook.url`. */
export function webhookUrlIssues(url: string, policy: WebhookPolicy): SpecIssue[] {
  const checked = checkWebhookUrl(url, compilePolicy(policy));
  return checked.ok ? [] : [{ path: 'webhook.url', code: 'invalid_value', message: checked.refusal.message }];
}
