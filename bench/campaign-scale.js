#!/usr/bin/env node
// Benchmark: a campaign of 100,000 runs through the API, beside a baseline of 10,000 runs measured
// in the same run, so that each figure can be read as a ratio (10× the runs: 10× the time is
// linear). Per size, a fresh database and a fresh API process (apps/api/dist/main.js, so that its
// peak resident memory, VmHWM, is its own; it is reset before each step):
//
// 1. POST /v1/campaigns of a slurm campaign of that many runs (`--posts` times): latency, answer
//    size, the API's peak RSS, and the worst /healthz latency meanwhile (a worker thread of this
//    process polls /healthz every 10 ms: how long the API's event loop was held).
// 2. The queue with the first campaign in it — a tenth of its runs claimed by "the scheduler", a
//    twentieth queued, a hundredth running with a minute of telemetry each (the scheduler's own
//    transitions): GET /v1/queue (the default page, the web app's limit=5000, one campaign's
//    pending runs), GET /v1/campaigns/{id}, and the first and last pages of
//    GET /v1/campaigns/{id}/runs, `--requests` times each (p50 / p95).
// 3. Results: an import campaign of that many runs (`--reps` repetitions per configuration), every
//    run but the last finished with energy figures (a few over HTTP — telemetry, then finish, then
//    their figures computed here as the scheduler would — and the rest stored with the same
//    figures, scaled, through @erg/db); then the last run's batch → finish → its figures →
//    GET /v1/campaigns/{id}/results, and GET results alone `--requests` times.
//
//   npx turbo run build && node bench/campaign-scale.js      # --help: the options
'use strict';
const { generateKeyPairSync } = require('node:crypto');
const { parseOptions } = require('./lib/options');

const { opts, fail } = parseOptions({
  script: __filename,
  summary: 'a campaign of 100,000 runs through the API beside a baseline of 10,000 measured in the same run (each figure '
    + 'also as a ratio), a fresh database and API process per size: POST /v1/campaigns (latency, answer size, peak RSS, '
    + 'worst /healthz meanwhile), the queue and campaign pages (p50 / p95), and the results of an import campaign of that '
    + 'many runs. Needs the build (npx turbo run build), Postgres and Redis.',
  options: {
    runs: { type: 'integer', min: 1, default: 100_000, quick: 3000, description: 'runs in the large campaign' },
    baseline: { type: 'integer', min: 1, default: 10_000, quick: 300, description: 'runs in the baseline campaign' },
    posts: { type: 'integer', min: 1, default: 3, quick: 2, description: 'POST /v1/campaigns per size' },
    requests: { type: 'integer', min: 1, default: 10, quick: 3, description: 'GETs of each queue, campaign and results route (after one warm-up)' },
    reps: { type: 'integer', min: 1, default: 10, description: 'repetitions per configuration of the results campaign (must divide both sizes)' },
    parts: { type: 'string', list: true, choices: ['post', 'queue', 'results'], default: ['post', 'queue', 'results'], description: 'the parts to measure (the POSTs run whatever it says: the other parts need their campaigns)' },
    quick: { type: 'boolean', description: '3,000 runs beside 300, 2 posts, 3 requests (a test runs it: big enough that the POST answer and the results are streamed)' },
    json: { type: 'boolean', description: 'one line of JSON at the end (the text goes to stderr)' },
  },
  examples: ['node bench/campaign-scale.js', 'node bench/campaign-scale.js --runs 20000 --baseline 2000 --parts post,queue'],
});
const PARTS = new Set(opts.parts);
const RUNS = opts.runs;
const BASELINE = opts.baseline;
const POSTS = opts.posts;
const REQUESTS = opts.requests;
const REPS = opts.reps;
if (PARTS.has('results')) for (const runs of [BASELINE, RUNS]) if (runs % REPS !== 0) fail(`--reps ${REPS} does not divide ${runs} runs`);
const {
  claimRunsForSubmission, findClusterByName, findRunEnergy, finishImportedRun, markRunsQueued, recordSlurmProgress, storeRunEnergy,
} = require('@erg/db');
const { analyzeTables } = require('@erg/db/testing');
const { refreshRunEnergy } = require('@erg/results');
const { median } = require('./lib/bench-api');
const { startApiProcess, watched } = require('./lib/api-process');
const { grid } = require('./lib/grid');

/** Runs finished over HTTP (telemetry, then finish) before the rest are stored through @erg/db. */
const FINISHED_OVER_HTTP = 20;
const log = opts.json ? console.error : console.log;
const PRIVATE_KEY = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

/** p-th percentile (nearest rank) of some numbers. */
function percentile(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}
const stats = (xs) => ({ n: xs.length, p50Ms: round(median(xs)), p95Ms: round(percentile(xs, 95)), maxMs: round(Math.max(...xs)) });
const round = (x) => Math.round(x * 10) / 10;
const size = (bytes) => (bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${(bytes / 1e3).toFixed(1)} kB`);

/** `--requests` GETs of `route` after one warm-up, with the API's peak RSS and /healthz meanwhile. */
async function timeGets(bench, route) {
  await bench.call('GET', route);
  const { value, ...around } = await watched(bench, async () => {
    const times = [];
    let last;
    for (let i = 0; i < REQUESTS; i++) {
      last = await bench.call('GET', route);
      times.push(last.ms);
    }
    return { times, last };
  });
  return { route, ...stats(value.times), bytes: value.last.bytes, body: value.last.data, ...around };
}

async function measureSize(runs) {
  const bench = await startApiProcess('scale', runs > 100_000 ? { ERG_MAX_RUNS: String(runs) } : {});
  const out = { runs };
  try {
    await bench.call('POST', '/v1/clusters', {
      name: 'alpha', host: '127.0.0.1', port: 2222, user: 'root', privateKey: PRIVATE_KEY, hostKeySha256: 'SHA256:' + 'A'.repeat(43),
      workDir: '/var/lib/erg-bench', defaultPartition: 'gpu',
    });

    // 1. POST: repetitions 2, runs/2 configurations.
    const spec = (i) => ({
      name: `scale-${runs}-${i}`, cluster: 'alpha', repetitions: 2, parameters: grid(runs / 2),
      resources: { nodes: 1, time: '00:10:00' }, run: 'echo {{a}} {{b}}',
    });
    const posts = [];
    let first;
    for (let i = 0; i < POSTS; i++) {
      const { value, ...around } = await watched(bench, () => bench.call('POST', '/v1/campaigns', spec(i)));
      if (value.data.totalRuns !== runs) throw new Error(`POST created ${value.data.totalRuns} runs, not ${runs}`);
      first ??= value.data;
      posts.push({ ms: round(value.ms), bytes: value.bytes, ...around });
      log(`${runs} runs: POST /v1/campaigns ${value.ms.toFixed(0)} ms, ${size(value.bytes)} answer, API peak RSS ${around.peakRssMb} MB (from ${around.rssBeforeMb}), /healthz worst ${around.healthz?.worstMs} ms`);
      if (i === 0 && PARTS.has('queue')) out.queue = await measureQueue(bench, first, runs);
    }
    out.post = { ...stats(posts.map((p) => p.ms)), runsPerS: Math.round(runs / (median(posts.map((p) => p.ms)) / 1000)), each: posts };

    // 3. Results of an import campaign of the same size.
    if (PARTS.has('results')) out.results = await measureResults(bench, runs);
  } finally {
    await bench.close();
  }
  return out;
}

/** The scheduler's transitions over the first campaign; then the queue's and the campaign's reads. */
async function measureQueue(bench, campaign, runs) {
  const cluster = await findClusterByName(bench.db, 'alpha');
  const claimed = await claimRunsForSubmission(bench.db, cluster.id, runs / 10);
  const queued = claimed.slice(0, runs / 20);
  await markRunsQueued(bench.db, queued.map((r, k) => ({ runId: r.id, slurmJobId: String(100000 + k) })));
  const running = queued.slice(0, runs / 100);
  await recordSlurmProgress(bench.db, running.map((r) => ({ runId: r.id, state: 'running', slurmState: 'RUNNING', reason: null, startedAt: new Date(), nodeList: 'node01' })));
  const now = Date.now();
  const t = Array.from({ length: 60 }, (_, k) => now - 60_000 + k * 1000);
  let next = 0;
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (next < running.length) {
      const r = running[next++];
      await bench.call('POST', `/v1/runs/${r.id}/telemetry`, {
        node: 'node01', seq: 0, samples: [{ sensor: 'gpu0.power', t, v: t.map(() => 300) }, { sensor: 'cpu0.power', t, v: t.map(() => 90) }],
      });
    }
  }));
  await analyzeTables(bench.db);
  const queries = [];
  const page = Math.min(1000, runs / 2);
  for (const route of [
    '/v1/queue', '/v1/queue?limit=5000', `/v1/queue?campaign=${campaign.id}&state=pending`,
    `/v1/campaigns/${campaign.id}`, `/v1/campaigns/${campaign.id}/runs?limit=${page}`, `/v1/campaigns/${campaign.id}/runs?limit=${page}&offset=${runs - page}`,
  ]) {
    const { body, ...q } = await timeGets(bench, route);
    const items = body.runs ?? body.items;
    const withPower = body.runs ? { withPower: body.runs.filter((r) => r.powerW !== null).length } : {};
    const shape = items ? { returned: items.length, total: body.total, ...withPower } : { totalRuns: body.totalRuns, runCounts: body.runCounts };
    queries.push({ ...q, ...shape });
    log(`${runs} runs: GET ${route.replace(campaign.id, '{id}').padEnd(48)} p50 ${q.p50Ms} ms, p95 ${q.p95Ms} ms, ${size(q.bytes)}, API peak RSS ${q.peakRssMb} MB, /healthz worst ${q.healthz?.worstMs} ms`);
  }
  return { claimed: claimed.length, queued: queued.length, running: running.length, queries };
}

/** The i-th run's figures: its start, duration and constant power; the larger a and b, the slower and the more frugal. */
function plan(run, i, base) {
  const [, a, b] = /a=(\d+);b=(\d+)/.exec(run.configurationKey).map(Number);
  return { powerW: 300 - a * 0.2 - b * 0.01, start: base + i * 20, seconds: 5 + a * 0.01 + b * 0.001 + (run.repetition % 7) * 0.0001 };
}

async function finishOverHttp(bench, run, i, base) {
  const { powerW, start, seconds } = plan(run, i, base);
  const t = Array.from({ length: Math.ceil(seconds * 10) + 21 }, (_, k) => start - 1000 + k * 100);
  await bench.call('POST', `/v1/runs/${run.id}/telemetry`, { node: 'n1', seq: 0, samples: [{ sensor: 'cpu0.power', t, v: t.map(() => powerW) }] });
  await bench.call('POST', `/v1/runs/${run.id}/finish`, { startedAt: new Date(start).toISOString(), endedAt: new Date(start + seconds * 1000).toISOString(), metrics: { steps: 100 } });
  // The finish answers at once and leaves the energy to the scheduler; this bench runs none, so it
  // computes it here as the scheduler's energy worker would (as it plays the scheduler's transitions).
  await refreshRunEnergy(bench.db, run.id);
}

async function measureResults(bench, runs) {
  if (runs % REPS !== 0) throw new Error(`--reps ${REPS} does not divide ${runs} runs`);
  const created = await bench.call('POST', '/v1/campaigns?project=default', {
    name: `results-${runs}`, execution: 'import', repetitions: REPS, parameters: grid(runs / REPS),
    metrics: [{ name: 'steps', regex: 'steps=([0-9]+)', work: true }],
  });
  const campaign = created.data;
  const all = campaign.runs;
  // Runs start 20 ms apart, all of them in the past.
  const base = Date.now() - 3_600_000 - runs * 20;
  const fillStart = performance.now();
  const http = all.slice(0, FINISHED_OVER_HTTP);
  for (const [i, run] of http.entries()) await finishOverHttp(bench, run, i, base);
  // The rest: the same figures as the first run's, scaled to their own time and power.
  const template = (await findRunEnergy(bench.db, all[0].id)).result;
  let next = FINISHED_OVER_HTTP;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < all.length - 1) {
      const i = next++;
      const run = all[i];
      const { powerW, start, seconds } = plan(run, i, base);
      const energyJ = powerW * seconds;
      await finishImportedRun(bench.db, { runId: run.id, startedAt: new Date(start), endedAt: new Date(start + seconds * 1000), exitCode: null, metrics: { steps: 100 } });
      const result = {
        ...template, timeS: seconds, energyJ, avgPowerW: powerW, edpJs: energyJ * seconds, ed2pJs2: energyJ * seconds * seconds,
        energyPerUnit: { steps: energyJ / 100 }, window: { startMs: start, endMs: start + seconds * 1000 },
      };
      await storeRunEnergy(bench.db, run.id, { timeS: seconds, energyJ, method: template.method, coverage: template.coverage, result }, 0);
    }
  }));
  const fillSeconds = round((performance.now() - fillStart) / 1000);
  await analyzeTables(bench.db);

  const last = all.length - 1;
  const fresh = await watched(bench, async () => {
    const t0 = performance.now();
    await finishOverHttp(bench, all[last], last, base);
    const finished = performance.now();
    const results = await bench.call('GET', `/v1/campaigns/${campaign.id}/results`);
    return { lastBatchToResultsMs: round(performance.now() - t0), finishMs: round(finished - t0), results: results.data };
  });
  const lastConfig = fresh.value.results.configurations.find((c) => c.key === all[last].configurationKey);
  if (lastConfig?.n !== REPS) throw new Error(`the last run is missing from the results (n = ${lastConfig?.n})`);
  const counted = fresh.value.results.configurations.reduce((n, c) => n + c.n, 0);
  if (counted !== runs) throw new Error(`the results count ${counted} runs, not ${runs}`);
  const { body, ...gets } = await timeGets(bench, `/v1/campaigns/${campaign.id}/results`);
  const out = {
    configurations: runs / REPS, repetitions: REPS, fillSeconds,
    lastBatchToResultsMs: fresh.value.lastBatchToResultsMs, finishMs: fresh.value.finishMs,
    resultsConfigurations: body.configurations.length, resultsRuns: counted, paretoFront: body.paretoFront.length,
    get: gets,
  };
  log(`${runs} runs (${out.configurations} configurations × ${REPS}): last batch → finish → results ${out.lastBatchToResultsMs} ms; ` +
    `GET results p50 ${gets.p50Ms} ms, p95 ${gets.p95Ms} ms, ${size(gets.bytes)}, API peak RSS ${gets.peakRssMb} MB, /healthz worst ${gets.healthz?.worstMs} ms (filled in ${fillSeconds} s)`);
  return out;
}

async function main() {
  const sizes = [];
  for (const runs of [BASELINE, RUNS]) sizes.push(await measureSize(runs));
  const [b, n] = sizes;
  if (!PARTS.has('queue') || !PARTS.has('results')) {
    if (opts.json) console.log(JSON.stringify({ sizes }));
    return;
  }
  const ratio = (x, y) => Math.round((x / y) * 100) / 100;
  const ratios = {
    runs: ratio(n.runs, b.runs),
    post: ratio(n.post.p50Ms, b.post.p50Ms),
    postPeakRss: ratio(Math.max(...n.post.each.map((p) => p.peakRssMb - p.rssBeforeMb)), Math.max(...b.post.each.map((p) => p.peakRssMb - p.rssBeforeMb))),
    queue: Object.fromEntries(n.queue.queries.map((q, i) => [q.route.replace(/[0-9a-f-]{36}/, '{id}').replace(/limit=\d+/, 'limit=page').replace(/offset=\d+/, 'offset=last'), ratio(q.p50Ms, b.queue.queries[i].p50Ms)])),
    results: ratio(n.results.get.p50Ms, b.results.get.p50Ms),
  };
  log(`\nratios at ${ratios.runs}× the runs (p50 over p50): POST ${ratios.post}×, results ${ratios.results}×, queue ${JSON.stringify(ratios.queue)}`);
  if (opts.json) console.log(JSON.stringify({ sizes, ratios }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
