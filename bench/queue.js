#!/usr/bin/env node
// Benchmark: GET /v1/queue with 10,000 unfinished runs in the database — 2 clusters, 20 campaigns
// of 500 runs (250 configurations × 2 repetitions). Per cluster 2,000 runs are claimed, 1,000 of
// them queued and 300 of those running, each running run with a minute of telemetry (gpu0.power
// and cpu0.power), so the page's live power is read too. Prints the median latency of `--requests`
// GETs at the default limit (500) and at the largest (5000).
//
//   npx turbo run build && node bench/queue.js        # --help: the options
'use strict';
const { parseOptions } = require('./lib/options');

const { opts } = parseOptions({
  script: __filename,
  summary: 'GET /v1/queue with 10,000 unfinished runs in the database (2 clusters, 20 campaigns of 500 runs; per cluster 2,000 '
    + 'claimed, 1,000 queued, 300 running with a minute of telemetry each, so the page\'s live power is read too): the median '
    + 'latency of sequential requests at the default limit, at the largest (5000), and filtered by state and cluster. Needs '
    + 'the build (npx turbo run build), Postgres and Redis.',
  options: {
    requests: { type: 'integer', min: 1, default: 20, quick: 3, description: 'requests per query (after one warm-up)' },
    quick: { type: 'boolean', description: '600 runs (20 campaigns of 30; 36 running), 3 requests per query (a test runs it)' },
    json: { type: 'boolean', description: 'one line of JSON at the end, with each query\'s runs by state (the text goes to stderr)' },
  },
  examples: ['node bench/queue.js --requests 20', 'node bench/queue.js --quick --json'],
});
const { median, startBenchApi } = require('./lib/bench-api');
const { queueSeedShape, seedQueue } = require('./lib/queue-seed');

const REQUESTS = opts.requests;
const SHAPE = queueSeedShape(opts.quick ? 600 : 10_000);
const log = opts.json ? console.error : console.log;

async function main() {
  const bench = await startBenchApi('queue', { poolSize: 10 });
  const { call } = bench;
  try {
    const seedStart = performance.now();
    const unfinished = await seedQueue(bench, 'queue-bench', SHAPE.runs);
    const seedSeconds = (performance.now() - seedStart) / 1000;
    log(`seeded ${unfinished} unfinished runs (2 clusters, ${SHAPE.campaigns} campaigns, ${2 * SHAPE.running} running with telemetry) in ${seedSeconds.toFixed(1)} s`);
    const queries = [];

    for (const query of ['', '?limit=5000', '?state=running', '?cluster=beta&state=pending']) {
      const times = [];
      let body;
      await call('GET', `/v1/queue${query}`); // warm-up
      for (let i = 0; i < REQUESTS; i++) {
        const start = performance.now();
        body = await call('GET', `/v1/queue${query}`);
        times.push(performance.now() - start);
      }
      const withPower = body.runs.filter((r) => r.powerW !== null).length;
      log(`GET /v1/queue${query.padEnd(28)} median ${median(times).toFixed(1)} ms over ${times.length} (min ${Math.min(...times).toFixed(1)}, max ${Math.max(...times).toFixed(1)}); ${body.runs.length} runs of ${body.total}, ${withPower} with powerW`);
      const states = {};
      for (const r of body.runs) states[r.state] = (states[r.state] ?? 0) + 1;
      queries.push({
        query, requests: times.length, medianMs: median(times), minMs: Math.min(...times), maxMs: Math.max(...times),
        returned: body.runs.length, total: body.total, truncated: body.truncated, withPower, states,
        clusters: body.runs.reduce((n, r) => ({ ...n, [r.cluster]: (n[r.cluster] ?? 0) + 1 }), {}),
      });
    }
    if (opts.json) console.log(JSON.stringify({ seed: SHAPE, unfinished, seedSeconds, queries }));
  } finally {
    await bench.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
