#!/usr/bin/env node
import { Redis } from 'ioredis';
import pino from 'pino';
import { checkDatabase, createDatabase, ensureDatabase, migrate } from '@erg/db';
import { checkRedis, redisConnection } from '@erg/queue';
import { LOG_REDACTION, secretBoxFrom } from '@erg/secrets';
import { parseSchedulerConfig } from './config';
import { createSchedulerContext } from './context';
import { startMetricsServer, type MetricsServer } from './metrics';
import { startScheduler } from './worker';

async function main(): Promise<void> {
  const config = parseSchedulerConfig(process.env);
  // Before anything else: without its key the scheduler cannot open the clusters' private keys.
  const secrets = secretBoxFrom(config);
  const log = pino({ level: config.LOG_LEVEL, base: { app: 'scheduler' }, redact: LOG_REDACTION });
  await ensureDatabase(config.DATABASE_URL);
  await migrate(config.DATABASE_URL);
  const db = createDatabase(config.DATABASE_URL);
  const redis = new Redis(redisConnection(config.REDIS_URL) as object);
  // ioredis reconnects by itself; without a listener it would print every failed attempt.
  redis.on('error', () => undefined);
  const ctx = createSchedulerContext({ config, db, redis, secrets, log });
  const { metrics } = ctx;
  const handle = await startScheduler(ctx);
  let metricsServer: MetricsServer | null = null;
  if (config.ERG_METRICS_PORT !== 0) {
    // A taken port costs the metrics, not the scheduling: say so loudly and keep running.
    const probes = { postgres: () => checkDatabase(db), redis: () => checkRedis(redis) };
    metricsServer = await startMetricsServer(metrics.registry, config.ERG_METRICS_HOST, config.ERG_METRICS_PORT, probes).then(
      (server) => {
        log.info({ host: config.ERG_METRICS_HOST, port: server.port }, 'metrics, health and readiness served at /metrics, /healthz, /readyz');
        return server;
      },
      (err: Error) => {
        log.error({ host: config.ERG_METRICS_HOST, port: config.ERG_METRICS_PORT, err: err.message }, 'metrics server could not start; running without it');
        return null;
      },
    );
  }

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'shutting down');
    await handle.close();
    await metricsServer?.close();
    await ctx.close();
    redis.disconnect();
    await db.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err: Error) => {
  console.error(`erg scheduler failed to start: ${err.message}`);
  process.exit(1);
});
