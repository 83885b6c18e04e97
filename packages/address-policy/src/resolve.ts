import { promises as dns, type LookupAddress } from 'node:dns';
import { addressRefusal, nameAllowed, type Allowance } from './allowance';
import { literalAddress, type AddressClass } from './address';

/** Resolves a host name to every address it has (node's getaddrinfo by default; tests give their own). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) => dns.lookup(hostname, { all: true, order: 'verbatim' });

/**
 * What resolveAllowed found: the one address to connect to, or why there is none — the name does
 * not resolve (`code`: the resolver's, e.g. ENOTFOUND), or one of its addresses is internal and
 * not allowed (`address`, `cls`).
 */
export type Resolution =
  | { ok: true; address: LookupAddress }
  | { ok: false; reason: 'not-found'; code: string; message: string }
  | { ok: false; reason: 'address'; address: string; cls: AddressClass };

/**
 * Resolves `host` once and checks what it got, for a connection that then goes to exactly the
 * returned address (so a second resolution — DNS rebinding — cannot swap it for another):
 * - a literal address (any spelling literalAddress reads) is checked as it is, without DNS;
 * - a name the allowance lists may resolve to any address (the admin vouches for its DNS);
 * - any other name must resolve to allowed addresses only — all of them, so that an answer
 *   mixing a public and an internal address is refused too.
 * The first address (in the resolver's order) is the one to connect to.
 */
export async function resolveAllowed(host: string, allowance: Allowance, resolve: Resolver = systemResolver): Promise<Resolution> {
  const literal = literalAddress(host);
  if (literal !== null) {
    const cls = addressRefusal(allowance, literal);
    return cls ? { ok: false, reason: 'address', address: literal, cls } : { ok: true, address: { address: literal, family: literal.includes(':') ? 6 : 4 } };
  }
  let addresses: LookupAddress[];
  try {
    addresses = await resolve(host);
  } catch (err) {
    const { code, message } = err as { code?: string; message?: string };
    return { ok: false, reason: 'not-found', code: code ?? 'ENOTFOUND', message: message ?? String(err) };
  }
  if (addresses.length === 0) return { ok: false, reason: 'not-found', code: 'ENODATA', message: `${host} has no address` };
  if (!nameAllowed(allowance, host)) {
    for (const a of addresses) {
      const cls = addressRefusal(allowance, a.address);
      if (cls) return { ok: false, reason: 'address', address: a.address, cls };
    }
  }
  return { ok: true, address: addresses[0]! };
}
