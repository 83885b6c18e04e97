import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { errors } from './errors';

/**
 * Per-token rate limits on mutating /v1 requests, counted in Redis so that every API instance
 * shares them. A fixed window of one minute per token and bucket:
 *
 *   MULTI; SET key 0 PX 60000 NX; INCR key; PTTL key; EXEC
 *
 * The first request of a window creates the key with its expiry, later ones only count, and the
 * key's remaining life (from Redis' clock, so instances with skewed clocks agree) is when the
 * window resets. One round trip, atomic; no Lua, no extra dependency. A fixed window lets a client
 * send up to twice the limit across a window boundary, which is acceptable for abuse protection.
 *
 * Requests are keyed by a hash of the bearer token (never by IP: many users share a NAT, one CI
 * runner is one user). Unauthenticated requests never get here: the auth hook refuses them first.
 * When Redis fails the request is let through and a warning logged: Redis is a wake-up channel
 * for erg, and losing it must not take the API down.
 */

export type Bucket = 'mutations' | 'telemetry';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const TELEMETRY_ROUTE = '/v1/runs/:id/telemetry';
const WINDOW_MS = 60_000;

/** Which bucket a request counts against; null: not limited (reads, and everything outside /v1). */
export function bucketOf(method: string, routeUrl: string | undefined, path: string): Bucket | null {
  if (!MUTATING.has(method) || !path.startsWith('/v1/')) return null;
  return method === 'POST' && routeUrl === TELEMETRY_ROUTE ? 'telemetry' : 'mutations';
}

export interface RateLimits {
  /** Per minute per token; 0: no limit. */
  mutations: number;
  telemetry: number;
  /** Namespace of the Redis keys (the queue prefix: tests run side by side). */
  prefix: string;
}

export interface Counted {
  count: number;
  resetMs: number;
}

/** Counts one request in the token's current window. */
export async function countRequest(redis: Redis, key: string): Promise<Counted> {
  const results = await redis.multi().set(key, '0', 'PX', WINDOW_MS, 'NX').incr(key).pttl(key).exec();
  if (!results) throw new Error('rate-limit transaction was aborted');
  for (const [err] of results) if (err) throw err;
  const count = Number(results[1]![1]);
  const pttl = Number(results[2]![1]);
  return { count, resetMs: pttl > 0 ? pttl : WINDOW_MS };
}

function setHeaders(reply: FastifyReply, limit: number, counted: Counted): number {
  const resetS = Math.max(1, Math.ceil(counted.resetMs / 1000));
  // IETF draft "RateLimit header fields for HTTP" (the combined -Limit/-Remaining/-Reset form).
  reply.header('RateLimit-Limit', limit);
  reply.header('RateLimit-Remaining', Math.max(0, limit - counted.count));
  reply.header('RateLimit-Reset', resetS);
  reply.header('RateLimit-Policy', `${limit};w=${WINDOW_MS / 1000}`);
  return resetS;
}

export function installRateLimits(app: FastifyInstance, redis: Redis, limits: RateLimits): void {
  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    const bucket = bucketOf(req.method, req.routeOptions.url, req.url.split('?')[0] ?? '');
    if (!bucket) return;
    const limit = limits[bucket];
    if (limit === 0) return;
    const header = req.headers.authorization ?? '';
    const token = /^bearer /i.test(header) ? header.slice(7).trim() : '';
    const key = `${limits.prefix}:ratelimit:${bucket}:${createHash('sha256').update(token).digest('hex').slice(0, 32)}`;
    let counted: Counted;
    try {
      counted = await countRequest(redis, key);
    } catch (err) {
      req.log.warn({ err }, 'rate limit not checked: Redis failed; letting the request through');
      return;
    }
    const resetS = setHeaders(reply, limit, counted);
    if (counted.count > limit) {
      reply.header('Retry-After', resetS);
      throw errors.rateLimited(bucket, limit, resetS);
    }
  });
}
