import { Redis } from 'ioredis';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { createApiToken, createDatabase, storeRunEnergy, type Database } from '@erg/db';
import { forceRunEnd } from '@erg/db/testing';
import { refreshStaleRunEnergy, STALE_REFRESH_LIMIT } from '@erg/results';
import { createSchedulerQueue, redisConnection } from '@erg/queue';
import { secretBoxFrom } from '@erg/secrets';
import { allowLoopbackClusters, createTestDatabase, TEST_SECRET_KEY, uniqueName, type TestDatabase } from '@erg/testkit';
import type { Queue } from 'bullmq';
import { buildApp } from '../src/app';
import { ClusterFiles } from '../src/cluster-files';
import { ApiConfig } from '../src/config';

export interface TestApi {
  app: FastifyInstance;
  db: Database;
  queue: Queue;
  token: string;
  config: ApiConfig;
  close(): Promise<void>;
}

/** Ends a run completed with these figures, as finalization and refreshRunEnergy would leave it (for the strategies' steps to read). */
export async function completeRun(db: Database, runId: string, timeS: number, energyJ: number): Promise<void> {
  await forceRunEnd(db, runId, 'completed');
  const result = { timeS, energyJ, edpJs: timeS * energyJ, ed2pJs2: timeS * timeS * energyJ, avgPowerW: energyJ / timeS, coverage: 1, components: {}, flags: [] };
  await storeRunEnergy(db, runId, { timeS, energyJ, method: 'integrated', coverage: 1, result }, 1);
}

/**
 * What the scheduler does after POST /v1/runs/{id}/finish (and after late batches): computes the
 * figures of every run that owes them, page after page, with the same function its tick and its
 * `refresh-energy` job call (no scheduler runs beside these tests).
 */
export async function computeDueEnergy(db: Database): Promise<void> {
  while ((await refreshStaleRunEnergy(db)).length === STALE_REFRESH_LIMIT);
}

/**
 * JSON requests to a test API as its admin token: `call` answers whatever the status; `ok` throws
 * with the status and body on one of 300 or more. `api` is read at each request (it is usually
 * started in beforeAll, after the helpers are made).
 */
export function apiRequests(api: () => Pick<TestApi, 'app' | 'token'>) {
  async function call(method: string, url: string, body?: unknown): Promise<{ status: number; body: any }> {
    const { app, token } = api();
    const res = await app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${token}` }, ...(body === undefined ? {} : { payload: body as object }) });
    return { status: res.statusCode, body: res.body === '' ? null : res.json() };
  }
  async function ok(method: string, url: string, body?: unknown): Promise<any> {
    const res = await call(method, url, body);
    if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }
  return { call, ok };
}

/**
 * An API instance on its own database and queue prefix, driven with app.inject. `logger` replaces
 * the one LOG_LEVEL would build (tests that read the log lines pass one writing into memory);
 * `beforeResultsCompute` is the results reader's seam (AppDeps).
 * The default project allows clusters on loopback, as the quickstart's admin does: the tests'
 * clusters are registered at 127.0.0.1 (other projects start with the strict cluster policy).
 */
export async function startTestApi(
  env: Record<string, string> = {}, options: { logger?: FastifyBaseLogger; beforeResultsCompute?: (campaignId: string) => Promise<void> } = {},
): Promise<TestApi & { tdb: TestDatabase }> {
  const tdb = await createTestDatabase();
  const config = ApiConfig.parse({ DATABASE_URL: tdb.url, ERG_QUEUE_PREFIX: uniqueName('ergtest'), LOG_LEVEL: process.env.ERG_TEST_LOG_LEVEL ?? 'silent', ERG_SECRET_KEY: TEST_SECRET_KEY, ...env });
  const secrets = secretBoxFrom(config);
  const db = createDatabase(config.DATABASE_URL);
  await allowLoopbackClusters(db);
  const redis = new Redis(redisConnection(config.REDIS_URL) as object);
  const queue = createSchedulerQueue(config.REDIS_URL, config.ERG_QUEUE_PREFIX);
  const clusterFiles = new ClusterFiles(secrets);
  const app = await buildApp({
    config, db, queue, redis, clusterFiles, secrets, ...(options.logger ? { logger: options.logger } : {}),
    ...(options.beforeResultsCompute ? { beforeResultsCompute: options.beforeResultsCompute } : {}),
  });
  const { token } = await createApiToken(db, 'test');
  return {
    app, db, queue, token, config, tdb,
    async close() {
      await app.close();
      await clusterFiles.close();
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      redis.disconnect();
      await db.close();
      await tdb.drop();
    },
  };
}
