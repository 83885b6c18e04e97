import type { FastifyInstance, FastifyReply, FastifyServerOptions } from 'fastify';
import { ApiError, errors } from './errors';
import { isDatabaseUnavailable } from './database-unavailable';

/** Retry-After of a 503 for a database away: about the time a Postgres restart takes. */
const DATABASE_RETRY_AFTER_S = 5;

/**
 * What the router refuses before any route (an over-long or badly encoded path segment) gets the
 * same error envelope as everything else, without echoing the caller's path back. A Fastify
 * constructor option: the router's errors never reach setErrorHandler.
 */
export const frameworkErrors: NonNullable<FastifyServerOptions['frameworkErrors']> = (err, _req, reply) => {
  // Fastify's FST_ERR_MAX_PARAM_LENGTH is a 414; FST_ERR_BAD_URL and anything else a 400.
  const error = errors.badUrl((err as { statusCode?: number }).statusCode === 414);
  return (reply as FastifyReply).status(error.status).send(error.toJSON());
};

/** Every failure answers with erg's error envelope: erg's own errors, Fastify's client errors, a database away, no such route, anything else. */
export function installErrorHandlers(app: FastifyInstance, defaultBodyLimit: number): void {
  app.setErrorHandler((err, req, reply) => {
    if (err instanceof ApiError) {
      if (err.retryAfterS !== undefined) reply.header('retry-after', String(err.retryAfterS));
      return reply.status(err.status).send(err.toJSON());
    }
    if ((err as { code?: string }).code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      // Fastify's message does not say what the limit is; routes have their own (body-limits.ts).
      const tooLarge = errors.bodyTooLarge(req.routeOptions.bodyLimit ?? defaultBodyLimit, `${req.method} ${req.routeOptions.url ?? req.url.split('?')[0]}`);
      return reply.status(tooLarge.status).send(tooLarge.toJSON());
    }
    const { statusCode, code, message } = err as { statusCode?: number; code?: string; message?: string };
    if (statusCode && statusCode >= 400 && statusCode < 500) {
      // Fastify's own client errors (bad JSON, wrong content type), passed through with Fastify's
      // code and status: not erg's errors, though the catalog lists those the API is known to answer.
      return reply.status(statusCode).send({ error: { code: code ?? 'ERG_BAD_REQUEST', message: message ?? 'bad request' } });
    }
    if (isDatabaseUnavailable(err)) {
      // Postgres restarting or away: the request may be repeated; readiness (GET /readyz) says the same meanwhile.
      req.log.warn({ err }, 'request failed: the database cannot be reached');
      const unavailable = errors.databaseUnavailable();
      return reply.status(unavailable.status).header('retry-after', String(DATABASE_RETRY_AFTER_S)).send(unavailable.toJSON());
    }
    req.log.error({ err }, 'request failed');
    const internal = errors.internal();
    return reply.status(internal.status).send(internal.toJSON());
  });
  app.setNotFoundHandler((req, reply) => {
    const noRoute = errors.noRoute(req.method, req.url.split('?')[0] ?? '');
    return reply.status(noRoute.status).send(noRoute.toJSON());
  });
}
