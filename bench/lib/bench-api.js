// The API every benchmark drives: in this process, on a database and queue prefix of its own,
// listening on a free port, with an admin token; `close()` removes the database again.
'use strict';
const { Redis } = require('ioredis');
const { buildApp, ApiConfig, ClusterFiles } = require('@erg/api');
const { createApiToken, createDatabase, dropDatabase, ensureDatabase, migrate } = require('@erg/db');
const { createSchedulerQueue, redisConnection } = require('@erg/queue');
const { secretBoxFrom } = require('@erg/secrets');
const { median } = require('./healthz');

/** `env`: more API configuration (ApiConfig names), e.g. { ERG_CANCEL_INLINE_RUNS: '0' }. */
async function startBenchApi(name, { poolSize = 10, env = {} } = {}) {
  const stamp = Date.now().toString(36);
  const database = `erg_bench_${name}_${stamp}`;
  const url = `postgresql://postgres@127.0.0.1:5432/${database}`;
  await ensureDatabase(url);
  await migrate(url);
  const db = createDatabase(url, { max: poolSize });
  const redis = new Redis(redisConnection('redis://127.0.0.1:6379'));
  const prefix = `ergbench_${name}_${stamp}`;
  // Rate limits off unless a bench asks for them: the benches measure throughput, and one admin
  // token doing thousands of runs' worth of requests would otherwise be told to wait (429).
  const unlimited = {
    ERG_RATE_LIMIT_MUTATIONS: '0', ERG_RATE_LIMIT_TELEMETRY: '0', ERG_RATE_LIMIT_USER_MUTATIONS: '0', ERG_RATE_LIMIT_USER_TELEMETRY: '0',
    ERG_RATE_LIMIT_EXPENSIVE_READS: '0', ERG_RATE_LIMIT_USER_EXPENSIVE_READS: '0',
  };
  const config = ApiConfig.parse({ DATABASE_URL: url, ERG_QUEUE_PREFIX: prefix, LOG_LEVEL: 'silent', ...unlimited, ...env });
  const queue = createSchedulerQueue(config.REDIS_URL, prefix);
  // The key of .erg/secret.key (ERG_SECRET_KEY_FILE's default), as the bench's scheduler reads it too.
  const secrets = secretBoxFrom(config);
  const clusterFiles = new ClusterFiles(secrets);
  const app = await buildApp({ config, db, queue, redis, clusterFiles, secrets });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const api = `http://127.0.0.1:${app.server.address().port}`;
  const { token } = await createApiToken(db, 'bench');

  /** JSON over HTTP with the admin token; throws on any non-2xx answer. */
  async function call(method, path, body) {
    const res = await fetch(api + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const data = await res.json();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(data)}`);
    return data;
  }
  // The benches' clusters are on loopback (the local cluster, or one never reached): the admin
  // allows that for the default project, as the quickstart does (docs/security.md, cluster policy).
  await call('PUT', '/v1/projects/default/cluster-policy', { allowHosts: ['127.0.0.1'] });

  async function close() {
    // A browser bench's event streams may still be open (its browser slow to close on a loaded
    // machine): app.close() would wait for them, so they are ended first.
    app.server.closeAllConnections?.();
    await app.close();
    await clusterFiles.close();
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    redis.disconnect();
    await db.close();
    await dropDatabase(url);
  }

  return { url, db, redis, prefix, app, api, token, call, close };
}


module.exports = { startBenchApi, median };
