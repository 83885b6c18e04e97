import Fastify, { type FastifyInstance } from 'fastify';
import type { FastifyBaseLogger } from 'fastify';
import { serializerCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { TelemetryWriter, Database } from '@erg/db';
import { LOG_REDACTION, type SecretBox } from '@erg/secrets';
import type { ApiConfig } from './config';
import { validatorCompiler } from './validation';
import { Offload } from './offload';
import { ExpensiveReads } from './expensive-reads';
import { ResultsCache } from './results-cache';
import { ResultsReader } from './results-reader';
import type { ClusterFiles } from './cluster-files';
import { createApiMetrics, type ApiMetrics } from './metrics';
import { certificateWarningPolicy } from './cluster-credentials';
import { observeRequests } from './observe';
import { installRateLimits } from './rate-limit';
import { installAudit } from './audit';
import { installAccessControl, type RouteRule } from './access';
import { installAuthentication } from './authenticate';
import { installBodyParsers } from './body-parsers';
import { frameworkErrors, installErrorHandlers } from './error-handler';
import { registerOpenApi } from './openapi';
import { registerRoutes } from './routes';

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
  /** Start the validation and results workers with the app instead of on first need (main.ts; tests start them lazily). */
  warmWorkers?: boolean;
  /** Test seam: awaited when a campaign's results computation has its place, before it starts (results-reader.ts). */
  beforeResultsCompute?: (campaignId: string) => Promise<void>;
}

/** What the expensive reads share (routes/campaigns.ts): the results reader, and every token's places. */
export interface ExpensiveReadDeps {
  results: ResultsReader;
  places: ExpensiveReads;
  /** Where evidence bundles' campaign files are read and written (evidence-worker.js); not `available`: inline. */
  evidence: Offload;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every /v1 route with its access rule (see access.ts). */
    accessRules: RouteRule[];
  }
}

/**
 * The API as a Fastify instance, not yet listening. The steps are in the order that matters:
 * parsers and the OpenAPI plugin before any route, the onRequest hooks in their running order
 * (observe, authenticate, rate-limit, audit, access control), then the error handlers, then the routes.
 */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    ...(deps.logger
      ? { loggerInstance: deps.logger }
      : { logger: deps.config.LOG_LEVEL === 'silent' ? false : { level: deps.config.LOG_LEVEL, redact: LOG_REDACTION } }),
    bodyLimit: deps.config.ERG_BODY_LIMIT,
    frameworkErrors,
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  installBodyParsers(app);
  await registerOpenApi(app);

  // Cluster names only behind ERG_METRICS_TOKEN: an open /metrics must not list them.
  const metrics = deps.metrics ?? createApiMetrics({
    db: deps.db, queue: deps.queue, clusterNames: deps.config.ERG_METRICS_TOKEN !== undefined, certificateWarning: certificateWarningPolicy(deps.config),
  });
  // The onRequest hooks run in the order they are added. Observation first: even a request the
  // auth hook refuses has its campaign or run id on its log lines.
  observeRequests(app, metrics);
  installAuthentication(app, deps.db);
  // After the auth hook: only identified callers are counted, per token and per user.
  await installRateLimits(app, deps.redis, {
    mutations: deps.config.ERG_RATE_LIMIT_MUTATIONS, telemetry: deps.config.ERG_RATE_LIMIT_TELEMETRY, reads: deps.config.ERG_RATE_LIMIT_EXPENSIVE_READS,
    userMutations: deps.config.ERG_RATE_LIMIT_USER_MUTATIONS, userTelemetry: deps.config.ERG_RATE_LIMIT_USER_TELEMETRY, userReads: deps.config.ERG_RATE_LIMIT_USER_EXPENSIVE_READS,
    prefix: deps.config.ERG_QUEUE_PREFIX,
  });
  installAudit(app, deps.db);
  // Before any route is registered: onRoute must see them all.
  app.decorate('accessRules', installAccessControl(app, deps.db));
  // Before the routes as well: a route keeps the error handler in force when it was added.
  installErrorHandlers(app, deps.config.ERG_BODY_LIMIT);

  await registerRoutes(app, deps, startOffload(app, deps), startExpensiveReads(app, deps, metrics), metrics);
  return app;
}

/**
 * The results reader with its own worker threads (their own database connections, a larger heap
 * and a longer deadline than the validation workers': a results job reads and computes over every
 * run), its cache, and the per-token places it shares with the evidence bundles; and the
 * evidence bundles' worker thread.
 */
function startExpensiveReads(app: FastifyInstance, deps: AppDeps, metrics: ApiMetrics): ExpensiveReadDeps {
  const { config } = deps;
  const workers = new Offload(
    {
      workers: config.ERG_RESULTS_WORKERS, timeoutMs: config.ERG_RESULTS_TIMEOUT_MS, maxQueue: config.ERG_RESULTS_QUEUE, maxHeapMb: config.ERG_RESULTS_HEAP_MB,
      script: 'results-worker.js', workerData: { databaseUrl: config.DATABASE_URL }, task: 'compute',
    },
    app.log,
  );
  app.addHook('onClose', async () => workers.close());
  if (deps.warmWorkers) app.addHook('onReady', async () => workers.warm());
  const places = new ExpensiveReads(config.ERG_EXPENSIVE_READS_PER_TOKEN);
  const results = new ResultsReader({
    db: deps.db, workers, cache: new ResultsCache(config.ERG_RESULTS_CACHE_MB * 1024 * 1024), places,
    answered: (source) => metrics.campaignResults.inc({ source }),
    inputsRead: (read) => metrics.resultsInputs.inc({ read }),
    ...(deps.beforeResultsCompute ? { beforeCompute: deps.beforeResultsCompute } : {}),
  });
  // One thread, started on the first bundle, as the results workers are (none when they are off);
  // at most ERG_EXPORTS_AT_ONCE bundles wait for it, and none past the results' deadline and heap.
  const evidence = new Offload(
    {
      workers: Math.min(config.ERG_RESULTS_WORKERS, 1), timeoutMs: config.ERG_RESULTS_TIMEOUT_MS, maxQueue: config.ERG_EXPORTS_AT_ONCE, maxHeapMb: config.ERG_RESULTS_HEAP_MB,
      script: 'evidence-worker.js', workerData: { databaseUrl: config.DATABASE_URL }, task: "read a campaign's inputs",
    },
    app.log,
  );
  app.addHook('onClose', async () => evidence.close());
  return { results, places, evidence };
}

/** Worker threads for large request bodies: the caller's, or this app's own, closed with it. */
function startOffload(app: FastifyInstance, deps: AppDeps): Offload {
  const offload =
    deps.offload ??
    new Offload(
      { workers: deps.config.ERG_OFFLOAD_WORKERS, timeoutMs: deps.config.ERG_OFFLOAD_TIMEOUT_MS, maxQueue: deps.config.ERG_OFFLOAD_QUEUE, maxHeapMb: deps.config.ERG_OFFLOAD_HEAP_MB },
      app.log,
    );
  if (!deps.offload) app.addHook('onClose', async () => offload.close());
  if (deps.warmWorkers) app.addHook('onReady', async () => offload.warm());
  return offload;
}
