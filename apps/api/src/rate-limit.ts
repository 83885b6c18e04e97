import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { withinDeadline } from '@erg/queue';
import type { Redis } from 'ioredis';
import { errors } from './errors';

/**
 * Rate limits on mutating /v1 requests, counted in Redis so that every API instance shares them.
 * Each request counts against two buckets: its token's and its user's (all of the user's tokens
 * together), so that minting a new token does not buy a fresh allowance. Run tokens count against
 * their run's bucket (they are minted by the scheduler, one per run, never by a user). A fixed
 * window of one minute per bucket:
 *
 *   MULTI; (SET key 0 PX 60000 NX; INCR key; PTTL key) per bucket; EXEC
 *
 * The first request of a window creates the key with its expiry, later ones only count, and the
 * key's remaining life (from Redis' clock, so instances with skewed clocks agree) is when the
 * window resets. One round trip, atomic; no Lua, no extra dependency. A fixed window lets a client
 * send up to twice the limit across a window boundary, which is acceptable for abuse protection.
 * A refused request still counts (in both buckets): hammering does not refill either.
 *
 * Requests are keyed by token id and user id (never by IP: many users share a NAT, one CI runner
 * is one user). Unauthenticated requests never get here: the auth hook refuses them first.
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
  /** Per minute per token (and per run token); 0: no limit. */
  mutations: number;
  telemetry: number;
  /** Per minute per user, all of the user's tokens together; 0: no limit. */
  userMutations: number;
  userTelemetry: number;
  /** Namespace of the Redis keys (the queue prefix: tests run side by side). */
  prefix: string;
}

/** One bucket a request counts against: whose it is, and its limit. */
interface Counter {
  key: string;
  limit: number;
  /** For the refusal: with this token, or by this user. */
  scope: RateLimitScope;
}

export type RateLimitScope = { kind: 'token' } | { kind: 'user'; name: string };

export interface Counted {
  count: number;
  resetMs: number;
}

/** Counts one request in the current window of each key, in one transaction. */
export async function countRequest(redis: Redis, keys: string[]): Promise<Counted[]> {
  let multi = redis.multi();
  for (const key of keys) multi = multi.set(key, '0', 'PX', WINDOW_MS, 'NX').incr(key).pttl(key);
  const results = await multi.exec();
  if (!results) throw new Error('rate-limit transaction was aborted');
  for (const [err] of results) if (err) throw err;
  return keys.map((_, i) => {
    const count = Number(results[3 * i + 1]![1]);
    const pttl = Number(results[3 * i + 2]![1]);
    return { count, resetMs: pttl > 0 ? pttl : WINDOW_MS };
  });
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

/** The buckets a request counts against (none limited: empty). */
function countersFor(req: FastifyRequest, bucket: Bucket, limits: RateLimits): Counter[] {
  const base = `${limits.prefix}:ratelimit:${bucket}`;
  const perToken = limits[bucket];
  const perUser = bucket === 'telemetry' ? limits.userTelemetry : limits.userMutations;
  const counters: Counter[] = [];
  if (req.runTokenFor) {
    if (perToken > 0) counters.push({ key: `${base}:run:${req.runTokenFor}`, limit: perToken, scope: { kind: 'token' } });
    return counters;
  }
  const identity = req.identity;
  if (!identity) return counters;
  if (perToken > 0) counters.push({ key: `${base}:token:${identity.id}`, limit: perToken, scope: { kind: 'token' } });
  if (perUser > 0) counters.push({ key: `${base}:user:${identity.userId}`, limit: perUser, scope: { kind: 'user', name: identity.userName } });
  return counters;
}

export function installRateLimits(app: FastifyInstance, redis: Redis, limits: RateLimits): void {
  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    const bucket = bucketOf(req.method, req.routeOptions.url, req.url.split('?')[0] ?? '');
    if (!bucket) return;
    const counters = countersFor(req, bucket, limits);
    if (counters.length === 0) return;
    let counted: Counted[];
    try {
      // While Redis is away, let requests through at once instead of each waiting for a reconnect.
      if (redis.status !== 'ready') throw new Error(`Redis connection is ${redis.status}`);
      counted = await withinDeadline(countRequest(redis, counters.map((c) => c.key)), 1_000);
    } catch (err) {
      req.log.warn({ err }, 'rate limit not checked: Redis failed; letting the request through');
      return;
    }
    // The headers describe the bucket closest to its limit: the one that will refuse first.
    let binding = 0;
    for (let i = 1; i < counters.length; i++) {
      if (counters[i]!.limit - counted[i]!.count < counters[binding]!.limit - counted[binding]!.count) binding = i;
    }
    const resetS = setHeaders(reply, counters[binding]!.limit, counted[binding]!);
    if (counted[binding]!.count > counters[binding]!.limit) {
      reply.header('Retry-After', resetS);
      throw errors.rateLimited(bucket, counters[binding]!.limit, resetS, counters[binding]!.scope);
    }
  });
}
