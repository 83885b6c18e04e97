import { createHmac } from 'node:crypto';
import type { SuiteRunView } from '@erg/spec';

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

export class WebhookError extends Error {
  constructor(
    message: string,
    /** A 4xx other than 408 / 429: the receiver refuses this body; trying again will not help. */
    readonly permanent: boolean,
  ) {
    super(message);
    this.name = 'WebhookError';
  }
}

/**
 * One delivery attempt. The receiver should answer 2xx; delivery is at least once, so it can
 * drop repeats by the X-Erg-Delivery header (the suite run's id).
 */
export async function deliverWebhook(
  url: string,
  body: string,
  opts: { deliveryId: string; secret: string | null; timeoutMs?: number },
): Promise<void> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'erg-webhook/1',
    'x-erg-event': WEBHOOK_EVENT,
    'x-erg-delivery': opts.deliveryId,
  };
  if (opts.secret) headers['x-erg-signature'] = signature(opts.secret, body);
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000) });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new WebhookError(`POST ${url} failed: ${cause?.code ?? cause?.message ?? (err as Error).message}`, false);
  }
  await response.body?.cancel();
  if (response.ok) return;
  const permanent = response.status >= 400 && response.status < 500 && response.status !== 408 && response.status !== 429;
  throw new WebhookError(`POST ${url} answered ${response.status} ${response.statusText}`, permanent);
}
