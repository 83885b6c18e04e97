#!/usr/bin/env node
// Benchmark: metric extraction over a large stdout.log (apps/scheduler/src/metric-scan.ts), as
// the scheduler does it when a run ends: streamed in 1 MiB batches of lines through the regex
// worker pool (RE2, a task per metric and batch), in bounded memory. A DeepSpeed-like log (one
// throughput/loss line per step) of --mb megabytes is generated, then scanned with four metric sets:
//   aggregate  min + mean + count: one pass over the whole log (up to ERG_METRIC_SCAN_BYTES)
//   last       the last throughput: blocks read backwards from the end, stops at the first match
//   first      the first loss: read from the start, stops at the first match
//   catastrophic  `^(a+)+$` beside a count of steps (the log's first line is forty a's and a '!',
//              which a backtracking engine never finishes): one pass, both metrics get their value
// from a local file and, with --ssh, over SSH from the local Slurm cluster (deploy/local-slurm,
// the same machine). Each case runs in a child process, which reports its own peak RSS
// (getrusage maxrss) and the longest delay of its event loop during the scan (perf_hooks
// monitorEventLoopDelay: the scheduler's thread, which must stay free); "idle" is a child that
// loads the same modules and scans nothing.
//
//   npx turbo run build --filter=@erg/scheduler && node bench/metrics-scan.js --mb 300 --ssh   # --help: the options
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { parseOptions } = require('./lib/options');

const root = path.resolve(__dirname, '..');
const CASES = ['idle', 'aggregate', 'last', 'first', 'catastrophic'];
const { opts } = parseOptions({
  script: __filename,
  summary: 'metric extraction over a large stdout.log (apps/scheduler/src/metric-scan.ts) as the scheduler does it when a '
    + 'run ends: a generated DeepSpeed-like log scanned with an aggregate (one pass), a last and a first metric and a '
    + 'catastrophic regex beside an innocent one (RE2: both get their value), from a local file and with --ssh over SSH from the local Slurm '
    + 'cluster; each case in a child process reporting its peak RSS and the longest delay of its event loop. Needs '
    + '@erg/scheduler built (and deploy/local-slurm/up.sh for --ssh).',
  options: {
    mb: { type: 'number', above: 0, default: 300, description: 'megabytes of log to generate (8 with --quick, whatever this says)' },
    ssh: { type: 'boolean', description: 'also scan over SSH from the local Slurm cluster (not with --quick)' },
    quick: { type: 'boolean', description: '8 MB, local file only (a test runs it)' },
    json: { type: 'boolean', description: 'one line of JSON at the end' },
    case: { type: 'string', choices: CASES, description: 'internal (the bench runs itself with it): run this one case in this process and print its result' },
    source: { type: 'string', choices: ['local', 'ssh'], description: 'internal, with --case: where the log is read from' },
    file: { type: 'string', placeholder: 'PATH', description: 'internal, with --case: the log' },
    'scan-mb': { type: 'number', above: 0, default: 1024, description: 'internal, with --case: ERG_METRIC_SCAN_BYTES in MiB' },
  },
  examples: ['node bench/metrics-scan.js --mb 300 --ssh', 'node bench/metrics-scan.js --quick --json'],
});

const METRICS = {
  idle: [],
  aggregate: [
    { name: 'best_loss', regex: 'loss=([0-9.]+)', reduce: 'min', source: 'stdout' },
    { name: 'throughput', regex: 'throughput=([0-9.]+) samples/s', reduce: 'mean', source: 'stdout' },
    { name: 'steps', regex: '^step ', reduce: 'count', source: 'stdout' },
  ],
  last: [{ name: 'final_throughput', regex: 'throughput=([0-9.]+) samples/s', reduce: 'last', source: 'stdout' }],
  first: [{ name: 'initial_loss', regex: 'loss=([0-9.]+)', reduce: 'first', source: 'stdout' }],
  catastrophic: [
    { name: 'evil', regex: '^(a+)+$', reduce: 'count', source: 'stdout' },
    { name: 'steps', regex: '^step ', reduce: 'count', source: 'stdout' },
  ],
};

async function runCase() {
  const scheduler = path.join(root, 'apps', 'scheduler', 'dist');
  const { scanMetrics, localLogSource, clusterLogSource } = require(path.join(scheduler, 'metric-scan.js'));
  const { UserRegexRunner } = require(path.join(scheduler, 'regex-runner.js'));
  const metrics = METRICS[opts.case];
  const runner = new UserRegexRunner({ workers: 2 });
  let stdout;
  let connection = null;
  if (opts.source === 'ssh') {
    const { ClusterConnection } = require(path.join(root, 'packages', 'slurm', 'dist'));
    const { loadLocalCluster, hostClusterPath } = require('@erg/testkit');
    const cluster = loadLocalCluster();
    connection = new ClusterConnection({
      host: cluster.host, port: cluster.port, username: cluster.user, privateKey: fs.readFileSync(cluster.privateKeyPath), hostKeySha256: cluster.hostKeySha256,
      // The local cluster is on loopback, which a connection reaches only where allowed.
      allowHosts: [cluster.host],
    });
    // opts.file is a path on this machine; the cluster names it without its root (24.11: a chroot).
    stdout = clusterLogSource(connection, path.dirname(hostClusterPath(cluster, opts.file)), path.basename(opts.file), 600_000);
  } else {
    stdout = localLogSource(opts.file, 'stdout.log');
  }
  const stderr = localLogSource(path.join(path.dirname(opts.file), 'no-stderr'), 'stderr.log');
  // What is read: counted on the way (the sources are otherwise the scheduler's own).
  let bytesRead = 0;
  const counted = {
    name: stdout.name,
    open: async (request) => {
      const window = await stdout.open(request);
      if (!window) return null;
      return { ...window, chunks: (async function* () { for await (const c of window.chunks) { bytesRead += c.length; yield c; } })() };
    },
  };
  const { monitorEventLoopDelay } = require('node:perf_hooks');
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const started = process.hrtime.bigint();
  // A budget no case reaches: the bench measures the whole pass (each metric has its own budget).
  const limits = { scanBytes: opts['scan-mb'] * 1024 * 1024, regexBudgetMs: 600_000 };
  const outcome = metrics.length === 0 ? { metrics: {}, warnings: [] } : await scanMetrics(metrics, { stdout: counted, stderr }, runner, limits);
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  loop.disable();
  await runner.close();
  await connection?.close();
  const loopMaxMs = metrics.length === 0 ? 0 : loop.max / 1e6;
  process.stdout.write(JSON.stringify({ ms, bytesRead, maxRssKb: process.resourceUsage().maxRSS, loopMaxMs, metrics: outcome.metrics, warnings: outcome.warnings }) + '\n');
}

/** A log like DeepSpeed prints it: one line per step. */
function generate(file, bytes) {
  const fd = fs.openSync(file, 'w');
  // The trap for a backtracking regex, as one line among the others (RE2 reads it once).
  let written = fs.writeSync(fd, `${'a'.repeat(40)}!\n`);
  let step = 0;
  while (written < bytes) {
    const lines = [];
    for (let i = 0; i < 10_000; i++, step++) {
      lines.push(`step ${step} loss=${(2 / (1 + step / 1000)).toFixed(5)} throughput=${(1500 + (step % 97)).toFixed(1)} samples/s lr=3e-4\n`);
    }
    const chunk = lines.join('');
    fs.writeSync(fd, chunk);
    written += chunk.length;
  }
  fs.closeSync(fd);
  return { bytes: written, steps: step };
}

function child(caseName, source, file) {
  const out = execFileSync(process.execPath, [__filename, '--case', caseName, '--source', source, '--file', file], { encoding: 'utf8', maxBuffer: 1 << 20 });
  return JSON.parse(out.trim().split('\n').at(-1));
}

/** The local cluster's work dir as a path on this machine (deploy/local-slurm's cluster.json). */
function clusterWorkDirHere() {
  const { loadLocalCluster, clusterHostPath } = require('@erg/testkit');
  const cluster = loadLocalCluster();
  return clusterHostPath(cluster, cluster.workDir);
}

function main() {
  const mb = opts.quick ? 8 : opts.mb;
  const sources = opts.quick || !opts.ssh ? ['local'] : ['local', 'ssh'];
  // Over SSH the file must be where the local cluster's login node sees it: its work dir, which is
  // on this machine (under the cluster's root directory).
  const dir = opts.ssh && !opts.quick
    ? fs.mkdtempSync(path.join(clusterWorkDirHere(), 'bench-metrics-'))
    : fs.mkdtempSync(path.join(os.tmpdir(), 'erg-metrics-bench-'));
  const file = path.join(dir, 'stdout.log');
  try {
    const { bytes, steps } = generate(file, mb * 1e6);
    const rows = [];
    for (const source of sources) {
      for (const caseName of CASES) {
        const r = child(caseName, source, file);
        rows.push({
          source, case: caseName, 'MB read': +(r.bytesRead / 1e6).toFixed(1), ms: Math.round(r.ms),
          'MB/s': r.bytesRead > 0 && r.ms > 0 ? Math.round(r.bytesRead / 1e3 / r.ms) : null, 'peak RSS MB': Math.round(r.maxRssKb / 1024),
          'loop max ms': Math.round(r.loopMaxMs), metrics: r.metrics, warnings: r.warnings,
        });
      }
    }
    const result = { fileMb: +(bytes / 1e6).toFixed(1), steps, rows };
    if (!opts.json) {
      console.log(`stdout.log: ${result.fileMb} MB, ${steps} lines`);
      console.table(rows.map(({ metrics, warnings, ...row }) => row));
    }
    if (opts.json) console.log(JSON.stringify(result));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (opts.case) runCase().catch((err) => { console.error(err); process.exit(1); });
else main();
