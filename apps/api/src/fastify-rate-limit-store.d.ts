// @fastify/rate-limit's own Redis store: the plugin builds it from its `redis` option, and its types
// do not export it. erg builds it itself, on the first request (rate-limit.ts says why).
declare module '@fastify/rate-limit/store/RedisStore' {
  import type { FastifyRateLimitStore } from '@fastify/rate-limit';
  import type { Redis } from 'ioredis';

  class RedisStore {
    /** Keys are `key` + the limiter's key; the Lua commands are defined on `redis` here. */
    constructor(continueExceeding: boolean, exponentialBackoff: boolean, redis: Redis, key?: string);
    incr: FastifyRateLimitStore['incr'];
  }
  export = RedisStore;
}
