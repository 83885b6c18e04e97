#!/usr/bin/env node
// Benchmark: the web app's queue view with 10,000 unfinished runs in the database (2 clusters,
// 20 campaigns of 500 runs; per cluster 1,000 queued of which 300 running, each running run with a
// minute of telemetry). In Debian's Chromium (playwright-core), at 1366×768, it loads `#/queue`
// `--loads` times and reads the app's own performance marks: the GET /v1/queue request
// (erg:queue-fetch, the UI asks for the API's largest page, limit=5000) and the time from the
// request's start to the first paint of the table with its rows (erg:queue-first-render). Also
// prints how many table rows are in the DOM (the table renders only those on screen) and how long
// a jump to the end of the list takes to paint.
//
//   npx turbo run build && node bench/queue-view.js        # --help: the options
'use strict';
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const path = require('node:path');
const { parseOptions } = require('./lib/options');

const { opts } = parseOptions({
  script: __filename,
  summary: 'the web app\'s queue view with 10,000 unfinished runs in the database (2 clusters, 20 campaigns; 600 running '
    + 'with a minute of telemetry each), loaded in headless Chromium at 1366×768: the app\'s own performance marks '
    + '(erg:queue-fetch, erg:queue-first-render), the table rows in the DOM and the time to paint a jump to the last row. '
    + 'Needs the build (npx turbo run build), Postgres, Redis and Chromium (/usr/bin/chromium or ERG_CHROMIUM).',
  options: {
    loads: { type: 'integer', min: 1, default: 10, quick: 2, description: 'full page loads measured (after one warm-up)' },
    runs: { type: 'integer', min: 200, default: 10_000, quick: 600, check: (v) => (v % 200 === 0 ? undefined : 'a multiple of 200'), description: 'unfinished runs to seed, a multiple of 200 (100000 for issue 14\'s campaigns of 100,000 runs: 20 campaigns of 5,000, 6,000 of them running)' },
    quick: { type: 'boolean', description: '600 runs (36 running), 2 loads (a test runs it)' },
    json: { type: 'boolean', description: 'one line of JSON at the end, with the table\'s row counts (the text goes to stderr)' },
  },
  examples: ['node bench/queue-view.js --loads 10', 'node bench/queue-view.js --runs 100000'],
});
const { chromium } = require('playwright-core');
const { median, startBenchApi } = require('./lib/bench-api');
const { queueSeedShape, seedQueue } = require('./lib/queue-seed');

const LOADS = opts.loads;
const SHAPE = queueSeedShape(opts.runs);
const log = opts.json ? console.error : console.log;
const CHROMIUM = process.env.ERG_CHROMIUM || '/usr/bin/chromium';

async function main() {
  const bench = await startBenchApi('queueview', { poolSize: 10 });
  const userDataDir = mkdtempSync(path.join(tmpdir(), 'erg-bench-chromium-'));
  let context;
  try {
    const seedStart = performance.now();
    const unfinished = await seedQueue(bench, 'queue-view', SHAPE.runs);
    const seedSeconds = (performance.now() - seedStart) / 1000;
    log(`seeded ${unfinished} unfinished runs in ${seedSeconds.toFixed(1)} s`);
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM, headless: true, viewport: { width: 1366, height: 768 },
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    await context.addInitScript((token) => sessionStorage.setItem('erg.token', token), bench.token);
    const page = context.pages()[0] || (await context.newPage());
    const fetches = [];
    const renders = [];
    let shown = '';
    let domRows = 0;
    let tableRows = 0;
    let domStates = {};
    for (let i = 0; i <= LOADS; i++) {
      // A new query string each time: a full page load, not a same-document hash change.
      await page.goto(`${bench.api}/?load=${i}#/queue`);
      await page.waitForFunction(() => performance.getEntriesByName('erg:queue-first-render').length > 0, null, { timeout: 60_000 });
      const m = await page.evaluate(() => ({
        fetch: performance.getEntriesByName('erg:queue-fetch')[0].duration,
        render: performance.getEntriesByName('erg:queue-first-render')[0].duration,
        rows: document.querySelectorAll('[data-testid=queue-table] tbody tr[data-run]').length,
        shown: document.querySelector('[data-testid=queue-total]').textContent,
        // aria-rowcount counts the header row too.
        tableRows: Number(document.querySelector('[data-testid=queue-table]').getAttribute('aria-rowcount')) - 1,
        states: [...document.querySelectorAll('[data-testid=queue-table] tbody tr[data-run]')].map((tr) => tr.getAttribute('data-state')),
      }));
      if (i === 0) continue; // warm-up: caches, JIT
      fetches.push(m.fetch);
      renders.push(m.render);
      shown = m.shown;
      domRows = m.rows;
      tableRows = m.tableRows;
      domStates = {};
      for (const state of m.states) domStates[state] = (domStates[state] ?? 0) + 1;
    }
    // Jump to the end of the list and time until its last row is painted.
    const jump = await page.evaluate(async () => {
      const box = document.querySelector('.tablebox');
      const total = Number(document.querySelector('[data-testid=queue-table]').getAttribute('aria-rowcount'));
      const start = performance.now();
      box.scrollTop = box.scrollHeight;
      for (;;) {
        await new Promise((r) => requestAnimationFrame(r));
        if (document.querySelector(`[data-testid=queue-table] tr[aria-rowindex="${total}"]`)) return performance.now() - start;
        if (performance.now() - start > 10_000) return NaN;
      }
    });
    // After the jump: the rows in the DOM, and whether the last run is one of them.
    const end = await page.evaluate(() => ({
      rows: document.querySelectorAll('[data-testid=queue-table] tbody tr[data-run]').length,
      lastRowIndex: Math.max(...[...document.querySelectorAll('[data-testid=queue-table] tbody tr[data-run]')].map((tr) => Number(tr.getAttribute('aria-rowindex')))),
    }));
    log(`queue view: ${shown}; ${domRows} table rows in the DOM`);
    log(`GET /v1/queue?limit=5000 from the page   median ${median(fetches).toFixed(0)} ms over ${fetches.length} loads (min ${Math.min(...fetches).toFixed(0)}, max ${Math.max(...fetches).toFixed(0)})`);
    log(`request start → table painted            median ${median(renders).toFixed(0)} ms over ${renders.length} loads (min ${Math.min(...renders).toFixed(0)}, max ${Math.max(...renders).toFixed(0)})`);
    log(`scroll to the last row → painted          ${jump.toFixed(0)} ms`);
    const stats = (xs) => ({ medianMs: median(xs), minMs: Math.min(...xs), maxMs: Math.max(...xs) });
    if (opts.json) {
      console.log(JSON.stringify({
        seed: SHAPE, unfinished, seedSeconds, loads: fetches.length, shown, tableRows, domRows, domStates,
        rowsAfterJump: end.rows, lastRowIndexAfterJump: end.lastRowIndex,
        fetch: stats(fetches), firstRender: stats(renders), jumpToLastRowMs: Number.isNaN(jump) ? null : jump,
      }));
    }
  } finally {
    await context?.close().catch(() => undefined);
    rmSync(userDataDir, { recursive: true, force: true });
    await bench.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
