import {
  allowanceIssues, compileAllowance, hostRefusal, literalAddress, nameAllowed, type AddressClass, type Allowance,
} from '@erg/address-policy';
import type { SpecIssue, WebhookPolicy } from '@erg/spec';

/**
 * Where a suite's webhook may go. A webhook is a request erg makes on behalf of whoever wrote
 * the suite, from inside erg's network: without these rules a suite could POST to erg's own
 * database port, a cloud metadata service or any internal host, and read the answer's status.
 *
 * Glossary:
 * - forbidden address: an internal one (@erg/address-policy address.ts: loopback, private,
 *   link-local, …), reached only where the project's policy allows it.
 * - policy: the project's `WebhookPolicy` — `allowHttp`, and `allowHosts` (names, *.suffixes,
 *   addresses, CIDR blocks: an allowance, @erg/address-policy allowance.ts) that let internal CI
 *   hosts through.
 * - register time: PUT/POST of a suite; only what needs no DNS is checked (scheme, credentials,
 *   a literal address). Delivery time: every attempt, on the addresses the name resolves to
 *   then, which the connection then uses (see webhook.ts) — the check that counts.
 */

/** A policy made ready to match: its allowance compiled. */
export interface CompiledPolicy extends Allowance {
  allowHttp: boolean;
}

/** Problems with a policy's entries, with paths `allowHosts.<i>`. */
export function policyIssues(policy: WebhookPolicy): SpecIssue[] {
  return allowanceIssues(policy.allowHosts);
}

/** The default: https only, public addresses only. */
export const DEFAULT_WEBHOOK_POLICY: WebhookPolicy = { allowHttp: false, allowHosts: [] };

export function compilePolicy(policy: WebhookPolicy): CompiledPolicy {
  return { allowHttp: policy.allowHttp, ...compileAllowance(policy.allowHosts) };
}

/** Why a URL is refused before any connection: what a viewer may read, and what the log gets. */
export type UrlRefusal =
  | { reason: 'invalid'; message: string }
  | { reason: 'scheme'; message: string }
  | { reason: 'credentials'; message: string }
  | { reason: 'address'; message: string; address: string; cls: AddressClass };

/** What a delivery connects to once the URL has passed: the literal address, or a name to resolve. */
export type UrlTarget = { url: URL; literal: string | null; trustedName: boolean };

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
  // URL has already turned every spelling of an address into its plain form ([::1], 127.0.0.1).
  const refused = hostRefusal(policy, url.hostname);
  if (refused) return { ok: false, refusal: addressRefusalOf(refused.address, refused.cls) };
  const literal = literalAddress(url.hostname);
  return { ok: true, target: { url, literal, trustedName: literal === null && nameAllowed(policy, url.hostname) } };
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
