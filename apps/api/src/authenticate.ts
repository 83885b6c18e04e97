import type { FastifyInstance } from 'fastify';
import { authenticateRunToken, authenticateToken, RUN_TOKEN_PREFIX, type Database } from '@erg/db';
import { errors } from './errors';

declare module 'fastify' {
  interface FastifyRequest {
    tokenName?: string;
    /** Set when the caller authenticated with a run token: the one run it may write telemetry for. */
    runTokenFor?: string;
  }
}

/** The only route a run token opens: its own run's telemetry ingest. */
const RUN_TOKEN_ROUTE = /^\/v1\/runs\/([0-9a-f-]{36})\/telemetry$/;

const PUBLIC_PREFIXES = ['/healthz', '/readyz', '/docs', '/openapi.json'];
// The web app (its assets here, index.html at `/` exactly below) asks for a token itself.
PUBLIC_PREFIXES.push('/assets');
// Not an API token's business: /metrics checks ERG_METRICS_TOKEN itself, when one is set.
PUBLIC_PREFIXES.push('/metrics');

/**
 * Who is calling: an API token sets `req.identity` (a user and their roles), a run token
 * `req.runTokenFor` (the one run it may send telemetry for). Anything else outside the public
 * paths is a 401 before any later hook or route sees it.
 */
export function installAuthentication(app: FastifyInstance, db: Database): void {
  app.addHook('onRequest', async (req) => {
    const path = req.url.split('?')[0] ?? '';
    if (path === '/' || PUBLIC_PREFIXES.some((p) => path === p || path.startsWith(`${p}/`))) return;
    const header = req.headers.authorization;
    const token = /^bearer /i.test(header ?? '') ? header!.slice(7).trim() : undefined;
    if (token?.startsWith(RUN_TOKEN_PREFIX)) {
      const runId = await authenticateRunToken(db, token);
      if (!runId) throw errors.unauthorized();
      const target = RUN_TOKEN_ROUTE.exec(path)?.[1];
      if (req.method !== 'POST' || target !== runId) throw errors.forbidden('a run token can only send telemetry for its own run');
      req.runTokenFor = runId;
      return;
    }
    const identity = token ? await authenticateToken(db, token) : null;
    if (!identity) throw errors.unauthorized();
    req.identity = identity;
    req.tokenName = identity.name;
  });
}
