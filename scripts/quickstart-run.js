#!/usr/bin/env node
// Registers the local cluster as `local`, submits examples/quickstart.yaml through the REST API,
// shows progress until every run has ended, and prints the energy results per configuration
// (GET /v1/campaigns/:id/results): time, energy, power, EDP with 95 % intervals, Pareto marks.
// Plain Node.js (no build step) so that it reads as an example of using the API.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const api = process.env.ERG_API_URL ?? `http://127.0.0.1:${process.env.ERG_API_PORT ?? 8080}`;
const token = fs.readFileSync(path.join(root, '.erg', 'token'), 'utf8').trim();
const specFile = process.argv[2] ?? path.join(root, 'examples', 'quickstart.yaml');
// The run states that no longer change, from @erg/spec (its dependency-free subpath; needs the build).
const TERMINAL = new Set(require('@erg/spec/run-state').TERMINAL_RUN_STATES);

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
    agentApiUrl: api, // the local node reaches the API directly: agents push live
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

  const results = await call('GET', `/v1/campaigns/${created.id}/results`);
  const { items } = await call('GET', `/v1/campaigns/${created.id}/runs?limit=10000`);
  const energies = await Promise.all(items.map((r) => fetch(`${api}/v1/runs/${r.id}/energy`, { headers: { authorization: `Bearer ${token}` } }).then((x) => x.json())));
  const methods = [...new Set(energies.map((e) => e.method).filter(Boolean))];
  const fmt = (s, digits, scale = 1) => (s && s.mean !== null ? `${(s.mean * scale).toFixed(digits)} ± ${((s.ci95[1] - s.mean) * scale).toFixed(digits)}` : '-');
  const rows = [['configuration', 'n', 'time (s)', 'energy (kJ)', 'avg power (W)', 'EDP (kJ·s)', 'J/work unit', 'marks']];
  for (const c of results.configurations) {
    const marks = [
      c.paretoOptimal ? 'pareto' : '',
      results.best?.time === c.key ? 'fastest' : '',
      results.best?.energy === c.key ? 'most frugal' : '',
      results.best?.edp === c.key ? 'best EDP' : '',
    ].filter(Boolean).join(', ');
    const perWork = c.metrics?.work_units?.mean && c.energyJ?.mean ? (c.energyJ.mean / c.metrics.work_units.mean).toExponential(2) : '-';
    rows.push([c.key, String(c.n), fmt(c.timeS, 3), fmt(c.energyJ, 3, 1e-3), fmt(c.avgPowerW, 1), fmt(c.edpJs, 3, 1e-3), perWork, marks]);
  }
  console.log(`\n${table(rows)}\n`);
  console.log(`± is the 95 % confidence half-width over repetitions; energy method: ${methods.join(', ') || 'none'}` +
    (methods.includes('model') ? ' (this machine has no power sensors: CPU power is modelled from utilisation)' : ''));
  if (results.power) console.log(`power state: ${results.power.note}`);
  if (results.tradeoff) {
    const t = results.tradeoff;
    console.log(`fastest: ${t.fastest}; most frugal: ${t.mostFrugal}; choosing the frugal one saves ${t.energySavedPct?.toFixed(1)} % energy for ${t.timeLostPct?.toFixed(1)} % more time`);
  }
  const runs = await Promise.all(items.map((r) => call('GET', `/v1/runs/${r.id}`)));
  const failed = runs.filter((r) => r.state !== 'completed');
  for (const r of failed) console.log(`run ${r.id} ${r.state}: ${r.reason ?? ''}`);
  console.log(`API: ${api}   web: ${api}/ (sign in with the token)   docs: ${api}/docs   token: .erg/token`);
  console.log(`one run in full: curl -H "Authorization: Bearer $(cat .erg/token)" ${api}/v1/runs/${runs[0].id}`);
  process.exitCode = failed.length ? 1 : 0;
}

main().catch((err) => {
  console.error(`quickstart failed: ${err.message}`);
  process.exit(1);
});
