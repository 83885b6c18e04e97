import { createHmac } from 'node:crypto';
import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { resolveAllowed, systemResolver, type AddressClass, type Allowance, type Resolver } from '@erg/address-policy';
import { ErgError, type SuiteRunView, type WebhookPolicy } from '@erg/spec';
import { checkWebhookUrl, compilePolicy, DEFAULT_WEBHOOK_POLICY, type UrlRefusal } from './webhook-policy';

export const WEBHOOK_EVENT = 'suite.finished';

/** What a suite's webhook receives: the finished suite run, verdict included. */
export function webhookBody(run: SuiteRunView): string {
  const { webhook: _delivery, ...rest } = run;
  return JSON.stringify({ event: WEBHOOK_EVENT, suiteRun: rest });
}

/** `sha256=<hex>`: HMAC-SHA256 of the exact body bytes, keyed by the suite's webhook secret. */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/**
 * Why a delivery failed, as viewers of the suite may read it. None of these says what answered
 * or where: the receiver's body, its address and the resolver's answers go to the scheduler's
 * log only (WebhookError.detail).
 */
export type WebhookFailure =
  | { kind: 'status'; status: number }
  | { kind: 'refused' | 'timeout' | 'not-found' | 'tls' | 'network' | 'address' | 'scheme' | 'credentials' };

const FAILURE_TEXT: Record<Exclude<WebhookFailure['kind'], 'status'>, string> = {
  refused: 'connection refused',
  timeout: 'timed out',
  'not-found': 'host not found',
  tls: 'TLS error',
  network: 'connection error',
  address: 'address not allowed',
  scheme: 'http not allowed',
  credentials: 'credentials in URL not allowed',
};

/** `delivery failed (status 503)`, `delivery failed (connection refused)`, …: the text stored and shown. */
export function failureMessage(failure: WebhookFailure): string {
  return `delivery failed (${failure.kind === 'status' ? `status ${failure.status}` : FAILURE_TEXT[failure.kind]})`;
}

/** Stored for a delivery that failed on erg's side (the suite lost its webhook, the secret would not open). */
export const INTERNAL_FAILURE = 'delivery failed (erg could not send it; see the scheduler log)';
export const NO_WEBHOOK_FAILURE = 'delivery failed (the suite has no webhook any more)';

/**
 * What viewers see of a stored delivery error: the texts above, as they are; anything else — a
 * row written before these rules, which may name the receiver's address or what it answered —
 * as a bare "delivery failed".
 */
export function viewerDeliveryError(stored: string | null): string | null {
  if (stored === null) return null;
  return /^delivery failed \([A-Za-z0-9 ;,']{1,80}\)$/.test(stored) ? stored : 'delivery failed';
}

/**
 * A delivery that failed. ERG_WEBHOOK_REFUSED (a 4xx other than 408 / 429, or a URL the policy
 * refuses) is not retryable: trying again will not help. ERG_WEBHOOK_FAILED is.
 */
export class WebhookError extends ErgError<'ERG_WEBHOOK_REFUSED' | 'ERG_WEBHOOK_FAILED'> {
  constructor(
    readonly failure: WebhookFailure,
    /** For the scheduler's log only: the host, the address, the cause's code. Never stored or shown. */
    readonly detail: string,
    permanent: boolean,
  ) {
    super(permanent ? 'ERG_WEBHOOK_REFUSED' : 'ERG_WEBHOOK_FAILED', failureMessage(failure));
  }

  /** Not retryable: the scheduler gives the delivery up at once. */
  get permanent(): boolean {
    return !this.retryable;
  }
}

export type { Resolver };

export interface DeliveryOptions {
  deliveryId: string;
  secret: string | null;
  timeoutMs?: number;
  /** The suite's project's webhook policy; https to public addresses only when absent. */
  policy?: WebhookPolicy;
  resolve?: Resolver;
  /** Extra TLS trust (tests with their own CA); the system's CAs otherwise. */
  ca?: string | Buffer;
}

function refusalError(refusal: UrlRefusal, host: string): WebhookError {
  switch (refusal.reason) {
    case 'scheme':
      return new WebhookError({ kind: 'scheme' }, `http URL for ${host} refused by the project's webhook policy`, true);
    case 'credentials':
      return new WebhookError({ kind: 'credentials' }, `URL for ${host} carries credentials`, true);
    case 'invalid':
      return new WebhookError({ kind: 'address' }, 'the stored webhook URL does not parse', true);
    case 'address':
      return addressError(host, refusal.address, refusal.cls);
  }
}

function addressError(host: string, address: string, cls: AddressClass): WebhookError {
  return new WebhookError({ kind: 'address' }, `${host} → ${address} is ${cls}; not in the project's webhook policy (allowHosts)`, true);
}

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|EPROTO$|HOSTNAME_MISMATCH|ERR_TLS_CERT_ALTNAME_INVALID)/;

function networkFailure(code: string | undefined): WebhookFailure {
  if (code === 'ECONNREFUSED') return { kind: 'refused' };
  if (code === 'ETIMEDOUT' || code === 'ABORT_ERR' || code === 'ERR_WEBHOOK_TIMEOUT') return { kind: 'timeout' };
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA' || code === 'EAI_NONAME') return { kind: 'not-found' };
  if (code !== undefined && TLS_CODE.test(code)) return { kind: 'tls' };
  return { kind: 'network' };
}

/** Every address of the name, each checked (resolveAllowed); the first is the one to connect to. */
async function resolveChecked(hostname: string, policy: Allowance, resolve: Resolver): Promise<LookupAddress> {
  const resolved = await resolveAllowed(hostname, policy, resolve);
  if (resolved.ok) return resolved.address;
  if (resolved.reason === 'address') throw addressError(hostname, resolved.address, resolved.cls);
  throw new WebhookError(networkFailure(resolved.code), `resolving ${hostname}: ${resolved.code}`, false);
}

/** A `lookup` for node:net that answers with the one address already checked, so nothing resolves twice. */
function pinnedLookup(pinned: LookupAddress): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  }) as unknown as LookupFunction;
}

/**
 * One delivery attempt. The receiver should answer 2xx; delivery is at least once, so it can
 * drop repeats by the X-Erg-Delivery header (the suite run's id).
 *
 * Where it may go is checked here, on every attempt: the URL against the project's policy, then
 * every address its host resolves to now (not when the suite was stored: DNS can change, or
 * answer differently the second time — "rebinding"); the connection then goes to exactly the
 * address checked (a pinned `lookup`), with the URL's host name kept for TLS (SNI, certificate)
 * and the Host header. Redirects are not followed.
 */
export async function deliverWebhook(rawUrl: string, body: string, opts: DeliveryOptions): Promise<void> {
  const policy = compilePolicy(opts.policy ?? DEFAULT_WEBHOOK_POLICY);
  const checked = checkWebhookUrl(rawUrl, policy);
  if (!checked.ok) throw refusalError(checked.refusal, hostOf(rawUrl));
  const { url, literal } = checked.target;
  const hostname = literal ?? url.hostname;
  const signal = AbortSignal.timeout(opts.timeoutMs ?? 10_000);
  const pinned = literal === null
    ? await withTimeout(resolveChecked(hostname, policy, opts.resolve ?? systemResolver), signal, hostname)
    : null;

  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    'user-agent': 'erg-webhook/1',
    'x-erg-event': WEBHOOK_EVENT,
    'x-erg-delivery': opts.deliveryId,
  };
  if (opts.secret) headers['x-erg-signature'] = signature(opts.secret, body);
  const where = `${url.host}${pinned ? ` (${pinned.address})` : ''}`;
  const status = await new Promise<number>((resolve, reject) => {
    const request = (url.protocol === 'https:' ? https : http).request(
      {
        protocol: url.protocol,
        hostname,
        port: url.port === '' ? undefined : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers,
        // A fresh connection each time: a pooled one may have been opened to another address.
        agent: false,
        signal,
        ...(pinned ? { lookup: pinnedLookup(pinned) } : {}),
        ...(opts.ca ? { ca: opts.ca } : {}),
      },
      (response) => {
        // Only the status is used; the body is never read (nor shown).
        response.destroy();
        resolve(response.statusCode ?? 0);
      },
    );
    request.on('error', (err: Error & { code?: string }) => {
      const code = signal.aborted ? 'ERR_WEBHOOK_TIMEOUT' : err.code;
      reject(new WebhookError(networkFailure(code), `POST ${where}: ${code ?? err.message}`, false));
    });
    request.end(body);
  });
  if (status >= 200 && status < 300) return;
  const permanent = status >= 400 && status < 500 && status !== 408 && status !== 429;
  throw new WebhookError({ kind: 'status', status }, `POST ${where} answered ${status}`, permanent);
}

function hostOf(rawUrl: string): string {
  try {
    return new URL(rawUrl).host;
  } catch {
    return '(unparsable URL)';
  }
}

/** Resolution counts against the attempt's time too. */
async function withTimeout<T>(work: Promise<T>, signal: AbortSignal, hostname: string): Promise<T> {
  if (signal.aborted) throw new WebhookError({ kind: 'timeout' }, `resolving ${hostname}: timed out`, false);
  let onAbort: () => void = () => undefined;
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(new WebhookError({ kind: 'timeout' }, `resolving ${hostname}: timed out`, false));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
