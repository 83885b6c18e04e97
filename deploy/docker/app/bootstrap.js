#!/usr/bin/env node
// One-shot set-up of the Docker Compose stack (service `bootstrap`, see docs/docker.md):
//   1. an admin API token: the one kept from an earlier run if the API still accepts it, else a
//      new one from `erg-admin create-token` (kept in $ERG_TOKEN_FILE, mode 600);
//   2. allows the Slurm container's service name in the default project's cluster policy (it
//      resolves to Docker's private network, inside erg's own: PUT /v1/projects/default/cluster-policy)
//      and registers the container as cluster `local` (PUT /v1/clusters/local, idempotent)
//      with the key pair and host key fingerprint that up.sh wrote into the shared state volume;
//   3. prints the token, alone, on stdout (everything else goes to stderr), so that
//        export ERG_TOKEN=$(docker compose run --rm -T bootstrap)
//      works. Safe to run again.
// Runs as root: the state volume's private key is readable by root only.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const api = (process.env.ERG_API_URL ?? 'http://api:8080').replace(/\/+$/, '');
const stateDir = process.env.ERG_LOCAL_SLURM_DIR ?? '/var/lib/erg-local/state';
const tokenFile = process.env.ERG_TOKEN_FILE ?? '/var/lib/erg-bootstrap/token';
const clusterName = process.env.ERG_CLUSTER_NAME ?? 'local';
// cluster.json says 127.0.0.1 (where up.sh itself connects); other containers use the service name.
const sshHost = process.env.ERG_SLURM_SSH_HOST ?? 'slurm';
const adminCli = path.resolve(__dirname, '..', '..', 'apps', 'api', 'dist', 'admin.js');

const log = (message) => process.stderr.write(`[bootstrap] ${message}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function call(token, method, url, body) {
  const res = await fetch(api + url, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let data;
  try {
    data = text ? JSON.parse(text) : {};
  } catch {
    data = { raw: text };
  }
  return { status: res.status, ok: res.ok, data };
}

async function waitForApi(seconds) {
  const deadline = Date.now() + seconds * 1000;
  let last = '';
  for (;;) {
    try {
      const res = await fetch(`${api}/readyz`);
      if (res.ok) return;
      last = `HTTP ${res.status}: ${await res.text()}`;
    } catch (err) {
      last = err.cause?.message ?? err.message;
    }
    if (Date.now() > deadline) throw new Error(`the API at ${api} is not ready after ${seconds} s (${last})`);
    await sleep(1000);
  }
}

async function waitForFile(file, seconds) {
  const deadline = Date.now() + seconds * 1000;
  while (!fs.existsSync(file)) {
    if (Date.now() > deadline) {
      throw new Error(`${file} does not exist after ${seconds} s: is the slurm service healthy (docker compose ps, docker compose logs slurm)?`);
    }
    await sleep(1000);
  }
}

/** The kept token when the API still accepts it; 401 means it is gone (new database), anything else is an error. */
async function keptToken() {
  if (!fs.existsSync(tokenFile)) return null;
  const token = fs.readFileSync(tokenFile, 'utf8').trim();
  if (!token) return null;
  const res = await call(token, 'GET', '/v1/clusters');
  if (res.ok) return token;
  if (res.status === 401) {
    log(`the token in ${tokenFile} is no longer accepted; creating a new one`);
    return null;
  }
  throw new Error(`GET /v1/clusters → ${res.status}: ${JSON.stringify(res.data)}`);
}

function newToken() {
  const out = execFileSync(process.execPath, [adminCli, 'create-token', 'docker-bootstrap'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const token = out.trim().split('\n').pop();
  if (!token) throw new Error('erg-admin create-token printed no token');
  fs.mkdirSync(path.dirname(tokenFile), { recursive: true });
  fs.writeFileSync(`${tokenFile}.tmp`, `${token}\n`, { mode: 0o600 });
  fs.renameSync(`${tokenFile}.tmp`, tokenFile);
  log(`created an admin token (kept in ${tokenFile} in the bootstrap volume)`);
  return token;
}

async function main() {
  await waitForApi(180);
  const token = (await keptToken()) ?? newToken();

  const clusterJson = path.join(stateDir, 'cluster.json');
  await waitForFile(clusterJson, 300);
  const cluster = JSON.parse(fs.readFileSync(clusterJson, 'utf8'));
  // The key path in cluster.json is the one inside the slurm container; the volume is mounted at
  // the same place here, but fall back to the state dir in case it is mounted elsewhere.
  const keyPath = fs.existsSync(cluster.privateKeyPath) ? cluster.privateKeyPath : path.join(stateDir, path.basename(cluster.privateKeyPath));
  const body = {
    host: sshHost,
    port: cluster.port,
    user: cluster.user,
    privateKey: fs.readFileSync(keyPath, 'utf8'),
    hostKeySha256: cluster.hostKeySha256,
    defaultPartition: cluster.partition,
    workDir: cluster.workDir,
    // Agents in the slurm container reach the API by its service name and push live.
    agentApiUrl: api,
  };
  // The service name resolves to a private address (Docker's network): erg connects there only where
  // an admin allows the host for the project. The bootstrap token is an admin's; keep what is there.
  const policy = await call(token, 'GET', '/v1/projects/default/cluster-policy');
  if (!policy.ok) throw new Error(`GET /v1/projects/default/cluster-policy → ${policy.status}: ${JSON.stringify(policy.data)}`);
  if (!policy.data.allowHosts.includes(sshHost)) {
    const allowed = await call(token, 'PUT', '/v1/projects/default/cluster-policy', { allowHosts: [...policy.data.allowHosts, sshHost] });
    if (!allowed.ok) throw new Error(`PUT /v1/projects/default/cluster-policy → ${allowed.status}: ${JSON.stringify(allowed.data)}`);
    log(`allowed "${sshHost}" in the default project's cluster policy`);
  }
  const res = await call(token, 'PUT', `/v1/clusters/${encodeURIComponent(clusterName)}`, body);
  if (!res.ok) {
    const issues = (res.data.error?.issues ?? []).map((i) => `\n  ${i.path}: ${i.message}`).join('');
    throw new Error(`PUT /v1/clusters/${clusterName} → ${res.status}: ${res.data.error?.message ?? JSON.stringify(res.data)}${issues}`);
  }
  log(`registered cluster "${clusterName}": ${body.user}@${body.host}:${body.port}, partition ${body.defaultPartition}, host key ${body.hostKeySha256}`);
  log('the token follows on stdout');
  process.stdout.write(`${token}\n`);
}

main().catch((err) => {
  log(`failed: ${err.message}`);
  process.exit(1);
});
