// When Redis fails under the rate limiter the request goes through and the failure is logged —
// with what failed (message, code), not `[object Object]`. The Redis client is a stub here: the
// failure itself is what is tested, and a real Redis cannot be made to fail this way on demand.
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import type { Redis } from 'ioredis';
import { LOG_REDACTION } from '@erg/secrets';
import { installRateLimits } from '../src/rate-limit';

/** A Redis client whose rate-limit script fails the way ioredis reports a failed command: an Error with a code. */
function failingRedis(failure: unknown): Redis {
  const stub = {
    status: 'ready',
    defineCommand() {},
    rateLimit(...args: unknown[]) {
      (args.at(-1) as (err: unknown) => void)(failure);
    },
  };
  return stub as unknown as Redis;
}

async function logOfOneMutation(failure: unknown): Promise<Record<string, unknown>[]> {
  const lines: string[] = [];
  const stream = new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } });
  const app = Fastify({ logger: { level: 'warn', stream, redact: LOG_REDACTION } });
  // What the authentication hook leaves on a request of an API token.
  app.addHook('onRequest', async (req) => {
    (req as unknown as { identity: unknown }).identity = { id: 'token-1', userId: 'user-1', userName: 'alice' };
  });
  await installRateLimits(app, failingRedis(failure), { mutations: 10, telemetry: 10, userMutations: 10, userTelemetry: 10, prefix: 'test' });
  app.post('/v1/things', async () => ({ ok: true }));
  const res = await app.inject({ method: 'POST', url: '/v1/things', payload: {} });
  expect(res.statusCode).toBe(200);
  await app.close();
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => String(l['msg']).startsWith('rate limit not checked'));
}

describe('a Redis failure in the rate limiter', () => {
  it('lets the request through and logs the error with its message and code', async () => {
    const failure = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });
    const [line, ...more] = await logOfOneMutation(failure);
    expect(more).toEqual([]);
    expect(line).toMatchObject({ msg: expect.stringContaining('ECONNREFUSED'), redisError: { message: 'connect ECONNREFUSED 127.0.0.1:6379', code: 'ECONNREFUSED' } });
    expect(JSON.stringify(line)).not.toContain('[object Object]');
  });

  it('says what failed when the failure is not an Error (an object without a message), never [object Object]', async () => {
    const [line] = await logOfOneMutation({ reply: 'NOSCRIPT No matching script', command: 'evalsha' });
    expect(line).toMatchObject({ msg: expect.stringContaining('NOSCRIPT No matching script'), redisError: { message: expect.stringContaining('NOSCRIPT No matching script') } });
    expect(JSON.stringify(line)).not.toContain('[object Object]');
  });
});
