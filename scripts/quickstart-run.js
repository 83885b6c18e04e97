#!/usr/bin/env node
// Allows the local cluster's loopback address in the default project's cluster policy (what an admin
// does for a cluster inside erg's own network), registers the local cluster as `local`, submits
// examples/quickstart.yaml through the REST API,
// shows progress until every run has ended, and prints the energy results per configuration
// (GET /v1/campaigns/:id/results) as `erg results` prints them: time, energy, power, EDP with 95 %
// intervals, Pareto marks, the claims with their uncertainty, the run order and whether the
// results are publishable. Plain Node.js (no build step) so that it reads as an example of using the API.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

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

async function main() {
  const cluster = JSON.parse(fs.readFileSync(path.join(root, '.erg', 'local-slurm', 'cluster.json'), 'utf8'));
  // The local cluster's sshd listens on 127.0.0.1, inside erg's own network: erg connects there only
  // where an admin allows it for the project (docs/security.md, "Clusters and jump hosts: address
  // policy"). The quickstart's token is an admin's, so it allows it here, as a site's admin would.
  const policy = await call('GET', '/v1/projects/default/cluster-policy');
  if (!policy.allowHosts.includes(cluster.host)) {
    await call('PUT', '/v1/projects/default/cluster-policy', { allowHosts: [...policy.allowHosts, cluster.host] });
    console.log(`allowed ${cluster.host} in the default project's cluster policy (PUT /v1/projects/default/cluster-policy)`);
  }
  await call('PUT', '/v1/clusters/local', {
    host: cluster.host, port: cluster.port, user: cluster.user,
    privateKey: fs.readFileSync(cluster.privateKeyPath, 'utf8'),
    hostKeySha256: cluster.hostKeySha256, defaultPartition: cluster.partition, workDir: cluster.workDir,
    agentApiUrl: api, // the local node reaches the API directly: agents push live
  });
  console.log(`registered cluster "local" (${cluster.user}@${cluster.host}:${cluster.port}, partition ${cluster.partition})`);

  const created = await call('POST', '/v1/campaigns', fs.readFileSync(specFile, 'utf8'), 'application/yaml');
  console.log(`campaign ${created.id}: ${created.configurations.length} configurations x ${created.runs.length / created.configurations.length} repetitions = ${created.runs.length} runs`);
  if (created.design) console.log(`run order: ${created.design.order}${created.design.seed === null ? '' : `, seed ${created.design.seed}`} (docs/experiments.md)`);

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
  const energies = await Promise.all(items.map((r) => fetch(`${api}/v1/runs/${r.id}/energy`, { headers: { authorization: `Bearer ${token}` } }).then((x) => x.json())));
  const methods = [...new Set(energies.map((e) => e.method).filter(Boolean))];
  // The results as the erg command line prints them (one owner of how results read to people).
  const cli = path.join(root, 'apps', 'cli', 'dist', 'erg');
  const printed = execFileSync(process.execPath, [cli, 'results', created.id], { env: { ...process.env, ERG_API_URL: api, ERG_TOKEN: token, NO_COLOR: '1' }, encoding: 'utf8' });
  console.log(`\n${printed.trimEnd()}\n`);
  console.log(`energy method: ${methods.join(', ') || 'none'}` +
    (methods.includes('model') ? ' (this machine has no power sensors: CPU power is modelled from utilisation)' : ''));
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
