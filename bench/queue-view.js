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
//   npx turbo run build && node bench/queue-view.js [--loads 10]
'use strict';
const { generateKeyPairSync } = require('node:crypto');
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { chromium } = require('playwright-core');
const { claimRunsForSubmission, markRunsQueued, recordSlurmProgress } = require('@erg/db');
const { startBenchApi } = require('./lib/bench-api');

const { values: opts } = parseArgs({ options: { loads: { type: 'string', default: '10' } } });
const CHROMIUM = process.env.ERG_CHROMIUM || '/usr/bin/chromium';
const PRIVATE_KEY = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

async function seed({ call, db }) {
  for (const name of ['alpha', 'beta']) {
    await call('POST', '/v1/clusters', {
      name, host: '127.0.0.1', port: 2222, user: 'root', privateKey: PRIVATE_KEY, hostKeySha256: 'SHA256:' + 'A'.repeat(43),
      workDir: '/var/lib/erg-bench', defaultPartition: 'gpu',
    });
  }
  for (let i = 0; i < 20; i++) {
    await call('POST', '/v1/campaigns', {
      name: `queue-view-${i}`, cluster: i % 2 ? 'beta' : 'alpha', repetitions: 2,
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
  await db.pool.query('ANALYZE');
  const count = await db.pool.query(`SELECT count(*)::int AS n FROM runs WHERE state IN ('pending', 'submitting', 'queued', 'running', 'completing')`);
  return count.rows[0].n;
}

async function main() {
  const bench = await startBenchApi('queueview', { poolSize: 10 });
  const userDataDir = mkdtempSync(path.join(tmpdir(), 'erg-bench-chromium-'));
  let context;
  try {
    const seedStart = performance.now();
    const unfinished = await seed(bench);
    console.log(`seeded ${unfinished} unfinished runs in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`);
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
    for (let i = 0; i <= Number(opts.loads); i++) {
      // A new query string each time: a full page load, not a same-document hash change.
      await page.goto(`${bench.api}/?load=${i}#/queue`);
      await page.waitForFunction(() => performance.getEntriesByName('erg:queue-first-render').length > 0, null, { timeout: 60_000 });
      const m = await page.evaluate(() => ({
        fetch: performance.getEntriesByName('erg:queue-fetch')[0].duration,
        render: performance.getEntriesByName('erg:queue-first-render')[0].duration,
        rows: document.querySelectorAll('[data-testid=queue-table] tbody tr[data-run]').length,
        shown: document.querySelector('[data-testid=queue-total]').textContent,
      }));
      if (i === 0) continue; // warm-up: caches, JIT
      fetches.push(m.fetch);
      renders.push(m.render);
      shown = m.shown;
      domRows = m.rows;
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
    console.log(`queue view: ${shown}; ${domRows} table rows in the DOM`);
    console.log(`GET /v1/queue?limit=5000 from the page   median ${median(fetches).toFixed(0)} ms over ${fetches.length} loads (min ${Math.min(...fetches).toFixed(0)}, max ${Math.max(...fetches).toFixed(0)})`);
    console.log(`request start → table painted            median ${median(renders).toFixed(0)} ms over ${renders.length} loads (min ${Math.min(...renders).toFixed(0)}, max ${Math.max(...renders).toFixed(0)})`);
    console.log(`scroll to the last row → painted          ${jump.toFixed(0)} ms`);
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
