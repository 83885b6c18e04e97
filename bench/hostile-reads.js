#!/usr/bin/env node
// Benchmark: the expensive reads of issue 27 §1, against the API as a process of its own while a
// worker thread polls its /healthz every 10 ms. Three campaigns, filled in bulk (their runs'
// figures stored many to a statement, @erg/db/testing completeRunsInBulk, from one run's figures
// computed from telemetry): an import campaign of 20,000 configurations of one run each, one of
// 100,000 runs (10,000 configurations × 10), and a search over 50,000 configurations with 6 runs
// measured. For each, GET /v1/campaigns/{id}/results: the first read after a change (computed),
// then `--repeat` reads of the kept answer, then three at once after another change and three at
// once again. Printed per step: each request's time and size, /healthz median and worst
// meanwhile, the API's peak resident memory. Targets: results of 100,000 runs in ≤ 200 ms, no
// /healthz sample over 100 ms. `--inline` measures the same reads again from a second API process
// on the same database with ERG_RESULTS_WORKERS=0 and no cache: the results computed on the event
// loop, every time, as they were before. `--export` then writes the large campaign's evidence bundle
// after a change, /healthz watched while its results.json is made and while its runs are written.
//
//   npx turbo run build && node bench/hostile-reads.js      # --help: the options
'use strict';
const { parseOptions } = require('./lib/options');

const { opts } = parseOptions({
  script: __filename,
  summary: 'the expensive reads of issue 27 §1 against the API as its own process, /healthz polled every 10 ms: the results of an '
    + 'import campaign of 20,000 configurations × 1 run, of 100,000 runs (10,000 × 10) and of a search over 50,000 configurations '
    + 'with 6 runs measured; per campaign the first read after a change, reads of the kept answer, three at once after a change and '
    + 'three at once again, each with its time, size, /healthz median and worst, and the API\'s peak memory. Targets: 100,000 runs '
    + 'in ≤ 200 ms, no /healthz sample over 100 ms. Needs the build (npx turbo run build), Postgres and Redis.',
  options: {
    import: { type: 'integer', min: 1, default: 20_000, quick: 200, description: 'configurations of the import campaign (one run each)' },
    runs: { type: 'integer', min: 10, default: 100_000, quick: 1000, check: (v) => (v % 10 === 0 ? undefined : 'a multiple of 10'), description: 'runs of the large campaign (a tenth as many configurations × 10 repetitions)' },
    search: { type: 'integer', min: 2, default: 50_000, quick: 2000, description: 'configurations of the search campaign' },
    measured: { type: 'integer', min: 1, default: 6, description: "the search's measured runs" },
    repeat: { type: 'integer', min: 1, default: 5, quick: 2, description: 'reads of each kept answer' },
    parts: { type: 'string', list: true, choices: ['import', 'runs', 'search'], default: ['import', 'runs', 'search'], description: 'the campaigns to measure' },
    export: { type: 'boolean', description: "then the large campaign's evidence bundle (GET /v1/campaigns/{id}/export) after a change: /healthz while its results.json is made (its inputs read, its results computed), then while its runs are written, for at most --export-seconds" },
    'export-seconds': { type: 'integer', min: 1, default: 60, quick: 5, description: 'how long the bundle is read before the bench stops it (a bundle of 100,000 runs takes far longer to write in full)' },
    inline: { type: 'boolean', description: 'measure the same reads again with the results computed on the event loop, uncached (ERG_RESULTS_WORKERS=0, ERG_RESULTS_CACHE_MB=0)' },
    quick: { type: 'boolean', description: '200, 1,000 and 2,000 configurations, 2 reads of each kept answer (a test runs it)' },
    json: { type: 'boolean', description: 'one line of JSON at the end (the text goes to stderr)' },
  },
  examples: ['node bench/hostile-reads.js', 'node bench/hostile-reads.js --parts runs --inline', 'node bench/hostile-reads.js --parts runs --export --inline', 'node bench/hostile-reads.js --quick --json'],
});
const { generateKeyPairSync } = require('node:crypto');
const { findRunEnergy } = require('@erg/db');
const { analyzeTables, completeRunsInBulk } = require('@erg/db/testing');
const { refreshRunEnergy } = require('@erg/results');
const { adaptCampaign } = require('@erg/strategy');
const { startApiProcess, watched, memoryOf, resetPeak, round } = require('./lib/api-process');
const { grid } = require('./lib/grid');
const { median } = require('./lib/bench-api');

const log = opts.json ? console.error : console.log;
const size = (bytes) => (bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${(bytes / 1e3).toFixed(1)} kB`);
const PRIVATE_KEY = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
/** Every run's metrics (the answer summarises each, as it would a workload's). */
const METRICS = { steps: 100 };

/** The i-th run's figures: the larger a and b, the slower and the more frugal; a little noise per repetition. */
function figuresOf(run, i, base) {
  const [, a, b] = /a=(\d+);b=(\d+)/.exec(run.configurationKey).map(Number);
  return { runId: run.id, startMs: base + i * 20, timeS: 5 + a * 0.01 + b * 0.001 + (run.repetition % 7) * 0.01, powerW: 300 - a * 0.2 - b * 0.01 + (run.repetition % 5) };
}

/** One run's whole stored result, computed from telemetry as erg computes any run's: what the bulk-stored runs copy. */
async function templateFigures(bench) {
  const created = await bench.call('POST', '/v1/campaigns?project=default', { name: 'template', execution: 'import', metrics: [{ name: 'steps', regex: 'steps=([0-9]+)', work: true }] });
  const run = created.data.runs[0];
  const start = Date.now() - 3_600_000;
  const t = Array.from({ length: 71 }, (_, k) => start - 1000 + k * 100);
  await bench.call('POST', `/v1/runs/${run.id}/telemetry`, { node: 'n1', seq: 0, samples: [{ sensor: 'cpu0.power', t, v: t.map(() => 250) }, { sensor: 'gpu0.power', t, v: t.map(() => 300) }] });
  await bench.call('POST', `/v1/runs/${run.id}/finish`, { startedAt: new Date(start).toISOString(), endedAt: new Date(start + 5000).toISOString(), metrics: METRICS });
  // Wherever finish leaves the recompute (the API or the scheduler), the figures are computed here.
  await refreshRunEnergy(bench.db, run.id);
  const stored = await findRunEnergy(bench.db, run.id);
  if (!stored) throw new Error('the template run has no figures');
  return stored.result;
}

/** Completes `runs` with figures in bulk; returns the bulk rows (to store one again: a change). */
async function fill(bench, runs, template) {
  const base = Date.now() - 7_200_000 - runs.length * 20;
  const rows = runs.map((r, i) => figuresOf(r, i, base));
  await completeRunsInBulk(bench.db, rows, METRICS, template);
  return rows;
}

/** The campaigns to read, created and filled; each with its results path and a change to make before a "first read". */
async function seed(bench, template) {
  const campaigns = [];
  const timed = async (what, make) => {
    const t0 = performance.now();
    const c = await make();
    log(`seeded ${what} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    campaigns.push(c);
  };
  if (opts.parts.includes('import')) {
    await timed(`import campaign: ${opts.import} configurations × 1 run`, async () => {
      const created = (await bench.call('POST', '/v1/campaigns?project=default', { name: 'import', execution: 'import', parameters: grid(opts.import), metrics: [{ name: 'steps', regex: 'steps=([0-9]+)', work: true }] })).data;
      const rows = await fill(bench, created.runs, template);
      return { part: 'import', label: `import campaign, ${opts.import} configurations × 1 run`, id: created.id, runs: created.runs.length, configurations: opts.import, rows };
    });
  }
  if (opts.parts.includes('runs')) {
    await timed(`campaign of ${opts.runs} runs`, async () => {
      const created = (await bench.call('POST', '/v1/campaigns?project=default', { name: 'runs', execution: 'import', repetitions: 10, parameters: grid(opts.runs / 10), metrics: [{ name: 'steps', regex: 'steps=([0-9]+)', work: true }] })).data;
      const rows = await fill(bench, created.runs, template);
      return { part: 'runs', label: `import campaign, ${opts.runs / 10} configurations × 10 runs`, id: created.id, runs: created.runs.length, configurations: opts.runs / 10, rows };
    });
  }
  if (opts.parts.includes('search')) {
    await timed(`search over ${opts.search} configurations`, async () => {
      await bench.call('POST', '/v1/clusters', {
        name: 'alpha', host: '127.0.0.1', port: 2222, user: 'root', privateKey: PRIVATE_KEY, hostKeySha256: 'SHA256:' + 'A'.repeat(43), workDir: '/var/lib/erg-bench',
      });
      const created = (await bench.call('POST', '/v1/campaigns', {
        name: 'search', cluster: 'alpha', run: 'echo {{a}} {{b}}', parameters: grid(opts.search),
        strategy: { kind: 'search', initialConfigurations: opts.measured, parallel: opts.measured, budget: { maxRuns: opts.measured * 2 } },
      })).data;
      // The search's first step proposes its first design (the scheduler's, when a cluster is reachable); those runs complete.
      await adaptCampaign(bench.db, created.id);
      const runs = (await bench.call('GET', `/v1/campaigns/${created.id}/runs?limit=1000`)).data.items;
      if (runs.length !== opts.measured) throw new Error(`the search proposed ${runs.length} runs, not ${opts.measured}`);
      const rows = await fill(bench, runs, template);
      return { part: 'search', label: `search over ${opts.search} configurations, ${opts.measured} measured`, id: created.id, runs: opts.measured, configurations: opts.search, rows };
    });
  }
  await analyzeTables(bench.db);
  return campaigns;
}

/** One step: `requests` GETs of the campaign's results at once, watched; each request's status, time and size. */
async function step(bench, campaign, name, requests) {
  const url = `/v1/campaigns/${campaign.id}/results`;
  const { value, ...around } = await watched(bench, () => Promise.all(Array.from({ length: requests }, () => bench.get(url))));
  const answers = value.map((r) => ({ status: r.status, ms: round(r.ms), bytes: r.bytes }));
  const body = value.find((r) => r.status === 200)?.json() ?? null;
  const shape = body && {
    configurations: body.configurations.length, runs: body.configurations.reduce((n, c) => n + c.n, 0), excluded: body.excluded.length,
    unmeasured: body.unmeasured?.configurations ?? null, paretoFront: body.paretoFront.length,
  };
  return { name, answers, shape, healthz: around.healthz, peakRssMb: around.peakRssMb };
}

/** A change to what the campaign's results read: one run's figures stored again (the scheduler's recompute after late telemetry). */
async function change(bench, campaign, template, k) {
  const row = campaign.rows[k % campaign.rows.length];
  await completeRunsInBulk(bench.db, [{ ...row, powerW: row.powerW + 0.001 * (k + 1) }], METRICS, template);
}

async function measure(bench, campaigns, template, mode) {
  const out = [];
  let k = 0;
  for (const c of campaigns) {
    const steps = [];
    await change(bench, c, template, k++);
    // No API process has read it yet: its results worker reads the campaign whole.
    steps.push(await step(bench, c, 'first read (read whole)', 1));
    const kept = [];
    for (let i = 0; i < opts.repeat; i++) kept.push(await step(bench, c, 'read again', 1));
    steps.push(repeated(`read again (${opts.repeat}×)`, kept));
    // The worker kept the campaign's inputs: a read after a change reads the run that changed. The
    // first such read in this API process runs code the worker has not yet run hot (it computed
    // the campaign whole once); the next ones, each after a change of its own, are a process's
    // steady state.
    await change(bench, c, template, k++);
    steps.push(await step(bench, c, 'first read after a change', 1));
    const afterChanges = [];
    for (let i = 0; i < opts.repeat; i++) {
      await change(bench, c, template, k++);
      afterChanges.push(await step(bench, c, 'read after a change', 1));
    }
    steps.push(repeated(`read after a change (${opts.repeat}×, each after its own)`, afterChanges));
    await change(bench, c, template, k++);
    steps.push(await step(bench, c, 'three at once after a change', 3));
    steps.push(await step(bench, c, 'three at once again', 3));
    for (const s of steps) {
      const times = s.answers.map((a) => `${a.status} ${a.ms} ms`).join(', ');
      log(`${mode} | ${c.label} | ${s.name}: ${times}; ${size(s.answers[0].bytes)}; /healthz median ${s.healthz?.medianMs} ms, worst ${s.healthz?.worstMs} ms (${s.healthz?.samples} polls); API peak RSS ${s.peakRssMb} MB`);
    }
    const bundle = opts.export && c.part === 'runs' ? await exportStep(bench, c, template, k++, mode) : undefined;
    out.push({ part: c.part, label: c.label, runs: c.runs, configurations: c.configurations, steps, ...(bundle ? { export: bundle } : {}) });
  }
  return out;
}

/** Single-request steps of one kind as one: every answer, the median time, the /healthz median of medians and the worst. */
function repeated(name, steps) {
  return {
    name, answers: steps.flatMap((s) => s.answers), medianMs: round(median(steps.map((s) => s.answers[0].ms))), shape: steps[0].shape,
    healthz: { medianMs: round(median(steps.map((s) => s.healthz?.medianMs ?? 0))), worstMs: Math.max(...steps.map((s) => s.healthz?.worstMs ?? 0)), samples: steps.reduce((n, s) => n + (s.healthz?.samples ?? 0), 0) },
    peakRssMb: Math.max(...steps.map((s) => s.peakRssMb)),
  };
}

/** A run's first member in a bundle (runs/<id>/run.json): the campaign's files, results.json last, are written before it. */
const FIRST_RUN_MEMBER = /runs\/[0-9a-f-]{36}\/run\.json/;

/**
 * The campaign's evidence bundle after a change (its results computed, not kept): read as it
 * streams, /healthz watched in two windows — until the first run's member arrives (campaign.json,
 * campaign-inputs.json and results.json written: the figures' inputs read, the results computed)
 * and from then on while runs are written, until the bundle ends or `export-seconds` have passed.
 */
async function exportStep(bench, campaign, template, k, mode) {
  await change(bench, campaign, template, k);
  resetPeak(bench.pid);
  const t0 = performance.now();
  let w = bench.health.window();
  const abort = new AbortController();
  const res = await fetch(`${bench.api}/v1/campaigns/${campaign.id}/export`, { headers: { authorization: `Bearer ${bench.token}` }, signal: abort.signal });
  const out = { name: 'evidence bundle', status: res.status, results: null, runs: null, peakRssMb: 0 };
  let bytes = 0;
  let runs = 0;
  let seen = '';
  let runsFrom = 0;
  try {
    for await (const chunk of res.body) {
      bytes += chunk.length;
      // Member names are in the tar headers, in the clear; the tail of the previous chunk catches one cut in two.
      const text = seen.slice(-64) + Buffer.from(chunk).toString('latin1');
      runs += (text.match(new RegExp(FIRST_RUN_MEMBER.source, 'g')) ?? []).length;
      seen = text;
      if (out.results === null && runs > 0) {
        out.results = { ms: round(performance.now() - t0), bytes, healthz: await w.end() };
        runsFrom = performance.now();
        w = bench.health.window();
      }
      if (performance.now() - t0 > opts['export-seconds'] * 1000) {
        abort.abort();
        break;
      }
    }
  } catch (err) {
    if (err.name !== 'AbortError') throw err;
  }
  const healthz = await w.end();
  const ms = round(performance.now() - (runsFrom || t0));
  if (out.results === null) out.results = { ms, bytes, healthz };
  else out.runs = { ms, runs, complete: !abort.signal.aborted, healthz };
  out.peakRssMb = memoryOf(bench.pid).peakMb;
  const r = out.results;
  log(`${mode} | ${campaign.label} | evidence bundle: ${res.status}; campaign files and results.json in ${r.ms} ms (${size(r.bytes)}), /healthz median ${r.healthz.medianMs} ms, worst ${r.healthz.worstMs} ms (${r.healthz.samples} polls)` +
    (out.runs ? `; then ${out.runs.runs} runs in ${out.runs.ms} ms${out.runs.complete ? '' : ' (stopped there)'}, /healthz median ${out.runs.healthz.medianMs} ms, worst ${out.runs.healthz.worstMs} ms` : '') +
    `; API peak RSS ${out.peakRssMb} MB`);
  return out;
}

/** erg_campaign_results_total by source, from the API's /metrics. */
async function answeredBySource(bench) {
  const text = await (await fetch(`${bench.api}/metrics`)).text();
  const out = {};
  for (const m of text.matchAll(/^erg_campaign_results_total\{source="(\w+)"\} (\d+)/gm)) out[m[1]] = Number(m[2]);
  return out;
}

/** erg_results_inputs_read_total by how the worker read the inputs (whole, changes), from the API's /metrics. */
async function inputsRead(bench) {
  const text = await (await fetch(`${bench.api}/metrics`)).text();
  const out = {};
  for (const m of text.matchAll(/^erg_results_inputs_read_total\{read="(\w+)"\} (\d+)/gm)) out[m[1]] = Number(m[2]);
  return out;
}

async function main() {
  const bench = await startApiProcess('reads');
  const result = { options: { import: opts.import, runs: opts.runs, search: opts.search, measured: opts.measured, repeat: opts.repeat } };
  try {
    const template = await templateFigures(bench);
    const campaigns = await seed(bench, template);
    result.workers = await measure(bench, campaigns, template, 'workers');
    result.sources = await answeredBySource(bench);
    result.inputsRead = await inputsRead(bench);
    if (opts.inline) {
      const inline = await startApiProcess('reads-inline', { ERG_RESULTS_WORKERS: '0', ERG_RESULTS_CACHE_MB: '0' }, { database: bench.url });
      try {
        result.inline = await measure(inline, campaigns, template, 'inline');
      } finally {
        await inline.close();
      }
    }
  } finally {
    await bench.close();
  }
  const all = result.workers.flatMap((c) => c.steps);
  const worst = Math.max(...all.map((s) => s.healthz?.worstMs ?? 0));
  const large = result.workers.find((c) => c.part === 'runs');
  const kept = large?.steps.find((s) => s.name.startsWith('read again'));
  const afterChange = large?.steps.find((s) => s.name.startsWith('read after a change'));
  log(`\nworst /healthz with the results workers: ${worst} ms (target ≤ 100 ms)` +
    (kept ? `; results of ${large.runs} runs (target ≤ 200 ms): kept, median ${kept.medianMs} ms; after a change, the first ${large.steps.find((s) => s.name === 'first read after a change').answers[0].ms} ms, `
      + `then median ${afterChange.medianMs} ms (${afterChange.answers.map((a) => a.ms).join(', ')}); read whole ${large.steps[0].answers[0].ms} ms` : ''));
  log(`answers by source: ${JSON.stringify(result.sources)}; the workers' inputs read: ${JSON.stringify(result.inputsRead)}`);
  if (opts.json) console.log(JSON.stringify(result));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
