#!/usr/bin/env node
// Benchmark: telemetry ingest from HTTP request to committed rows, with 100 concurrent agents,
// and — in the same run, for comparison — a plain COPY of the same samples, one row per sample,
// into a plain table.
//
//   node bench/ingest.js --seconds 20        # --help: the options
//
// Needs the build (npx turbo run build), Postgres and Redis.
'use strict';
const { execFile } = require('node:child_process');
const { promisify } = require('node:util');
const path = require('node:path');
const { parseOptions } = require('./lib/options');

const { opts } = parseOptions({
  script: __filename,
  summary: 'telemetry ingest from HTTP request to committed rows, with 100 concurrent agents (a load generator in its own '
    + 'process posting columnar batches of 8 sensors), checking that every sample acknowledged is stored; and, in the same '
    + 'run, a plain COPY of the same samples, one row per sample, into a plain table. Needs the build (npx turbo run build), '
    + 'Postgres and Redis.',
  options: {
    agents: { type: 'integer', min: 1, default: 100, quick: 4, description: 'concurrent agents, one import run each' },
    seconds: { type: 'number', above: 0, default: 20, quick: 3, description: 'how long the agents post' },
    'per-sensor': { type: 'integer', min: 1, default: 1250, quick: 250, description: 'samples per sensor per batch (8 sensors a batch)' },
    'rate-limits': { type: 'boolean', description: 'count every batch against per-token and per-user rate limits set too high to refuse any: what the limits cost ingest (without it, none, as in the other benches)' },
    quick: { type: 'boolean', description: '4 agents for 3 s, batches of 8 × 250 samples (a test runs it)' },
    json: { type: 'boolean', description: 'one line of JSON at the end, with the samples sent, stored and copied (the text goes to stderr)' },
  },
  examples: ['node bench/ingest.js --seconds 20', 'node bench/ingest.js --seconds 10 --rate-limits'],
});
const { createCampaign, findProjectByName, telemetryChunkTotals, telemetryTotals, DEFAULT_PROJECT } = require('@erg/db');
const { copyPlainSamples, countPlainSamples, createPlainSamplesTable, relationBytes, testCampaignSpec } = require('@erg/db/testing');
const { startBenchApi } = require('./lib/bench-api');

const log = opts.json ? console.error : console.log;
const AGENTS = opts.agents;
const SENSORS = 8;
const execFileAsync = promisify(execFile);

async function main() {
  const counted = { ERG_RATE_LIMIT_TELEMETRY: '1000000000', ERG_RATE_LIMIT_USER_TELEMETRY: '1000000000' };
  const bench = await startBenchApi('ingest', { poolSize: 4, env: opts['rate-limits'] ? counted : {} });
  const { db, api, token } = bench;
  // One import run per agent: no cluster needed, any recent timestamp accepted.
  const project = await findProjectByName(db, DEFAULT_PROJECT);
  const campaign = await createCampaign(db, {
    name: 'ingest-bench', execution: 'import', clusterId: null, projectId: project.id, spec: testCampaignSpec({ name: 'ingest-bench', execution: 'import', cluster: undefined, run: undefined }), specText: null,
    repetitions: AGENTS, configurations: [{ key: 'default', parameters: {} }],
  });
  const runIds = campaign.runs.map((r) => r.id);

  // --- 1. HTTP → committed rows ---------------------------------------------------------------
  // Asynchronously: the API serving the load lives in this process's event loop.
  const { stdout: out } = await execFileAsync(
    process.execPath,
    [path.join(__dirname, 'ingest-client.js'), api, token, JSON.stringify(runIds), String(opts.seconds), String(SENSORS), String(opts['per-sensor'])],
    { encoding: 'utf8', maxBuffer: 1 << 20 },
  );
  const client = JSON.parse(out);
  const stored = await telemetryTotals(db);
  const storedSamples = stored.samples;
  if (storedSamples !== client.accepted) throw new Error(`stored ${storedSamples} samples but the API acknowledged ${client.accepted}`);
  const size = await relationBytes(db, 'telemetry_chunks');
  const httpRate = client.accepted / client.elapsedS;

  // --- 2. plain COPY of the same samples, one row per sample ----------------------------------
  const total = client.accepted;
  const names = ['gpu0.power', 'gpu1.power', 'gpu2.power', 'gpu3.power', 'module0.power', 'grace0.power', 'cpu0.power', 'sysio0.power'];
  const t0 = Date.now();
  /** The samples as COPY text, 20,000 lines a chunk. */
  function* plainLines() {
    for (let i = 0; i < total; ) {
      const lines = [];
      for (let k = 0; k < 20_000 && i < total; k++, i++) {
        lines.push(`${runIds[i % AGENTS]}\tnode${i % AGENTS}\t${names[i % SENSORS]}\t${t0 + i * 10}\t${100 + (i % 50)}\n`);
      }
      yield lines.join('');
    }
  }
  await createPlainSamplesTable(db);
  const copyStart = performance.now();
  await copyPlainSamples(db, plainLines());
  const copySeconds = (performance.now() - copyStart) / 1000;
  const plainSize = await relationBytes(db, 'plain_samples');
  const chunks = opts.json ? await telemetryChunkTotals(db) : null;
  const plainRows = opts.json ? await countPlainSamples(db) : null;

  const result = {
    agents: AGENTS,
    samplesPerBatch: SENSORS * opts['per-sensor'],
    seconds: client.elapsedS,
    requests: client.requests,
    samplesCommitted: client.accepted,
    httpSamplesPerS: Math.round(httpRate),
    httpMBPerS: Number((client.bytes / client.elapsedS / 1e6).toFixed(1)),
    storedBytesPerSample: Number((size / client.accepted).toFixed(1)),
    plainCopySamplesPerS: Math.round(total / copySeconds),
    plainCopyBytesPerSample: Number((plainSize / total).toFixed(1)),
  };
  log(JSON.stringify(result, null, 2));
  log(`\ningest over HTTP with ${AGENTS} agents: ${result.httpSamplesPerS.toLocaleString('en')} samples/s committed ` +
    `(${result.storedBytesPerSample} B/sample stored); plain COPY, one row per sample: ${result.plainCopySamplesPerS.toLocaleString('en')} samples/s ` +
    `(${result.plainCopyBytesPerSample} B/sample)`);
  if (opts.json) {
    console.log(JSON.stringify({
      ...result,
      // Every request was answered 200 (the client fails otherwise), each with a full batch.
      samplesSent: client.requests * result.samplesPerBatch,
      storedBatches: stored.batches, storedSamples, runsWithTelemetry: stored.runs,
      storedChunks: chunks.chunks, samplesInChunks: chunks.samples, plainCopyRows: plainRows,
    }));
  }

  await bench.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
