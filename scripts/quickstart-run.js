#!/usr/bin/env node
// Registers the local cluster as `local`, submits examples/quickstart.yaml through the REST API,
// shows progress until every run has ended, and prints a results table per configuration.
// Plain Node.js (no build step) so that it reads as an example of using the API.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const api = process.env.ERG_API_URL ?? `http://127.0.0.1:${process.env.ERG_API_PORT ?? 8080}`;
const token = fs.readFileSync(path.join(root, '.erg', 'token'), 'utf8').trim();
const specFile = process.argv[2] ?? path.join(root, 'examples', 'quickstart.yaml');
const TERMINAL = new Set(['completed', 'failed', 'cancelled', 'timeout', 'node_fail', 'oom']);

async function call(method, url, body, contentType = 'application/json') {
  const res = await fetch(api + url, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': contentType } : {}) },
    body: body === undefined ? undefined : contentType === 'application/json' ? JSON.stringify(body) : body,
  });
  const data = await res.json();
  if (!res.ok) {
    const issues = (data.error?.issues ?? []).map((i) => `\n  ${i.path}: ${i.message}`).join('');
    throw new Error(`${method} ${url} → ${res.status}: ${data.error?.message ?? JSON.stringify(data)}${issues}`);
  }
  return data;
}

function bar(counts, total) {
  const done = Object.entries(counts).filter(([s]) => TERMINAL.has(s)).reduce((a, [, n]) => a + n, 0);
  const width = 30;
  const filled = Math.round((done / total) * width);
  const parts = Object.entries(counts).map(([s, n]) => `${s} ${n}`).join(', ');
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}  ${parts}`;
}

function stats(values) {
  const xs = values.filter((v) => typeof v === 'number');
  if (xs.length === 0) return { mean: null, std: null };
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const std = xs.length > 1 ? Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1)) : 0;
  return { mean, std };
}

function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  return rows.map((r, j) => r.map((c, i) => String(c).padEnd(widths[i])).join('  ') + (j === 0 ? `\n${widths.map((w) => '-'.repeat(w)).join('  ')}` : '')).join('\n');
}

async function main() {
  const cluster = JSON.parse(fs.readFileSync(path.join(root, '.erg', 'local-slurm', 'cluster.json'), 'utf8'));
  await call('PUT', '/v1/clusters/local', {
    host: cluster.host, port: cluster.port, user: cluster.user,
    privateKey: fs.readFileSync(cluster.privateKeyPath, 'utf8'),
    hostKeySha256: cluster.hostKeySha256, defaultPartition: cluster.partition, workDir: cluster.workDir,
  });
  console.log(`registered cluster "local" (${cluster.user}@${cluster.host}:${cluster.port}, partition ${cluster.partition})`);

  const created = await call('POST', '/v1/campaigns', fs.readFileSync(specFile, 'utf8'), 'application/yaml');
  console.log(`campaign ${created.id}: ${created.configurations.length} configurations x ${created.runs.length / created.configurations.length} repetitions = ${created.runs.length} runs`);

  const tty = process.stdout.isTTY;
  let last = '';
  const deadline = Date.now() + 15 * 60_000;
  for (;;) {
    const c = await call('GET', `/v1/campaigns/${created.id}`);
    const line = bar(c.runCounts, c.totalRuns);
    if (line !== last) {
      process.stdout.write(tty ? `\r${line}\x1b[K` : `${line}\n`);
      last = line;
    }
    if (!['pending', 'running', 'cancelling'].includes(c.state)) {
      if (tty) process.stdout.write('\n');
      console.log(`campaign ${c.state}`);
      break;
    }
    if (Date.now() > deadline) throw new Error('the campaign did not finish within 15 minutes; see .erg/logs/scheduler.log');
    await new Promise((r) => setTimeout(r, 1000));
  }

  const { items } = await call('GET', `/v1/campaigns/${created.id}/runs?limit=10000`);
  const runs = await Promise.all(items.map((r) => call('GET', `/v1/runs/${r.id}`)));
  const byConfig = new Map();
  for (const r of runs) byConfig.set(r.configurationKey, [...(byConfig.get(r.configurationKey) ?? []), r]);
  const metricNames = [...new Set(runs.flatMap((r) => Object.keys(r.metrics ?? {})))];
  const rows = [['configuration', 'runs ok', 'time (s) mean ± sd', ...metricNames.map((m) => `${m} mean`)]];
  for (const [key, rs] of byConfig) {
    const t = stats(rs.map((r) => r.timeS));
    rows.push([
      key,
      `${rs.filter((r) => r.state === 'completed').length}/${rs.length}`,
      t.mean === null ? '-' : `${t.mean.toFixed(3)} ± ${t.std.toFixed(3)}`,
      ...metricNames.map((m) => { const s = stats(rs.map((r) => r.metrics?.[m])); return s.mean === null ? '-' : String(Math.round(s.mean * 1000) / 1000); }),
    ]);
  }
  console.log(`\n${table(rows)}\n`);
  const failed = runs.filter((r) => r.state !== 'completed');
  for (const r of failed) console.log(`run ${r.id} ${r.state}: ${r.reason ?? ''}`);
  console.log(`API: ${api}   docs: ${api}/docs   token: .erg/token`);
  console.log(`one run in full: curl -H "Authorization: Bearer $(cat .erg/token)" ${api}/v1/runs/${runs[0].id}`);
  process.exitCode = failed.length ? 1 : 0;
}

main().catch((err) => {
  console.error(`quickstart failed: ${err.message}`);
  process.exit(1);
});
