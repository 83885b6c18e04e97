#!/usr/bin/env node
// Benchmark: issue 27 §1's first two attacks, replayed — an imported run whose workload marked
// `--names` distinct phase names and `--marks` marks in all is finished, and its phases, energy and
// campaign results are read; then a late batch has its figures recomputed. The API and the
// scheduler run as processes of their own (apps/*/dist/main.js) on a fresh database; each one's
// /healthz is polled every ~10 ms from a worker thread of this process, and the scheduler's
// largest event-loop delay is read from its /metrics, during every step. Prints, per step: how
// long it took, what it answered, and /healthz median and worst of both. Then `--burst` batches of
// many small marks at once (a telemetry batch's decoding cost counts its marks, not only its bytes).
//
// What erg does with such a run (docs/security.md § Budgets): marks of names past the run's first
// ERG_MAX_PHASE_NAMES (256) are not stored, and the run warns once; POST /finish answers 202 at
// once and the scheduler computes the energy in its worker thread from the first 100,000 marks by
// time; per-phase figures are linear in the names. Target: /healthz under 100 ms meanwhile.
//
//   npx turbo run build && node bench/hostile-finish.js      # --help: the options
'use strict';
const { parseOptions } = require('./lib/options');

const { opts } = parseOptions({
  script: __filename,
  summary: 'issue 27 §1 replayed: an imported run whose workload marked --names distinct phase names and --marks marks is finished '
    + '(POST /finish), its energy computed by the scheduler, its phases, energy and campaign results read, and a late batch recomputed; '
    + 'the API and the scheduler run as processes of their own, and each one\'s /healthz (median, worst) and the scheduler\'s '
    + 'largest event-loop delay are reported per step. Needs the build (npx turbo run build), Postgres and Redis.',
  options: {
    names: { type: 'integer', min: 1, default: 25_000, quick: 2000, description: 'distinct phase names the workload marks (the first ERG_MAX_PHASE_NAMES are kept)' },
    marks: { type: 'integer', min: 2, default: 1_000_000, quick: 20_000, description: 'marks in all (begin/end pairs; after the --names first pairs they reuse 200 names)' },
    seconds: { type: 'integer', min: 10, default: 600, quick: 60, description: 'the run\'s window (s), sampled at 10 Hz' },
    burst: { type: 'integer', min: 0, default: 20, quick: 2, description: 'then batches of many small marks sent at once, to runs of their own: this many of 5,000 marks (about 430 kB each: decoded in a worker by their cost) and as many of 2,000 (about 170 kB: on the event loop); 0: none' },
    'decode-inline': { type: 'boolean', description: 'the API without its decoding workers (ERG_OFFLOAD_WORKERS=0): every batch decoded on its event loop, as batches under 1 MiB were before their marks counted' },
    quick: { type: 'boolean', description: '2,000 names, 20,000 marks, a 60 s window (a test runs it)' },
    json: { type: 'boolean', description: 'one line of JSON at the end (the text goes to stderr)' },
  },
  examples: ['node bench/hostile-finish.js', 'node bench/hostile-finish.js --names 10000 --marks 1000000', 'node bench/hostile-finish.js --quick --json'],
});

const net = require('node:net');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { createApiToken, createDatabase, dropDatabase, ensureDatabase, migrate } = require('@erg/db');
const { healthPoller } = require('./lib/healthz');

const log = opts.json ? console.error : console.log;
const root = path.resolve(__dirname, '..');
const MARKS_PER_BATCH = 10_000;
/** Names the marks after the first --names pairs cycle through: all of them within the cap. */
const REUSED_NAMES = 200;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const round = (x) => Math.round(x * 10) / 10;

function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Starts apps/<app>/dist/main.js with `env` and waits for its /healthz on `port`. */
async function startProcess(app, port, env) {
  const child = spawn(process.execPath, [path.join(root, 'apps', app, 'dist', 'main.js')], { env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'inherit', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if ((await fetch(`${url}/healthz`).catch(() => null))?.ok) break;
    if (i > 300 || child.exitCode !== null) throw new Error(`the ${app} did not start`);
    await sleep(100);
  }
  return {
    url,
    async stop() {
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(15_000)]);
    },
  };
}

/** The scheduler's largest event-loop delay (ms) since its metrics were last read (prom-client resets it on each read). */
async function schedulerLagMs(url) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = /^erg_scheduler_nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text);
  return m ? round(Number(m[1]) * 1000) : null;
}

async function main() {
  const stamp = `${Date.now().toString(36)}${process.pid}`;
  const url = `postgresql://postgres@127.0.0.1:5432/erg_bench_finish_${stamp}`;
  await ensureDatabase(url);
  await migrate(url);
  const db = createDatabase(url, { max: 4 });
  const prefix = `ergbench_finish_${stamp}`;
  const [apiPort, schedulerPort] = [await freePort(), await freePort()];
  const shared = { DATABASE_URL: url, ERG_QUEUE_PREFIX: prefix };
  const api = await startProcess('api', apiPort, {
    ...shared, ERG_API_PORT: String(apiPort),
    ERG_RATE_LIMIT_MUTATIONS: '0', ERG_RATE_LIMIT_TELEMETRY: '0', ERG_RATE_LIMIT_USER_MUTATIONS: '0', ERG_RATE_LIMIT_USER_TELEMETRY: '0',
    ...(opts['decode-inline'] ? { ERG_OFFLOAD_WORKERS: '0' } : {}),
  });
  const scheduler = await startProcess('scheduler', schedulerPort, { ...shared, ERG_METRICS_PORT: String(schedulerPort), ERG_TELEMETRY: 'off' });
  const { token } = await createApiToken(db, 'bench');
  const apiHealth = healthPoller(api.url);
  const schedulerHealth = healthPoller(scheduler.url);

  async function call(method, route, body) {
    const t0 = performance.now();
    const res = await fetch(api.url + route, {
      method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, ms: performance.now() - t0, bytes: Buffer.byteLength(text) };
  }
  async function ok(method, route, body) {
    const res = await call(method, route, body);
    if (res.status >= 300) throw new Error(`${method} ${route}: ${res.status} ${JSON.stringify(res.body).slice(0, 2000)}`);
    return res;
  }
  const steps = [];
  /** Runs `work()` with both /healthz watched and the scheduler's loop delay read around it; records the step. */
  async function step(name, work) {
    const windows = [apiHealth.window(), schedulerHealth.window()];
    await schedulerLagMs(scheduler.url);
    const t0 = performance.now();
    const detail = await work();
    const ms = round(performance.now() - t0);
    const [apiHz, schedulerHz] = await Promise.all(windows.map((w) => w.end()));
    const row = { step: name, ms, ...detail, apiHealthz: apiHz, schedulerHealthz: schedulerHz, schedulerLagMaxMs: await schedulerLagMs(scheduler.url) };
    steps.push(row);
    log(`${name.padEnd(34)} ${String(ms).padStart(9)} ms   API /healthz median ${apiHz?.medianMs} ms, worst ${apiHz?.worstMs} ms   `
      + `scheduler /healthz worst ${schedulerHz?.worstMs} ms, loop delay max ${row.schedulerLagMaxMs} ms`);
    return detail;
  }
  /** Polls `route` until `done(answer)`; returns the last answer. */
  async function until(route, done) {
    for (;;) {
      const res = await call('GET', route);
      if (done(res)) return res;
      await sleep(20);
    }
  }

  try {
    const campaign = (await ok('POST', '/v1/campaigns?project=default', { name: 'hostile-finish', execution: 'import', repetitions: 1, parameters: {}, metrics: [] })).body;
    const runId = campaign.runs[0].id;
    const start = Date.now() - 3_600_000 - opts.seconds * 1000;
    const windowMs = opts.seconds * 1000;
    // 300 W at 10 Hz over the window and a second either side, shared out over the marks' batches.
    const ts = Array.from({ length: opts.seconds * 10 + 21 }, (_, k) => start - 1000 + k * 100);
    const pairs = Math.floor(opts.marks / 2);
    const batches = Math.max(1, Math.ceil((pairs * 2) / MARKS_PER_BATCH));
    const spacing = windowMs / pairs;
    const markBatch = (b) => {
      const marks = [];
      for (let k = (b * MARKS_PER_BATCH) / 2; k < Math.min(pairs, ((b + 1) * MARKS_PER_BATCH) / 2); k++) {
        const name = `p${k < opts.names ? k : k % REUSED_NAMES}`;
        const at = start + k * spacing;
        marks.push({ offset: 2 * k * 48, kind: 'begin', name, t: at, clock: 'wall', writer: 'py' });
        marks.push({ offset: (2 * k + 1) * 48, kind: 'end', name, t: at + spacing * 0.8, clock: 'wall', writer: 'py' });
      }
      const per = Math.ceil(ts.length / batches);
      const t = ts.slice(b * per, (b + 1) * per);
      // A batch carries at least one sample: past the power samples, one of utilisation (not energy).
      const samples = t.length ? [{ sensor: 'cpu0.power', t, v: t.map(() => 300) }] : [{ sensor: 'cpu0.util', t: [start + b], v: [50] }];
      return { node: 'n1', seq: b, samples, marks };
    };
    log(`a run of ${opts.names.toLocaleString('en-US')} phase names and ${(pairs * 2).toLocaleString('en-US')} marks in ${batches} batches, a ${opts.seconds} s window\n`);
    await step('ingest (marks and samples)', async () => {
      for (let b = 0; b < batches; b++) await ok('POST', `/v1/runs/${runId}/telemetry`, markBatch(b));
      return { batches };
    });
    const finished = await step('POST /finish', async () => {
      const res = await ok('POST', `/v1/runs/${runId}/finish`, { startedAt: new Date(start).toISOString(), endedAt: new Date(start + windowMs).toISOString(), exitCode: 0 });
      return { status: res.status };
    });
    await step('finish → energy computed', async () => {
      const res = await until(`/v1/runs/${runId}/energy`, (r) => r.status === 200);
      return { energyJ: round(res.body.energyJ), phases: res.body.phases?.phases.length ?? 0 };
    });
    const reads = {};
    for (const [name, route] of [['GET /runs/{id}/phases', `/v1/runs/${runId}/phases`], ['GET /runs/{id}/energy', `/v1/runs/${runId}/energy`], ['GET /campaigns/{id}/results', `/v1/campaigns/${campaign.id}/results`]]) {
      reads[name] = await step(name, async () => {
        const res = await ok('GET', route);
        return { bytes: res.bytes, body: res.body };
      });
    }
    await step('late batch → energy recomputed', async () => {
      const t = [start + windowMs / 2 + 50];
      await ok('POST', `/v1/runs/${runId}/telemetry`, { node: 'n1', seq: batches, samples: [{ sensor: 'gpu0.power', t, v: [100] }] });
      const res = await until(`/v1/runs/${runId}/energy`, (r) => r.status === 200 && r.body.stale === false);
      return { energyJ: round(res.body.energyJ) };
    });

    for (const perBatch of opts.burst > 0 ? [5000, 2000] : []) {
      // Runs of their own, so that every mark is new; names within the cap.
      const burst = (await ok('POST', '/v1/campaigns?project=default', { name: `burst-${perBatch}`, execution: 'import', repetitions: opts.burst, parameters: {}, metrics: [] })).body;
      const at = start + 1000;
      const body = (seq) => ({
        node: 'n1', seq, samples: [{ sensor: 'cpu0.util', t: [at], v: [50] }],
        marks: Array.from({ length: perBatch }, (_, k) => ({ offset: k * 40, kind: k % 2 ? 'end' : 'begin', name: `p${(k >> 1) % REUSED_NAMES}`, t: at + k, clock: 'wall', writer: 'py' })),
      });
      const bytes = JSON.stringify(body(0)).length;
      await step(`burst: ${opts.burst} × ${perBatch} marks at once`, async () => {
        const answers = await Promise.all(burst.runs.map((r, i) => call('POST', `/v1/runs/${r.id}/telemetry`, body(i))));
        const refused = answers.filter((a) => a.status !== 200);
        if (refused.length > 0) throw new Error(`burst: ${refused.length} batches refused: ${JSON.stringify(refused[0].body).slice(0, 500)}`);
        return { batches: opts.burst, marksPerBatch: perBatch, batchBytes: bytes };
      });
    }

    const phasesView = reads['GET /runs/{id}/phases'].body;
    const run = (await ok('GET', `/v1/runs/${runId}`)).body;
    const out = {
      names: opts.names, marksSent: pairs * 2, batches,
      marksStored: phasesView.marks.count, phaseNames: phasesView.phases.phases.length,
      capWarning: run.warnings.find((w) => w.includes('ERG_MAX_PHASE_NAMES')) ?? null,
      finishStatus: finished.status,
      steps: steps.map(({ body: _, ...s }) => s),
    };
    const worst = Math.max(...out.steps.filter((s) => s.step !== 'ingest (marks and samples)' && !s.step.startsWith('burst')).map((s) => s.apiHealthz?.worstMs ?? 0));
    log(`\n${out.marksStored.toLocaleString('en-US')} marks stored of ${out.marksSent.toLocaleString('en-US')}, ${out.phaseNames} phase names (the run says: ${out.capWarning})`);
    log(`worst API /healthz after the ingest: ${worst} ms (target < 100 ms)`);
    if (opts.json) console.log(JSON.stringify(out));
  } finally {
    await Promise.all([apiHealth.stop(), schedulerHealth.stop()]);
    await Promise.all([api.stop(), scheduler.stop()]);
    await db.close();
    await dropDatabase(url);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
