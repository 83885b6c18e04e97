#!/usr/bin/env node
// Benchmark: GET /v1/runs/{id}/logs with large tails, against the local Slurm cluster
// (deploy/local-slurm). The API runs as its own process (apps/api/dist/main.js) so that its
// memory can be read from /proc: its resident memory at rest, its peak (VmHWM) while N concurrent
// requests each stream the last 16 MiB of a run's stdout.log and stderr.log (16.2 MiB each), and
// /healthz latency (median and worst, polled every 20 ms) meanwhile.
//
//   npx turbo run build --filter=@erg/api && node bench/log-tails.js      # --help: the options
'use strict';
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { parseOptions } = require('./lib/options');

const { opts } = parseOptions({
  script: __filename,
  summary: 'GET /v1/runs/{id}/logs with large tails against the local Slurm cluster (deploy/local-slurm), the API as its own '
    + 'process: its resident memory at rest and at its peak (VmHWM) while concurrent requests each stream the last MiBs of a '
    + 'run\'s stdout.log and stderr.log, and /healthz latency (median, worst, polled every 20 ms) meanwhile. Needs the build '
    + '(npx turbo run build --filter=@erg/api), Postgres and deploy/local-slurm/up.sh.',
  options: {
    requests: { type: 'integer', min: 1, default: 6, description: 'concurrent log requests (2 with --quick, whatever this says)' },
    'tail-mib': { type: 'number', above: 0, default: 16, description: 'MiB of each log\'s tail a request streams (1 with --quick, whatever this says)' },
    quick: { type: 'boolean', description: '2 requests of 1 MiB tails (a test runs it)' },
    json: { type: 'boolean', description: 'one line of JSON at the end' },
  },
  examples: ['node bench/log-tails.js --requests 6 --tail-mib 16', 'node bench/log-tails.js --quick --json'],
});
const { createApiToken, createDatabase, dropDatabase, ensureDatabase, migrate } = require('@erg/db');
const { setRunDir } = require('@erg/db/testing');
const { ClusterConnection, shellQuote } = require('@erg/slurm');
const { median } = require('./lib/bench-api');

const root = path.resolve(__dirname, '..');
const requests = opts.quick ? 2 : opts.requests;
const tailBytes = (opts.quick ? 1 : opts['tail-mib']) * 1024 * 1024;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function memory(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)[1]) / 1024;
  return { rssMb: mb('VmRSS'), peakMb: mb('VmHWM') };
}

function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function main() {
  // The local cluster ERG_E2E_SLURM names (22.05 by default; deploy/local-slurm).
  const cluster = require('@erg/testkit').loadLocalCluster();
  const stamp = Date.now().toString(36);
  const database = `erg_bench_logs_${stamp}`;
  const dbUrl = `postgresql://postgres@127.0.0.1:5432/${database}`;
  await ensureDatabase(dbUrl);
  await migrate(dbUrl);
  const db = createDatabase(dbUrl, { max: 2 });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const api = spawn(process.execPath, [path.join(root, 'apps', 'api', 'dist', 'main.js')], {
    env: {
      ...process.env, DATABASE_URL: dbUrl, ERG_API_PORT: String(port), ERG_QUEUE_PREFIX: `ergbench_logs_${stamp}`, LOG_LEVEL: 'warn',
      ERG_LOG_READS_PER_TOKEN: String(requests), ERG_LOG_READS_PER_CLUSTER: String(requests),
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const ssh = new ClusterConnection({
    host: cluster.host, port: cluster.port, username: cluster.user, privateKey: fs.readFileSync(cluster.privateKeyPath), hostKeySha256: cluster.hostKeySha256,
    // The local cluster is on loopback: allowed, as its project allows it (below).
    allowHosts: [cluster.host],
  });
  const workDir = `${cluster.workDir}/bench-logs-${stamp}`;
  try {
    for (let i = 0; ; i++) {
      if ((await fetch(`${url}/healthz`).catch(() => null))?.ok) break;
      if (i > 150) throw new Error('the API did not start');
      await sleep(200);
    }
    const { token } = await createApiToken(db, 'bench');
    const call = async (method, route, body) => {
      const res = await fetch(url + route, {
        method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body && JSON.stringify(body),
      });
      const data = await res.json();
      if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${JSON.stringify(data)}`);
      return data;
    };
    await call('PUT', '/v1/projects/default/cluster-policy', { allowHosts: [cluster.host] });
    await call('PUT', '/v1/clusters/local', {
      host: cluster.host, port: cluster.port, user: cluster.user, privateKey: fs.readFileSync(cluster.privateKeyPath, 'utf8'),
      hostKeySha256: cluster.hostKeySha256, defaultPartition: cluster.partition, workDir,
    });
    const campaign = await call('POST', '/v1/campaigns', { name: 'bench-logs', cluster: 'local', parameters: { v: [1] }, run: 'true' });
    const runId = campaign.runs[0].id;
    // No scheduler: the run stays pending, with a run directory made here.
    await setRunDir(db, runId, `${workDir}/run`);
    const q = shellQuote(`${workDir}/run`);
    const made = await ssh.exec(`mkdir -p ${q} && cd ${q} && head -c ${Math.ceil((tailBytes * 3) / 4)} /dev/urandom | base64 -w 100 > stdout.log && cp stdout.log stderr.log`);
    if (made.code !== 0) throw new Error(made.stderr);

    const logs = async () => {
      const res = await fetch(`${url}/v1/runs/${runId}/logs?tailBytes=${tailBytes}`, { headers: { authorization: `Bearer ${token}` } });
      let bytes = 0;
      for await (const chunk of res.body) bytes += chunk.length;
      return { status: res.status, bytes };
    };
    await logs(); // warm: connection and route set up
    await sleep(500);
    const before = memory(api.pid);
    const latencies = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const t0 = process.hrtime.bigint();
        await fetch(`${url}/healthz`);
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
        await sleep(20);
      }
    })();
    const started = Date.now();
    const results = await Promise.all(Array.from({ length: requests }, logs));
    const ms = Date.now() - started;
    polling = false;
    await poller;
    const after = memory(api.pid);
    if (results.some((r) => r.status !== 200)) throw new Error(`a request failed: ${JSON.stringify(results)}`);
    const bytes = results.reduce((a, r) => a + r.bytes, 0);
    const result = {
      requests, tailMiB: tailBytes / 1024 / 1024, ms, 'MB/s': Math.round(bytes / 1e3 / ms),
      rssBeforeMb: Math.round(before.rssMb), peakMb: Math.round(after.peakMb), peakRatio: +(after.peakMb / before.rssMb).toFixed(2),
      healthzMedianMs: +median(latencies).toFixed(1), healthzWorstMs: +Math.max(...latencies).toFixed(1), healthzSamples: latencies.length,
    };
    if (opts.json) console.log(JSON.stringify(result));
    else console.table([result]);
  } finally {
    api.kill('SIGTERM');
    await new Promise((resolve) => (api.exitCode !== null ? resolve() : api.once('exit', resolve)));
    await ssh.exec(`rm -rf ${shellQuote(workDir)}`).catch(() => undefined);
    await ssh.close();
    await db.close();
    await dropDatabase(dbUrl);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
