import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { checkDatabase } from '@erg/db';
import { checkRedis } from '@erg/queue';
import type { AppDeps } from '../app';

export const healthRoutes =
  (deps: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    app.get('/healthz', { schema: { tags: ['health'], security: [], response: { 200: z.object({ ok: z.literal(true) }) } } }, async () => ({
      ok: true as const,
    }));

    const Ready = z.object({ ok: z.boolean(), postgres: z.string(), redis: z.string() });
    app.get('/readyz', { schema: { tags: ['health'], security: [], response: { 200: Ready, 503: Ready } } }, async (_req, reply) => {
      const [postgres, redis] = await Promise.all([checkDatabase(deps.db), checkRedis(deps.redis)]);
      const ok = postgres === 'ok' && redis === 'ok';
      return reply.status(ok ? 200 : 503).send({ ok, postgres, redis });
    });
  };
