import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';

export interface Lock {
  release(): Promise<void>;
}

// Delete the key only if we still own it: a lock that expired and was taken by another
// scheduler must not be released by us.
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;

const HOST = hostname();

/** The lock's value names its holder, so that a holder that died on this host can be recognised. */
function holderToken(): string {
  return `${HOST}|${process.pid}|${randomUUID()}`;
}

/** True when the token names a process of this host that no longer exists. */
function holderIsDead(token: string): boolean {
  const [host, pid] = token.split('|');
  if (host !== HOST || !pid || Number(pid) === process.pid) return false;
  try {
    process.kill(Number(pid), 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * A Redis lock with a time-to-live, renewed while held, so that cycles of one cluster never
 * overlap even with several scheduler processes — which is what lets a cycle treat every run
 * still in `submitting` as in doubt. Returns null when a live holder has it. A holder that died
 * on this host (a crashed scheduler restarted here) is recognised and replaced at once instead of
 * after the time-to-live; a holder on another host is only replaced when its lock expires.
 */
export async function tryLock(redis: Redis, key: string, ttlMs = 30_000): Promise<Lock | null> {
  const token = holderToken();
  let ok = await redis.set(key, token, 'PX', ttlMs, 'NX');
  if (ok !== 'OK') {
    const holder = await redis.get(key);
    if (holder && holderIsDead(holder)) {
      await redis.eval(RELEASE, 1, key, holder);
      ok = await redis.set(key, token, 'PX', ttlMs, 'NX');
    }
  }
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
