// The scheduler beside a benchmark's API (bench-api.js), in this process, on the same database
// and queue prefix: its energy worker computes what POST /finish and late batches leave to it
// (the API answers at once and wakes it with a `refresh-energy` job). No clusters: its cycles
// have nothing to do.
'use strict';
const pino = require('pino');
const { createSchedulerContext, startScheduler, SchedulerConfig } = require('@erg/scheduler');
const { secretBoxFrom } = require('@erg/secrets');

/** `bench`: what startBenchApi returned. `env`: more scheduler configuration (SchedulerConfig names). */
async function startBenchScheduler(bench, env = {}) {
  const config = SchedulerConfig.parse({ DATABASE_URL: bench.url, ERG_QUEUE_PREFIX: bench.prefix, ERG_TELEMETRY: 'off', ERG_METRICS_PORT: '0', LOG_LEVEL: 'warn', ...env });
  const ctx = createSchedulerContext({ config, db: bench.db, redis: bench.redis, secrets: secretBoxFrom(config), log: pino({ level: 'warn' }) });
  const scheduler = await startScheduler(ctx);
  return {
    ctx,
    async close() {
      await scheduler.close();
      await ctx.close();
    },
  };
}

module.exports = { startBenchScheduler };
