#!/usr/bin/env node
import { Redis } from 'ioredis';
import { createDatabase, ensureDatabase, migrate } from '@erg/db';
import { createSchedulerQueue, redisConnection } from '@erg/queue';
import { secretBoxFrom } from '@erg/secrets';
import { buildApp } from './app';
import { ClusterFiles } from './cluster-files';
import { parseApiConfig } from './config';

async function main(): Promise<void> {
  const config = parseApiConfig(process.env);
  // Before anything else: without its key the API could neither store nor use a cluster's credentials.
  const secrets = secretBoxFrom(config);
  await ensureDatabase(config.DATABASE_URL);
  await migrate(config.DATABASE_URL);
  const db = createDatabase(config.DATABASE_URL);
  const redis = new Redis({ ...(redisConnection(config.REDIS_URL) as object), maxRetriesPerRequest: 1, lazyConnect: false });
  redis.on('error', () => undefined); // readiness reports it; the API keeps serving from Postgres
  const queue = createSchedulerQueue(config.REDIS_URL, config.ERG_QUEUE_PREFIX);
  queue.on('error', () => undefined);
  const clusterFiles = new ClusterFiles(secrets);
  const app = await buildApp({ config, db, queue, redis, clusterFiles, secrets, warmWorkers: true });
  await app.listen({ host: config.ERG_API_HOST, port: config.ERG_API_PORT });

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    await app.close();
    await clusterFiles.close();
    await queue.close();
    redis.disconnect();
    await db.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err: Error) => {
  console.error(`erg api failed to start: ${err.message}`);
  process.exit(1);
});
