// The API as a process of its own (apps/api/dist/main.js) for the benchmarks that watch its event
// loop and its memory: on a fresh database, on a free port, with an admin token; a worker thread of
// the bench polls its /healthz every 10 ms (its own event loop: the bench's JSON parsing does not
// delay it), so the worst /healthz latency of a window is how long the API's loop was held; its peak
// resident memory (VmHWM) can be reset before a step and read after. `close()` stops it and removes
// the database. bench/campaign-scale.js and bench/hostile-reads.js use it.
'use strict';
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { createApiToken, createDatabase, dropDatabase, ensureDatabase, migrate } = require('@erg/db');
const { healthPoller } = require('./healthz');

const root = path.resolve(__dirname, '..', '..');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const round = (x) => Math.round(x * 10) / 10;

/** The process's resident memory now and at its peak (VmHWM), MB. */
function memoryOf(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)[1]) / 1024;
  return { rssMb: round(mb('VmRSS')), peakMb: round(mb('VmHWM')) };
}

/** Resets the process's peak RSS (VmHWM) to its current RSS (Linux: clear_refs 5). */
function resetPeak(pid) {
  fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * A fresh database and API process; with `database` (another's URL), a second process on that
 * database, which it leaves in place. `env`: more of the API's settings (its rate limits are off
 * unless given here). `call` sends JSON with the admin token, throws on an answer of 300 or more,
 * and says how long the answer took and how big it was; `get` answers whatever the status.
 * ERG_BENCH_API_NODE_ARGS: options for the API's node, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
 */
async function startApiProcess(name, env = {}, { database } = {}) {
  const stamp = `${Date.now().toString(36)}${process.pid}`;
  const url = database ?? `postgresql://postgres@127.0.0.1:5432/erg_bench_${name}_${stamp}`;
  if (!database) {
    await ensureDatabase(url);
    await migrate(url);
  }
  const db = createDatabase(url, { max: 8 });
  const port = await freePort();
  const api = `http://127.0.0.1:${port}`;
  const nodeArgs = (process.env.ERG_BENCH_API_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, path.join(root, 'apps', 'api', 'dist', 'main.js')], {
    env: {
      ...process.env, DATABASE_URL: url, ERG_API_PORT: String(port), ERG_QUEUE_PREFIX: `ergbench_${name}_${stamp}`, LOG_LEVEL: 'warn',
      ERG_RATE_LIMIT_MUTATIONS: '0', ERG_RATE_LIMIT_TELEMETRY: '0', ERG_RATE_LIMIT_USER_MUTATIONS: '0', ERG_RATE_LIMIT_USER_TELEMETRY: '0',
      ERG_RATE_LIMIT_EXPENSIVE_READS: '0', ERG_RATE_LIMIT_USER_EXPENSIVE_READS: '0',
      ...env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  for (let i = 0; ; i++) {
    if ((await fetch(`${api}/healthz`).catch(() => null))?.ok) break;
    if (i > 150 || child.exitCode !== null) throw new Error('the API did not start');
    await sleep(100);
  }
  const { token } = await createApiToken(db, 'bench');
  /**
   * Any request with the admin token (or `as`): status, time (until the last byte), size, the text,
   * and `json()` to parse it — afterwards, so that parsing one large answer does not delay the
   * arrival of others sent at the same time.
   */
  async function get(route, { method = 'GET', body, as = token } = {}) {
    const t0 = performance.now();
    const res = await fetch(api + route, {
      method, headers: { authorization: `Bearer ${as}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const bytes = Buffer.from(await res.arrayBuffer());
    const ms = performance.now() - t0;
    const text = () => bytes.toString('utf8');
    return { status: res.status, ms, bytes: bytes.byteLength, text, json: () => JSON.parse(text()) };
  }
  async function call(method, route, body) {
    const res = await get(route, { method, body });
    if (res.status >= 300) throw new Error(`${method} ${route}: ${res.status} ${res.text().slice(0, 2000)}`);
    return { data: res.json(), ms: res.ms, bytes: res.bytes };
  }
  // Its clusters are registered at 127.0.0.1 (never reached): allowed for the project, as an admin does.
  await call('PUT', '/v1/projects/default/cluster-policy', { allowHosts: ['127.0.0.1'] });
  const health = healthPoller(api);
  async function close() {
    await health.stop();
    child.kill('SIGTERM');
    await Promise.race([exited, sleep(10_000)]);
    await db.close();
    if (!database) await dropDatabase(url);
  }
  return { url, db, api, pid: child.pid, token, call, get, health, close };
}

/** Runs `step()` with the API's peak RSS reset before it and /healthz watched; returns what it returned with both. */
async function watched(bench, step) {
  resetPeak(bench.pid);
  const before = memoryOf(bench.pid).rssMb;
  const w = bench.health.window();
  const value = await step();
  const healthz = await w.end();
  return { value, rssBeforeMb: before, peakRssMb: memoryOf(bench.pid).peakMb, healthz };
}

module.exports = { startApiProcess, watched, memoryOf, resetPeak, freePort, healthPoller, round };
