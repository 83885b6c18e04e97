import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { Redis } from 'ioredis';
import { uniqueName } from '@erg/testkit';
import { tryLock } from '../src/lock';

describe('cluster lock (Redis)', () => {
  const redis = new Redis({ host: '127.0.0.1', port: 6379 });
  const key = uniqueName('erglock');
  afterAll(async () => {
    await redis.del(key);
    redis.disconnect();
  });

  test('one holder at a time; released locks can be taken again', async () => {
    const a = await tryLock(redis, key, 5000);
    expect(a).not.toBeNull();
    expect(await tryLock(redis, key, 5000)).toBeNull();
    await a!.release();
    const b = await tryLock(redis, key, 5000);
    expect(b).not.toBeNull();
    await b!.release();
  });

  test('a lock left by a process of this host that died is taken over at once', async () => {
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    await redis.set(key, `${hostname()}|${dead}|x`, 'PX', 60_000);
    const lock = await tryLock(redis, key, 5000);
    expect(lock).not.toBeNull();
    await lock!.release();
  });

  test('a lock held by a live process, or by another host, is respected', async () => {
    await redis.set(key, `${hostname()}|${process.ppid}|x`, 'PX', 60_000);
    expect(await tryLock(redis, key, 5000)).toBeNull();
    await redis.set(key, `elsewhere|12345|x`, 'PX', 60_000);
    expect(await tryLock(redis, key, 5000)).toBeNull();
    await redis.del(key);
  });
});
