#!/usr/bin/env node
// Where the test suite's time goes, from the artifacts scripts/test.sh leaves (jest --json, one per
// jest run: test-artifacts/unit.json, integration.json, e2e-<cluster>[-<slot>].json). Prints Markdown:
// per project its wall time (first file started → last file ended; e2e runs that overlap count
// once) and test counts, then per e2e file its minutes on each cluster. With two folders, the same
// side by side, before → after (docs/testing.md keeps such a table).
//
// Usage: node scripts/test-timings.js [BEFORE_DIR] AFTER_DIR    (default: test-artifacts)
'use strict';

const { existsSync, readdirSync, readFileSync } = require('node:fs');
const path = require('node:path');

/** Every jest artifact in `dir`: its name, project and (for e2e) cluster. */
function loadRuns(dir) {
  if (!existsSync(dir)) throw new Error(`${dir}: no such folder`);
  const runs = [];
  for (const name of readdirSync(dir).filter((n) => /^(unit|integration|e2e-\d+\.\d+(-[a-z-]+)?)\.json$/.test(n)).sort()) {
    const report = JSON.parse(readFileSync(path.join(dir, name), 'utf8'));
    if (!Array.isArray(report.testResults)) continue;
    const [, project, series] = /^(unit|integration|e2e)(?:-(\d+\.\d+))?/.exec(name);
    runs.push({ name, project, series: series ?? null, report });
  }
  if (runs.length === 0) throw new Error(`${dir}: no jest artifacts (unit.json, integration.json, e2e-*.json)`);
  return runs;
}

const relative = (file) => {
  const i = file.search(/\/(apps|packages|deploy|scripts|bench)\//);
  return i < 0 ? file : file.slice(i + 1);
};

/** Per project: tests passed, failed, files, and wall minutes over the union of its runs' spans. */
function projects(runs) {
  const out = new Map();
  for (const run of runs) {
    const p = out.get(run.project) ?? { passed: 0, failed: 0, files: 0, spans: [] };
    p.passed += run.report.numPassedTests;
    p.failed += run.report.numFailedTests + run.report.numRuntimeErrorTestSuites;
    p.files += run.report.testResults.length;
    const end = Math.max(...run.report.testResults.map((t) => t.endTime));
    if (Number.isFinite(end)) p.spans.push([run.report.startTime, end]);
    out.set(run.project, p);
  }
  for (const p of out.values()) {
    const spans = p.spans.sort((a, b) => a[0] - b[0]);
    let wall = 0;
    let [from, to] = spans[0] ?? [0, 0];
    for (const [s, e] of spans.slice(1)) {
      if (s > to) { wall += to - from; [from, to] = [s, e]; } else to = Math.max(to, e);
    }
    p.wallMin = (wall + to - from) / 60_000;
  }
  return out;
}

/** Per e2e file and cluster: minutes (summed over the slots it ran in). */
function e2eFiles(runs) {
  const out = new Map();
  for (const run of runs.filter((r) => r.project === 'e2e')) {
    for (const t of run.report.testResults) {
      const file = relative(t.name);
      const row = out.get(file) ?? {};
      row[run.series] = (row[run.series] ?? 0) + (t.endTime - t.startTime) / 60_000;
      out.set(file, row);
    }
  }
  return out;
}

const min = (x) => (x === undefined ? '—' : x.toFixed(2));

function main(argv) {
  if (argv.includes('--help') || argv.length > 2) {
    console.log('usage: node scripts/test-timings.js [BEFORE_DIR] AFTER_DIR   (default: test-artifacts)');
    return argv.includes('--help') ? 0 : 2;
  }
  const dirs = argv.length === 0 ? ['test-artifacts'] : argv;
  const sets = dirs.map(loadRuns);
  const series = [...new Set(sets.flatMap((runs) => runs.map((r) => r.series).filter(Boolean)))].sort();
  const heads = dirs.length === 2 ? ' (before → after)' : '';
  const cell = (values) => values.map(min).join(' → ');

  const perProject = sets.map(projects);
  console.log(`| project | minutes${heads} | tests passed | failed | files |`);
  console.log('| --- | --- | --- | --- | --- |');
  for (const name of ['unit', 'integration', 'e2e']) {
    const ps = perProject.map((m) => m.get(name));
    if (ps.every((p) => !p)) continue;
    const f = (k) => ps.map((p) => (p ? p[k] : '—')).join(' → ');
    console.log(`| ${name} | ${cell(ps.map((p) => p?.wallMin))} | ${f('passed')} | ${f('failed')} | ${f('files')} |`);
  }

  const perFile = sets.map(e2eFiles);
  const files = [...new Set(perFile.flatMap((m) => [...m.keys()]))].sort();
  console.log('');
  console.log(`| e2e file | ${series.map((s) => `Slurm ${s}`).join(' | ')} | all clusters |`);
  console.log(`| --- | ${series.map(() => '---').join(' | ')} | --- |`);
  const total = (row) => (row ? Object.values(row).reduce((a, b) => a + b, 0) : undefined);
  for (const file of files) {
    const rows = perFile.map((m) => m.get(file));
    console.log(`| ${file} | ${series.map((s) => cell(rows.map((r) => r?.[s]))).join(' | ')} | ${cell(rows.map(total))} |`);
  }
  const sums = perFile.map((m) => [...m.values()].reduce((a, r) => a + total(r), 0));
  console.log(`| **sum of files** | ${series.map((s) => cell(perFile.map((m) => [...m.values()].reduce((a, r) => a + (r[s] ?? 0), 0)))).join(' | ')} | ${cell(sums)} |`);
  return 0;
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (err) {
  console.error(`scripts/test-timings.js: ${err.message}`);
  process.exitCode = 2;
}
