import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

export interface Lock {
  release(): Promise<void>;
}

// Delete the key only if we still own it: a lock that expired and was taken by another
// scheduler must not be released by us.
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;

/**
 * A Redis lock with a time-to-live, renewed while held, so that cycles of one cluster never
 * overlap even with several scheduler processes — which is what lets a cycle treat every run
 * still in `submitting` as in doubt. Returns null when another holder has it.
 */
export async function tryLock(redis: Redis, key: string, ttlMs = 30_000): Promise<Lock | null> {
  const token = randomUUID();
  const ok = await redis.set(key, token, 'PX', ttlMs, 'NX');
  if (ok !== 'OK') return null;
  const timer = setInterval(() => {
    redis.eval(RENEW, 1, key, token, String(ttlMs)).catch(() => undefined);
  }, ttlMs / 3);
  timer.unref();
  return {
    async release() {
      clearInterval(timer);
      await redis.eval(RELEASE, 1, key, token);
    },
  };
}
