#!/usr/bin/env node
// Benchmark: each hostile request of issue 10 §2 (a huge grid with 1,000 excludes, refused and
// accepted; the same from a viewer; 40,000 empty telemetry series in 5 KB of gzip; the largest
// telemetry batch; 5,000-level JSON and YAML; a YAML alias bomb; 1 MiB of flow YAML; oversized
// keys; a spec with 40,000 wrong values) sent while /healthz is polled every ~10 ms; prints the
// answers and /healthz latency (median, worst) per kind. Target: /healthz under 100 ms meanwhile.
//
//   node bench/hostile-requests.js        # --help: the options
//
// Needs the build (npx turbo run build: the API's worker threads run from dist), Postgres and Redis.
// apps/api/test/hostile-bench.int.test.ts calls runHostileBench (each request once).
'use strict';
const { execFile } = require('node:child_process');
const path = require('node:path');
const { promisify } = require('node:util');
const { parseOptions } = require('./lib/options');

// Run as a script (not required by a test): the options first, before the API's modules load.
const opts = require.main === module ? parseOptions({
  script: __filename,
  summary: 'each hostile request of issue 10 §2 (a huge grid with 1,000 excludes, refused and accepted; the same from a viewer; '
    + '40,000 empty telemetry series in 5 KB of gzip; the largest telemetry batch; 5,000-level JSON and YAML; a YAML alias bomb; '
    + '1 MiB of flow YAML; oversized keys; a spec with 40,000 wrong values) sent while /healthz is polled every ~10 ms; prints '
    + 'the answers and /healthz latency (median, worst) per kind. Target: /healthz under 100 ms meanwhile. Needs the build '
    + '(npx turbo run build), Postgres and Redis.',
  options: {
    repeat: { type: 'integer', min: 1, default: 5, description: 'times each request is sent (1 with --quick, whatever this says)' },
    quick: { type: 'boolean', description: 'each request once' },
    json: { type: 'boolean', description: 'the results as JSON instead of the table' },
  },
  examples: ['node bench/hostile-requests.js --repeat 5', 'node bench/hostile-requests.js --quick --json'],
}).opts : null;
const { startBenchApi } = require('./lib/bench-api');

const execFileAsync = promisify(execFile);

/** Starts the API, makes a viewer token and an import run, runs the client; returns its results. */
async function runHostileBench({ repeat = 5, kinds } = {}) {
  const bench = await startBenchApi('hostile', { poolSize: 4 });
  try {
    await bench.call('POST', '/v1/users', { name: 'viewer' });
    await bench.call('PUT', '/v1/projects/default/members/viewer', { role: 'viewer' });
    const viewerToken = (await bench.call('POST', '/v1/tokens', { name: 'viewer', user: 'viewer' })).token;
    const sink = await bench.call('POST', '/v1/campaigns?project=default', { name: 'telemetry-sink', execution: 'import' });
    const config = { adminToken: bench.token, viewerToken, runId: sink.runs[0].id, repeat, kinds };
    const { stdout } = await execFileAsync(process.execPath, [path.join(__dirname, 'hostile-client.js'), bench.api, JSON.stringify(config)], {
      encoding: 'utf8', maxBuffer: 16 << 20,
    });
    return JSON.parse(stdout);
  } finally {
    await bench.close();
  }
}

function table(results) {
  const rows = [['request', 'answers', 'request ms (median)', '/healthz median ms', '/healthz worst ms', 'polls']];
  for (const r of results) {
    const answers = r.statuses.length ? `${[...new Set(r.statuses)].join('/')} ${[...new Set(r.codes)].filter(Boolean).join('/')}` : '–';
    rows.push([r.kind, answers, r.requestMs ? String(r.requestMs.median) : '–', String(r.healthz.median), String(r.healthz.worst), String(r.healthz.n)]);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  return rows.map((row) => row.map((cell, i) => cell.padEnd(widths[i])).join('  ')).join('\n');
}

async function main() {
  const results = await runHostileBench({ repeat: opts.quick ? 1 : opts.repeat });
  if (opts.json) console.log(JSON.stringify(results, null, 2));
  else console.log(table(results));
  const worst = Math.max(...results.map((r) => r.healthz.worst));
  const wrong = results.filter((r) => r.expect !== undefined && r.statuses.some((s) => s !== r.expect));
  console.log(`\nworst /healthz latency: ${worst} ms (target < 100 ms)${wrong.length ? `; unexpected answers: ${wrong.map((r) => r.kind).join(', ')}` : ''}`);
  if (wrong.length) process.exitCode = 1;
}

module.exports = { runHostileBench };

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
