#!/usr/bin/env node
import { Redis } from 'ioredis';
import pino from 'pino';
import { createDatabase, ensureDatabase, migrate, TelemetryWriter } from '@erg/db';
import { AgentBundle } from './agent-bundle';
import { redisConnection } from '@erg/queue';
import { parseSchedulerConfig } from './config';
import { ClusterLinks } from './connections';
import { SpecCache } from './spec-cache';
import { startScheduler } from './worker';

async function main(): Promise<void> {
  const config = parseSchedulerConfig(process.env);
  const log = pino({ level: config.LOG_LEVEL, base: { app: 'scheduler' } });
  await ensureDatabase(config.DATABASE_URL);
  await migrate(config.DATABASE_URL);
  const db = createDatabase(config.DATABASE_URL);
  const redis = new Redis(redisConnection(config.REDIS_URL) as object);
  const links = new ClusterLinks(config.ERG_SSH_MAX_SESSIONS);
  const agent = config.ERG_TELEMETRY === 'on' ? new AgentBundle() : null;
  const telemetry = new TelemetryWriter(db);
  const handle = await startScheduler({ config, db, redis, links, specs: new SpecCache(db), log, agent, telemetry });

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'shutting down');
    await handle.close();
    await links.closeAll();
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
