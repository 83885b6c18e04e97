import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { Liveness, Readiness } from '@erg/spec';
import { checkDatabase } from '@erg/db';
import { checkRedis } from '@erg/queue';
import type { AppDeps } from '../app';

export const healthRoutes =
  (deps: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    app.get('/healthz', { schema: { tags: ['health'], security: [], response: { 200: Liveness } } }, async () => ({
      ok: true as const,
    }));

    app.get('/readyz', { schema: { tags: ['health'], security: [], response: { 200: Readiness, 503: Readiness } } }, async (_req, reply) => {
      const [postgres, redis] = await Promise.all([checkDatabase(deps.db), checkRedis(deps.redis)]);
      const ok = postgres === 'ok' && redis === 'ok';
      return reply.status(ok ? 200 : 503).send({ ok, postgres, redis });
    });
  };
