import type { SpecIssue } from '@erg/spec';
import { classOfBytes, inBlock, literalAddress, parseAddress, toBytes, type AddressClass, type Block } from './address';

/**
 * A project's allowance: the internal hosts an admin lets erg reach on the project's behalf, as a
 * list of entries (`allowHosts` of a project's webhook policy and of its cluster policy — one
 * grammar, one matcher, each list for its own use).
 *
 * Entries:
 * - a host name (exact, any case, a trailing dot ignored) or `*.suffix` (any name below it): the
 *   admin vouches for that name's DNS, so it may resolve to any address;
 * - an IP address or a CIDR block (no wider than /8 for IPv4, /16 for IPv6): exactly those
 *   addresses are let through, whatever name resolved to them, and as literal addresses.
 * Names that URLs and the system resolver read as an IPv4 address (`0x7f.1`, `2130706433`) are
 * not names: write the address.
 */

/** An allowance made ready to match: names lower-cased, blocks parsed. */
export interface Allowance {
  names: ReadonlySet<string>;
  /** `*.ci.internal` → `.ci.internal` */
  suffixes: readonly string[];
  blocks: readonly Block[];
}

/** Public addresses only. */
export const NO_ALLOWANCE: Allowance = { names: new Set(), suffixes: [], blocks: [] };

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;
/** Blocks wider than these let in most of the internal network; list the hosts' own networks instead. */
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
    if (n < MIN_BITS[address.kind()]) return { problem: `"${entry}" is too wide (at most /${MIN_BITS[address.kind()]}); list the hosts' own networks` };
    return { kind: 'block', block: { bytes: toBytes(address), bits: address.kind() === 'ipv4' ? n + 96 : n } };
  }
  const address = parseAddress(entry);
  if (address) return { kind: 'block', block: { bytes: toBytes(address), bits: 128 } };
  const name = normalName(entry);
  if (name.startsWith('*.') && HOST_NAME.test(name.slice(2)) && name.slice(2).includes('.')) return { kind: 'suffix', suffix: name.slice(1) };
  // A last label that is a number (2130706433, 0x7f.1): URLs and the resolver read the whole name as an IPv4 address.
  if (HOST_NAME.test(name) && !/(^|\.)(0x[0-9a-f]*|[0-9]+)$/.test(name)) return { kind: 'name', name };
  return { problem: `"${entry}" is not a host name, *.suffix, IP address (in dotted-decimal or IPv6 form) or CIDR block` };
}

/** Problems with an allowance's entries, with paths `<at>.<i>` (`allowHosts.3`). */
export function allowanceIssues(entries: readonly string[], at = 'allowHosts'): SpecIssue[] {
  const issues: SpecIssue[] = [];
  entries.forEach((entry, i) => {
    const parsed = parseEntry(entry);
    if ('problem' in parsed) issues.push({ path: `${at}.${i}`, code: 'invalid_value', message: parsed.problem });
  });
  return issues;
}

export function compileAllowance(entries: readonly string[]): Allowance {
  const names = new Set<string>();
  const suffixes: string[] = [];
  const blocks: Block[] = [];
  for (const entry of entries) {
    const parsed = parseEntry(entry);
    // Entries were checked when the policy was stored; one that no longer parses allows nothing.
    if ('problem' in parsed) continue;
    if (parsed.kind === 'name') names.add(parsed.name);
    else if (parsed.kind === 'suffix') suffixes.push(parsed.suffix);
    else blocks.push(parsed.block);
  }
  return { names, suffixes, blocks };
}

/** Whether the allowance lists this host name (exactly or below a *.suffix). */
export function nameAllowed(allowance: Allowance, hostname: string): boolean {
  const name = normalName(hostname);
  return allowance.names.has(name) || allowance.suffixes.some((s) => name.endsWith(s));
}

/** null when `address` may be reached under the allowance, else the class that forbids it. */
export function addressRefusal(allowance: Allowance, address: string): AddressClass | null {
  const parsed = parseAddress(address);
  if (!parsed) return 'reserved';
  const bytes = toBytes(parsed);
  const cls = classOfBytes(bytes);
  if (cls === null || allowance.blocks.some((b) => inBlock(bytes, b))) return null;
  return cls;
}

const LOCALHOST = /(^|\.)localhost\.?$/i;

/** What a host refused before any DNS is: the address it means and why not. */
export interface HostRefusal {
  address: string;
  cls: AddressClass;
}

/**
 * The check a host passes before any DNS (at registration): a literal address in any spelling
 * (literalAddress) must be allowed, and `localhost` / `*.localhost` count as loopback unless the
 * name is listed or 127.0.0.1 is allowed. Other names pass: they are checked where they are
 * resolved, at connect time (resolveAllowed). Null when it passes.
 */
export function hostRefusal(allowance: Allowance, host: string): HostRefusal | null {
  const literal = literalAddress(host);
  if (literal !== null) {
    const cls = addressRefusal(allowance, literal);
    return cls ? { address: literal, cls } : null;
  }
  if (LOCALHOST.test(host) && !nameAllowed(allowance, host) && addressRefusal(allowance, '127.0.0.1') !== null) return { address: host, cls: 'loopback' };
  return null;
}
