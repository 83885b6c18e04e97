import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppDeps } from '../app';

export const healthRoutes =
  (deps: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    app.get('/healthz', { schema: { tags: ['health'], security: [], response: { 200: z.object({ ok: z.literal(true) }) } } }, async () => ({
      ok: true as const,
    }));

    const Ready = z.object({ ok: z.boolean(), postgres: z.string(), redis: z.string() });
    app.get('/readyz', { schema: { tags: ['health'], security: [], response: { 200: Ready, 503: Ready } } }, async (_req, reply) => {
      const [postgres, redis] = await Promise.all([
        // Bounded too: with every pooled client busy (or a connect hanging) the probe would wait for
        // one, and a readiness check that does not answer is worse than a 503.
        withTimeout(deps.db.pool.query('SELECT 1'), 2000).then(() => 'ok', (e: Error) => `error: ${e.message}`),
        withTimeout(deps.redis.ping(), 2000).then(() => 'ok', (e: Error) => `error: ${e.message}`),
      ]);
      const ok = postgres === 'ok' && redis === 'ok';
      return reply.status(ok ? 200 : 503).send({ ok, postgres, redis });
    });
  };

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms).unref())]);
}
