#!/usr/bin/env node
// Benchmark: GET /v1/queue with 10,000 unfinished runs in the database — 2 clusters, 20 campaigns
// of 500 runs (250 configurations × 2 repetitions). Per cluster 2,000 runs are claimed, 1,000 of
// them queued and 300 of those running, each running run with a minute of telemetry (gpu0.power
// and cpu0.power), so the page's live power is read too. Prints the median latency of `--requests`
// GETs at the default limit (500) and at the largest (5000).
//
//   npx turbo run build && node bench/queue.js [--requests 20]
'use strict';
const { parseArgs } = require('node:util');
const { median, startBenchApi } = require('./lib/bench-api');
const { seedQueue } = require('./lib/queue-seed');

const { values: opts } = parseArgs({ options: { requests: { type: 'string', default: '20' } } });

async function main() {
  const bench = await startBenchApi('queue', { poolSize: 10 });
  const { call } = bench;
  try {
    const seedStart = performance.now();
    const unfinished = await seedQueue(bench, 'queue-bench');
    console.log(`seeded ${unfinished} unfinished runs (2 clusters, 20 campaigns, 600 running with telemetry) in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`);

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
