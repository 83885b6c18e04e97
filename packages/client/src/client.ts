import createClient, { type Client, type Middleware } from 'openapi-fetch';
import { ErgApiError } from './errors';
import type { paths } from './generated/api';

export interface ErgClientOptions {
  /** Where the API listens, e.g. `http://127.0.0.1:8080`; no trailing `/v1`. */
  baseUrl: string;
  /** An API token (`erg-admin token create`); sent as `Authorization: Bearer <token>`. Omit for /healthz and /readyz only. */
  token?: string;
  /** The fetch to use; the global one by default (tests and proxies pass their own). */
  fetch?: typeof globalThis.fetch;
}

/** A typed client: `client.GET('/v1/campaigns/{id}', { params: { path: { id } } })`, see openapi-fetch. */
export type ErgClient = Client<paths>;

/** Turns every non-2xx response into a thrown ErgApiError, so callers only ever see `data`. */
const throwOnError: Middleware = {
  async onResponse({ response }) {
    if (response.ok) return undefined;
    const text = await response.clone().text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON (a proxy's HTML page, say): keep the text for the message
    }
    throw ErgApiError.fromBody(response.status, body);
  },
};

/**
 * A client for erg's REST API, typed from its OpenAPI document. Methods are keyed by path
 * (`GET`, `POST`, `PUT`, ...); a non-2xx answer rejects with ErgApiError.
 */
export function createErgClient(options: ErgClientOptions): ErgClient {
  const client = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    ...(options.token ? { headers: { authorization: `Bearer ${options.token}` } } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  client.use(throwOnError);
  return client;
}
