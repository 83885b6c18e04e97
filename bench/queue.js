#!/usr/bin/env node
// Benchmark: GET /v1/queue with 10,000 unfinished runs in the database — 2 clusters, 20 campaigns
// of 500 runs (250 configurations × 2 repetitions). Per cluster 2,000 runs are claimed, 1,000 of
// them queued and 300 of those running, each running run with a minute of telemetry (gpu0.power
// and cpu0.power), so the page's live power is read too. Prints the median latency of `--requests`
// GETs at the default limit (500) and at the largest (5000).
//
//   npx turbo run build && node bench/queue.js [--requests 20]
'use strict';
const { generateKeyPairSync } = require('node:crypto');
const { parseArgs } = require('node:util');
const { claimRunsForSubmission, markRunsQueued, recordSlurmProgress } = require('@erg/db');
const { startBenchApi } = require('./lib/bench-api');

const { values: opts } = parseArgs({ options: { requests: { type: 'string', default: '20' } } });

const PRIVATE_KEY = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

async function main() {
  const bench = await startBenchApi('queue', { poolSize: 10 });
  const { call, db } = bench;
  try {
    const seedStart = performance.now();
    for (const name of ['alpha', 'beta']) {
      await call('POST', '/v1/clusters', {
        name, host: '127.0.0.1', port: 2222, user: 'root', privateKey: PRIVATE_KEY, hostKeySha256: 'SHA256:' + 'A'.repeat(43),
        workDir: '/var/lib/erg-bench', defaultPartition: 'gpu',
      });
    }
    for (let i = 0; i < 20; i++) {
      await call('POST', '/v1/campaigns', {
        name: `queue-bench-${i}`, cluster: i % 2 ? 'beta' : 'alpha', repetitions: 2,
        parameters: { n: Array.from({ length: 250 }, (_, k) => k + 1) }, resources: { nodes: 1, time: '00:10:00' }, run: 'echo {{n}}',
      });
    }
    const now = Date.now();
    const t = Array.from({ length: 60 }, (_, k) => now - 60_000 + k * 1000);
    for (const name of ['alpha', 'beta']) {
      const cluster = await db.prisma.cluster.findUniqueOrThrow({ where: { name } });
      const claimed = await claimRunsForSubmission(db, cluster.id, 2000);
      const queued = claimed.slice(0, 1000);
      await markRunsQueued(db, queued.map((r, k) => ({ runId: r.id, slurmJobId: String(100000 + k) })));
      const running = queued.slice(0, 300);
      await recordSlurmProgress(db, running.map((r) => ({ runId: r.id, state: 'running', slurmState: 'RUNNING', reason: null, startedAt: new Date(), nodeList: 'node01' })));
      let next = 0;
      await Promise.all(Array.from({ length: 8 }, async () => {
        while (next < running.length) {
          const r = running[next++];
          await call('POST', `/v1/runs/${r.id}/telemetry`, {
            node: 'node01', seq: 0,
            samples: [{ sensor: 'gpu0.power', t, v: t.map(() => 300) }, { sensor: 'cpu0.power', t, v: t.map(() => 90) }],
          });
        }
      }));
    }
    const count = await db.pool.query(`SELECT count(*)::int AS n FROM runs WHERE state IN ('pending', 'submitting', 'queued', 'running', 'completing')`);
    console.log(`seeded ${count.rows[0].n} unfinished runs (2 clusters, 20 campaigns, 600 running with telemetry) in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`);
    await db.pool.query('ANALYZE');

    for (const query of ['', '?limit=5000', '?state=running', '?cluster=beta&state=pending']) {
      const times = [];
      let body;
      await call('GET', `/v1/queue${query}`); // warm-up
      for (let i = 0; i < Number(opts.requests); i++) {
        const start = performance.now();
        body = await call('GET', `/v1/queue${query}`);
        times.push(performance.now() - start);
      }
      const withPower = body.runs.filter((r) => r.powerW !== null).length;
      console.log(`GET /v1/queue${query.padEnd(28)} median ${median(times).toFixed(1)} ms over ${times.length} (min ${Math.min(...times).toFixed(1)}, max ${Math.max(...times).toFixed(1)}); ${body.runs.length} runs of ${body.total}, ${withPower} with powerW`);
    }
  } finally {
    await bench.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
