import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../app';
import { errors } from '../errors';
import type { ApiMetrics } from '../metrics';

/**
 * GET /metrics in Prometheus text format. Open like /healthz unless ERG_METRICS_TOKEN is set;
 * that token is separate from API tokens so a scraper's credential opens nothing else.
 */
export const metricsRoutes =
  (deps: AppDeps & { metrics: ApiMetrics }): FastifyPluginAsyncZod =>
  async (app) => {
    const expected = deps.config.ERG_METRICS_TOKEN;
    app.get('/metrics', { schema: { tags: ['health'], security: expected ? [{ bearer: [] }] : [], hide: true } }, async (req, reply) => {
      if (expected && !sameSecret(bearer(req.headers.authorization), expected)) {
        throw errors.metricsUnauthorized();
      }
      const body = await deps.metrics.registry.metrics();
      return reply.type(deps.metrics.registry.contentType).send(body);
    });
  };

function bearer(header: string | undefined): string {
  return /^bearer /i.test(header ?? '') ? header!.slice(7).trim() : '';
}

/** Compares hashes, so neither the length nor a prefix of the token leaks through timing. */
function sameSecret(given: string, expected: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}
