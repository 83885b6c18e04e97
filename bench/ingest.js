#!/usr/bin/env node
// Benchmark: telemetry ingest from HTTP request to committed rows, with 100 concurrent agents,
// and — in the same run, for comparison — a plain COPY of the same samples, one row per sample,
// into a plain table.
//
//   node bench/ingest.js [--agents 100] [--seconds 20] [--per-sensor 1250] [--quick] [--json]
// --quick: 4 agents for 3 s, batches of 8 × 250 samples (a test runs it); --json: one line of JSON
// at the end, with the samples sent, stored and copied (the text goes to stderr).
//
// Needs the build (npx turbo run build), Postgres and Redis.
'use strict';
const { execFile } = require('node:child_process');
const { promisify } = require('node:util');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { from: copyFrom } = require('pg-copy-streams');
const { createCampaign, findProjectByName, DEFAULT_PROJECT } = require('@erg/db');
const { startBenchApi } = require('./lib/bench-api');

const { values: opts } = parseArgs({
  options: {
    agents: { type: 'string' }, seconds: { type: 'string' }, 'per-sensor': { type: 'string' },
    quick: { type: 'boolean', default: false }, json: { type: 'boolean', default: false },
  },
});
opts.agents ??= opts.quick ? '4' : '100';
opts.seconds ??= opts.quick ? '3' : '20';
opts['per-sensor'] ??= opts.quick ? '250' : '1250';
const log = opts.json ? console.error : console.log;
const AGENTS = Number(opts.agents);
const SENSORS = 8;
const execFileAsync = promisify(execFile);

async function main() {
  const bench = await startBenchApi('ingest', { poolSize: 4 });
  const { db, api, token } = bench;
  // One import run per agent: no cluster needed, any recent timestamp accepted.
  const project = await findProjectByName(db, DEFAULT_PROJECT);
  const campaign = await createCampaign(db, {
    name: 'ingest-bench', execution: 'import', clusterId: null, projectId: project.id, spec: { name: 'ingest-bench', execution: 'import' }, specText: null,
    repetitions: AGENTS, configurations: [{ key: 'default', parameters: {} }],
  });
  const runIds = campaign.runs.map((r) => r.id);

  // --- 1. HTTP → committed rows ---------------------------------------------------------------
  // Asynchronously: the API serving the load lives in this process's event loop.
  const { stdout: out } = await execFileAsync(
    process.execPath,
    [path.join(__dirname, 'ingest-client.js'), api, token, JSON.stringify(runIds), opts.seconds, String(SENSORS), opts['per-sensor']],
    { encoding: 'utf8', maxBuffer: 1 << 20 },
  );
  const client = JSON.parse(out);
  const stored = await db.pool.query('SELECT coalesce(sum(samples), 0)::bigint AS n, count(*)::int AS batches, count(DISTINCT run_id)::int AS runs FROM telemetry_batches');
  const storedSamples = Number(stored.rows[0].n);
  if (storedSamples !== client.accepted) throw new Error(`stored ${storedSamples} samples but the API acknowledged ${client.accepted}`);
  const size = await db.pool.query(`SELECT pg_total_relation_size('telemetry_chunks')::bigint AS b`);
  const httpRate = client.accepted / client.elapsedS;

  // --- 2. plain COPY of the same samples, one row per sample ----------------------------------
  await db.pool.query('CREATE TABLE plain_samples (run_id uuid, node text, sensor text, t double precision, v double precision)');
  const total = client.accepted;
  const names = ['gpu0.power', 'gpu1.power', 'gpu2.power', 'gpu3.power', 'module0.power', 'grace0.power', 'cpu0.power', 'sysio0.power'];
  const pgClient = await db.pool.connect();
  const copyStart = performance.now();
  await new Promise((resolve, reject) => {
    const stream = pgClient.query(copyFrom('COPY plain_samples FROM STDIN'));
    stream.on('finish', resolve);
    stream.on('error', reject);
    let i = 0;
    const t0 = Date.now();
    const chunk = 20_000;
    const write = () => {
      while (i < total) {
        const lines = [];
        for (let k = 0; k < chunk && i < total; k++, i++) {
          lines.push(`${runIds[i % AGENTS]}\tnode${i % AGENTS}\t${names[i % SENSORS]}\t${t0 + i * 10}\t${100 + (i % 50)}\n`);
        }
        if (!stream.write(lines.join(''))) return stream.once('drain', write);
      }
      stream.end();
    };
    write();
  });
  const copySeconds = (performance.now() - copyStart) / 1000;
  pgClient.release();
  const plainSize = await db.pool.query(`SELECT pg_total_relation_size('plain_samples')::bigint AS b`);
  const chunks = opts.json
    ? (await db.pool.query('SELECT count(*)::int AS rows, coalesce(sum(n), 0)::bigint AS n FROM telemetry_chunks')).rows[0]
    : null;
  const plainRows = opts.json ? (await db.pool.query('SELECT count(*)::bigint AS n FROM plain_samples')).rows[0].n : null;

  const result = {
    agents: AGENTS,
    samplesPerBatch: SENSORS * Number(opts['per-sensor']),
    seconds: client.elapsedS,
    requests: client.requests,
    samplesCommitted: client.accepted,
    httpSamplesPerS: Math.round(httpRate),
    httpMBPerS: Number((client.bytes / client.elapsedS / 1e6).toFixed(1)),
    storedBytesPerSample: Number((Number(size.rows[0].b) / client.accepted).toFixed(1)),
    plainCopySamplesPerS: Math.round(total / copySeconds),
    plainCopyBytesPerSample: Number((Number(plainSize.rows[0].b) / total).toFixed(1)),
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
      storedBatches: stored.rows[0].batches, storedSamples, runsWithTelemetry: stored.rows[0].runs,
      storedChunks: chunks.rows, samplesInChunks: Number(chunks.n), plainCopyRows: Number(plainRows),
    }));
  }

  await bench.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
