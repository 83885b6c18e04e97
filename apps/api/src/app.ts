import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance } from 'fastify';
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject, serializerCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { authenticateRunToken, authenticateToken, RUN_TOKEN_PREFIX, TelemetryWriter, type Database } from '@erg/db';
import { LOG_REDACTION, type SecretBox } from '@erg/secrets';
import type { ApiConfig } from './config';
import { ApiError, errors } from './errors';
import { isDatabaseUnavailable } from './database-unavailable';
import { depthLimitedJsonParser, validatorCompiler } from './validation';
import { Offload } from './offload';
import type { ClusterFiles } from './cluster-files';
import { campaignRoutes } from './routes/campaigns';
import { clusterRoutes } from './routes/clusters';
import { healthRoutes } from './routes/health';
import { runRoutes } from './routes/runs';
import { suiteRoutes } from './routes/suites';
import { accessRoutes } from './routes/access';
import { webhookPolicyRoutes } from './routes/webhook-policy';
import { telemetryRoutes } from './routes/telemetry';
import { eventRoutes } from './routes/events';
import { queueRoutes } from './routes/queue';
import { webRoutes } from './routes/web';
import { metricsRoutes } from './routes/metrics';
import { createApiMetrics, type ApiMetrics } from './metrics';
import { observeRequests } from './observe';
import { installRateLimits } from './rate-limit';
import { installAudit } from './audit';
import { auditRoutes } from './routes/audit';
import { installAccessControl, type RouteRule } from './access';

export interface AppDeps {
  config: ApiConfig;
  db: Database;
  queue: Queue;
  redis: Redis;
  clusterFiles: ClusterFiles;
  /** Seals clusters' private keys and suites' webhook secrets before they are stored. */
  secrets: SecretBox;
  /** Shared bulk writer for telemetry; one is made from `db` when not given. */
  telemetry?: TelemetryWriter;
  /** Prometheus metrics of this instance; a fresh registry is made when not given. */
  metrics?: ApiMetrics;
  /** A pino logger to use instead of one built from LOG_LEVEL (tests capture lines with it). */
  logger?: FastifyBaseLogger;
  /** Worker threads for large request bodies; made from the ERG_OFFLOAD_* settings when not given. */
  offload?: Offload;
  /** Start the validation workers with the app instead of on the first large body (main.ts; tests start them lazily). */
  warmWorkers?: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every /v1 route with its access rule (see access.ts). */
    accessRules: RouteRule[];
  }
  interface FastifyRequest {
    tokenName?: string;
    /** Set when the caller authenticated with a run token: the one run it may write telemetry for. */
    runTokenFor?: string;
  }
}

/** Retry-After of a 503 for a database away: about the time a Postgres restart takes. */
const DATABASE_RETRY_AFTER_S = 5;

/** The only route a run token opens: its own run's telemetry ingest. */
const RUN_TOKEN_ROUTE = /^\/v1\/runs\/([0-9a-f-]{36})\/telemetry$/;

const PUBLIC_PREFIXES = ['/healthz', '/readyz', '/docs', '/openapi.json'];
// The web app (its assets here, index.html at `/` exactly below) asks for a token itself.
PUBLIC_PREFIXES.push('/assets');
// Not an API token's business: /metrics checks ERG_METRICS_TOKEN itself, when one is set.
PUBLIC_PREFIXES.push('/metrics');

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    ...(deps.logger
      ? { loggerInstance: deps.logger }
      : { logger: deps.config.LOG_LEVEL === 'silent' ? false : { level: deps.config.LOG_LEVEL, redact: LOG_REDACTION } }),
    bodyLimit: deps.config.ERG_BODY_LIMIT,
    // What the router refuses before any route (an over-long or badly encoded path segment) gets
    // the same error envelope as everything else, without echoing the caller's path back.
    frameworkErrors: (err, _req, reply) => {
      // Fastify's FST_ERR_MAX_PARAM_LENGTH is a 414; FST_ERR_BAD_URL and anything else a 400.
      const error = errors.badUrl((err as { statusCode?: number }).statusCode === 414);
      return (reply as FastifyReply).status(error.status).send(error.toJSON());
    },
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  // JSON bodies deeper than any erg request needs are a 400 before any route sees them (validation.ts).
  const defaultJsonParser = app.getDefaultJsonParser('error', 'ignore');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, depthLimitedJsonParser(defaultJsonParser));
  // YAML campaign specs arrive as text and are parsed (with line numbers in errors) by the route.
  app.addContentTypeParser(['application/yaml', 'application/x-yaml', 'text/yaml'], { parseAs: 'string' }, (_req, body, done) =>
    done(null, body),
  );

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'erg API', version: '0.1.0', description: 'Energy studies on Slurm GPU clusters.' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
    // Puts the schemas routes refer to by id (ClusterCreate, Run, Error, …) into components.schemas.
    transformObject: jsonSchemaTransformObject,
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  // Cluster names only behind ERG_METRICS_TOKEN: an open /metrics must not list them.
  const metrics = deps.metrics ?? createApiMetrics({ db: deps.db, queue: deps.queue, clusterNames: deps.config.ERG_METRICS_TOKEN !== undefined });
  observeRequests(app, metrics);

  app.addHook('onRequest', async (req) => {
    const path = req.url.split('?')[0] ?? '';
    if (path === '/' || PUBLIC_PREFIXES.some((p) => path === p || path.startsWith(`${p}/`))) return;
    const header = req.headers.authorization;
    const token = /^bearer /i.test(header ?? '') ? header!.slice(7).trim() : undefined;
    if (token?.startsWith(RUN_TOKEN_PREFIX)) {
      const runId = await authenticateRunToken(deps.db, token);
      if (!runId) throw errors.unauthorized();
      const target = RUN_TOKEN_ROUTE.exec(path)?.[1];
      if (req.method !== 'POST' || target !== runId) throw errors.forbidden('a run token can only send telemetry for its own run');
      req.runTokenFor = runId;
      return;
    }
    const identity = token ? await authenticateToken(deps.db, token) : null;
    if (!identity) throw errors.unauthorized();
    req.identity = identity;
    req.tokenName = identity.name;
  });
  // After the auth hook (hooks run in order): only identified callers are counted, per token and per user.
  installRateLimits(app, deps.redis, {
    mutations: deps.config.ERG_RATE_LIMIT_MUTATIONS, telemetry: deps.config.ERG_RATE_LIMIT_TELEMETRY,
    userMutations: deps.config.ERG_RATE_LIMIT_USER_MUTATIONS, userTelemetry: deps.config.ERG_RATE_LIMIT_USER_TELEMETRY,
    prefix: deps.config.ERG_QUEUE_PREFIX,
  });
  installAudit(app, deps.db);
  // Before any route is registered: onRoute must see them all.
  const accessRules = installAccessControl(app, deps.db);
  app.decorate('accessRules', accessRules);

  app.setErrorHandler((err, req, reply) => {
    if (err instanceof ApiError) return reply.status(err.status).send(err.toJSON());
    if ((err as { code?: string }).code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      // Fastify's message does not say what the limit is; routes have their own (body-limits.ts).
      const tooLarge = errors.bodyTooLarge(req.routeOptions.bodyLimit ?? deps.config.ERG_BODY_LIMIT, `${req.method} ${req.routeOptions.url ?? req.url.split('?')[0]}`);
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

  const offload =
    deps.offload ??
    new Offload(
      { workers: deps.config.ERG_OFFLOAD_WORKERS, timeoutMs: deps.config.ERG_OFFLOAD_TIMEOUT_MS, maxQueue: deps.config.ERG_OFFLOAD_QUEUE, maxHeapMb: deps.config.ERG_OFFLOAD_HEAP_MB },
      app.log,
    );
  if (!deps.offload) app.addHook('onClose', async () => offload.close());
  if (deps.warmWorkers) app.addHook('onReady', async () => offload.warm());
  const withOffload = { ...deps, offload };

  await app.register(healthRoutes(deps));
  await app.register(clusterRoutes(deps), { prefix: '/v1' });
  await app.register(campaignRoutes(withOffload), { prefix: '/v1' });
  await app.register(runRoutes(deps), { prefix: '/v1' });
  await app.register(suiteRoutes(withOffload), { prefix: '/v1' });
  await app.register(accessRoutes(deps), { prefix: '/v1' });
  await app.register(webhookPolicyRoutes(deps), { prefix: '/v1' });
  await app.register(queueRoutes(deps), { prefix: '/v1' });
  await app.register(eventRoutes(deps), { prefix: '/v1' });
  await app.register(auditRoutes(deps), { prefix: '/v1' });
  await app.register(webRoutes(deps.config.ERG_WEB_DIR));
  await app.register(telemetryRoutes({ ...withOffload, telemetry: deps.telemetry ?? new TelemetryWriter(deps.db), metrics }), { prefix: '/v1' });
  await app.register(metricsRoutes({ ...deps, metrics }));
  return app;
}
