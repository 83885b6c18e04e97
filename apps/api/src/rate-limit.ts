import fastifyRateLimit, { type FastifyRateLimitStore, type FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import RedisStore from '@fastify/rate-limit/store/RedisStore';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { withinDeadline } from '@erg/queue';
import type { Redis } from 'ioredis';
import { errors } from './errors';

/**
 * Rate limits on mutating /v1 requests and on expensive reads, counted in Redis so that every API
 * instance shares them.
 * Each request counts against two buckets: its token's and its user's (all of the user's tokens
 * together), so that minting a new token does not buy a fresh allowance. Run tokens count against
 * their run's bucket (they are minted by the scheduler, one per run, never by a user). A fixed
 * window of one minute per bucket, which lets a client send up to twice the limit across a window
 * boundary: acceptable for abuse protection. A refused request still counts (in both buckets):
 * hammering does not refill either.
 *
 * @fastify/rate-limit counts (its Redis store: one Lua script per bucket, INCR and PEXPIRE on the
 * window's first request, the key's PTTL after, so instances with skewed clocks agree on the reset).
 * erg answers: the library's own headers and refusal describe one bucket, and erg's describe the
 * two buckets together (the one closest to its limit) with erg's error body. So each bucket is a
 * `createRateLimit()` limiter (it counts and reports, and sets no header), called from the hook below.
 *
 * Requests are keyed by token id and user id (never by IP: many users share a NAT, one CI runner
 * is one user). Unauthenticated requests never get here: the auth hook refuses them first.
 * When Redis fails the request is let through and a warning logged: Redis is a wake-up channel
 * for erg, and losing it must not take the API down.
 */

export type Bucket = 'mutations' | 'telemetry' | 'reads';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const TELEMETRY_ROUTE = '/v1/runs/:id/telemetry';
/**
 * The reads whose cost grows with what they read — a campaign's results (every run), its evidence
 * bundle (every sample), a run's logs (read from the cluster) and its telemetry series (every
 * sample in the window) — count against a bucket of their own, `reads`. Other reads are not limited.
 */
export const EXPENSIVE_READS = new Set(['/v1/campaigns/:id/results', '/v1/campaigns/:id/export', '/v1/runs/:id/logs', '/v1/runs/:id/telemetry']);
const WINDOW_MS = 60_000;
/** How long a request waits for Redis before it is let through uncounted. */
const REDIS_DEADLINE_MS = 1_000;

/** Which bucket a request counts against; null: not limited (cheap reads, and everything outside /v1). */
export function bucketOf(method: string, routeUrl: string | undefined, path: string): Bucket | null {
  if (!path.startsWith('/v1/')) return null;
  if (method === 'GET' || method === 'HEAD') return routeUrl !== undefined && EXPENSIVE_READS.has(routeUrl) ? 'reads' : null;
  if (!MUTATING.has(method)) return null;
  return method === 'POST' && routeUrl === TELEMETRY_ROUTE ? 'telemetry' : 'mutations';
}

export interface RateLimits {
  /** Per minute per token (and per run token); 0: no limit. */
  mutations: number;
  telemetry: number;
  reads: number;
  /** Per minute per user, all of the user's tokens together; 0: no limit. */
  userMutations: number;
  userTelemetry: number;
  userReads: number;
  /** Namespace of the Redis keys (the queue prefix: tests run side by side). */
  prefix: string;
}

type RateLimitScope = { kind: 'token' } | { kind: 'user'; name: string };

type Limiter = ReturnType<FastifyInstance['createRateLimit']>;

/** One bucket's limiter; the token's also counts run tokens, each run on its own key. */
interface BucketLimiter {
  limit: number;
  check: Limiter;
}

interface BucketLimiters {
  token?: BucketLimiter;
  user?: BucketLimiter;
}

/** What one bucket said about one request. */
interface Counted {
  limit: number;
  remaining: number;
  exceeded: boolean;
  resetMs: number;
  scope: RateLimitScope;
}

/**
 * The library's Redis store, keys under `nameSpace`, built on the first request: building it
 * defines its Lua commands on the client, and building the app must not touch Redis (the OpenAPI
 * document is generated from an app whose Redis throws on any use, scripts/generate-client.js).
 * Every limiter shares it: `child()`, which the library calls for each `createRateLimit(options)`,
 * would put a route into the keys; erg's keys name their bucket and holder already.
 */
function lazyRedisStore(redis: Redis, nameSpace: string): FastifyRateLimitStoreCtor {
  return class LazyRedisStore implements FastifyRateLimitStore {
    private store: RedisStore | undefined;
    incr: FastifyRateLimitStore['incr'] = (key, callback, timeWindow, max) =>
      (this.store ??= new RedisStore(false, false, redis, nameSpace)).incr(key, callback, timeWindow, max);
    child(): FastifyRateLimitStore {
      return this;
    }
  };
}

export async function installRateLimits(app: FastifyInstance, redis: Redis, limits: RateLimits): Promise<void> {
  await app.register(fastifyRateLimit, {
    // No route gets the plugin's own hook (its headers and refusal describe one bucket); erg's hook
    // below calls a limiter per bucket and answers for both.
    global: false,
    // The same keys as the counting erg did by hand before: a rolling upgrade keeps the windows.
    store: lazyRedisStore(redis, `${limits.prefix}:ratelimit:`),
    timeWindow: WINDOW_MS,
    // A Redis failure must reach the hook below, which lets the request through without
    // headers and logs it; skipOnError would answer with headers claiming a full allowance.
    skipOnError: false,
  });
  const limiter = (limit: number, keyGenerator: (req: FastifyRequest) => string): BucketLimiter => ({
    limit,
    check: app.createRateLimit({ max: limit, keyGenerator }),
  });
  const limiters: Record<Bucket, BucketLimiters> = { mutations: {}, telemetry: {}, reads: {} };
  const perUserLimits: Record<Bucket, number> = { mutations: limits.userMutations, telemetry: limits.userTelemetry, reads: limits.userReads };
  for (const bucket of ['mutations', 'telemetry', 'reads'] as const) {
    const perToken = limits[bucket];
    const perUser = perUserLimits[bucket];
    // A limit of 0 is no limit: no limiter, so nothing is counted or sent for that bucket.
    if (perToken > 0) {
      limiters[bucket].token = limiter(perToken, (req) => `${bucket}:${req.runTokenFor ? `run:${req.runTokenFor}` : `token:${req.identity!.id}`}`);
    }
    if (perUser > 0) limiters[bucket].user = limiter(perUser, (req) => `${bucket}:user:${req.identity!.userId}`);
  }

  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    const bucket = bucketOf(req.method, req.routeOptions.url, req.url.split('?')[0] ?? '');
    if (!bucket) return;
    const checks = checksFor(req, limiters[bucket]);
    if (checks.length === 0) return;
    let counted: Counted[];
    try {
      // While Redis is away, let requests through at once instead of each waiting for a reconnect
      // (ioredis queues commands while it reconnects; the library would wait with them).
      if (redis.status !== 'ready') throw new Error(`Redis connection is ${redis.status}`);
      counted = await withinDeadline(Promise.all(checks.map((c) => count(req, c))), REDIS_DEADLINE_MS);
    } catch (err) {
      const failure = describeRedisFailure(err);
      // The failure in the message itself and as fields: a log reader that flattens objects still sees what failed.
      req.log.warn(
        { redisError: failure, ...(err instanceof Error ? { err } : {}) },
        `rate limit not checked: Redis failed (${failure.code ? `${failure.code}: ` : ''}${failure.message}); letting the request through`,
      );
      return;
    }
    const binding = closestToLimit(counted);
    const resetS = setHeaders(reply, binding);
    if (binding.exceeded) {
      reply.header('Retry-After', resetS);
      throw errors.rateLimited(bucket, binding.limit, resetS, binding.scope);
    }
  });
}

/**
 * What a Redis failure was, for the log: its message and code (ioredis' errors carry `code`:
 * ECONNREFUSED, ETIMEDOUT; Redis' replies their first word: NOSCRIPT, OOM). Whatever was thrown —
 * an Error, an object without a message, a string — reads as text, never as `[object Object]`.
 */
export function describeRedisFailure(err: unknown): { message: string; code?: string; name?: string } {
  const fields = typeof err === 'object' && err !== null ? (err as { message?: unknown; code?: unknown; name?: unknown }) : {};
  const code = typeof fields.code === 'string' || typeof fields.code === 'number' ? String(fields.code) : undefined;
  const name = err instanceof Error && err.name !== 'Error' ? err.name : undefined;
  let message: string;
  if (typeof fields.message === 'string' && fields.message !== '') message = fields.message;
  else if (typeof err === 'object' && err !== null) {
    try {
      message = JSON.stringify(err)?.slice(0, 500) ?? 'unknown failure';
    } catch {
      message = Object.prototype.toString.call(err);
    }
  } else message = String(err);
  return { message, ...(code ? { code } : {}), ...(name ? { name } : {}) };
}

/** The buckets a request counts against, token's first (none limited: empty). */
function checksFor(req: FastifyRequest, limiters: BucketLimiters): { limiter: BucketLimiter; scope: RateLimitScope }[] {
  if (req.runTokenFor) return limiters.token ? [{ limiter: limiters.token, scope: { kind: 'token' } }] : [];
  const identity = req.identity;
  if (!identity) return [];
  const checks: { limiter: BucketLimiter; scope: RateLimitScope }[] = [];
  if (limiters.token) checks.push({ limiter: limiters.token, scope: { kind: 'token' } });
  if (limiters.user) checks.push({ limiter: limiters.user, scope: { kind: 'user', name: identity.userName } });
  return checks;
}

async function count(req: FastifyRequest, { limiter, scope }: { limiter: BucketLimiter; scope: RateLimitScope }): Promise<Counted> {
  const result = await limiter.check(req);
  // Only with an allowList, which erg does not give.
  if (result.isAllowed) throw new Error('rate limiter let the request through without counting it');
  // A key without an expiry (not one this code writes) reads as a fresh window rather than a reset of 0.
  return { limit: limiter.limit, remaining: result.remaining, exceeded: result.isExceeded, resetMs: result.ttl > 0 ? result.ttl : WINDOW_MS, scope };
}

/**
 * The bucket the headers describe: the one closest to its limit, that is the one that will refuse
 * first, and a bucket over its limit before one exactly at it. When both are over their limits the
 * token's is named: the library reports `remaining` as 0 for both, not by how much each is over.
 */
function closestToLimit(counted: Counted[]): Counted {
  const distance = (c: Counted) => (c.exceeded ? -1 : c.remaining);
  let binding = counted[0]!;
  for (const c of counted.slice(1)) if (distance(c) < distance(binding)) binding = c;
  return binding;
}

function setHeaders(reply: FastifyReply, counted: Counted): number {
  const resetS = Math.max(1, Math.ceil(counted.resetMs / 1000));
  // IETF draft "RateLimit header fields for HTTP" (the combined -Limit/-Remaining/-Reset form).
  reply.header('RateLimit-Limit', counted.limit);
  reply.header('RateLimit-Remaining', counted.remaining);
  reply.header('RateLimit-Reset', resetS);
  reply.header('RateLimit-Policy', `${counted.limit};w=${WINDOW_MS / 1000}`);
  return resetS;
}
