/**
 * GET /v1/runs/{id}/logs against the local cluster, with the API as its own process (built, from
 * apps/api/dist) so that its memory can be read from /proc: six concurrent 16 MiB tails stream
 * through without tripling it; a run whose stdout.log is a FIFO answers 409 at once while another
 * run's logs are served; reads beyond the per-token limit (2) answer 429 with Retry-After.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createApiToken, createDatabase, type Database } from '@erg/db';
import { setRunDir } from '@erg/db/testing';
import { ClusterConnection, shellQuote } from '@erg/slurm';
import {
  closedPort, createTestDatabase, loadLocalCluster, LOOPBACK_ALLOW_HOSTS, repoRoot, TEST_SECRET_KEY, uniqueName, waitFor, type LocalCluster, type TestDatabase,
} from '@erg/testkit';

jest.setTimeout(180_000);

const MiB = 1024 * 1024;

let cluster: LocalCluster;
let ssh: ClusterConnection;
let tdb: TestDatabase;
let db: Database;
let api: ChildProcess;
let url: string;
let token: string;
let workDir: string;
const runs: Record<'big' | 'fifo' | 'small', string> = { big: '', fifo: '', small: '' };

async function call(method: string, route: string, body?: unknown, as = token): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(url + route, {
    method,
    headers: { authorization: `Bearer ${as}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? null : JSON.parse(text), headers: res.headers };
}

/** The API process's resident memory (VmRSS) and its peak so far (VmHWM), in bytes. */
function apiMemory(): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${api.pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)![1]) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** Reads a response to its end, keeping only its length and its first and last bytes. */
async function drain(res: Response): Promise<{ bytes: number; head: string; tail: string }> {
  let bytes = 0;
  let head = '';
  let tail = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    const text = Buffer.from(chunk).toString('latin1');
    if (head.length < 200) head += text.slice(0, 200 - head.length);
    tail = (tail + text).slice(-200);
  }
  return { bytes, head, tail };
}

beforeAll(async () => {
  cluster = loadLocalCluster();
  ssh = new ClusterConnection({
    host: cluster.host, port: cluster.port, username: cluster.user, privateKey: cluster.privateKey, hostKeySha256: cluster.hostKeySha256, allowHosts: LOOPBACK_ALLOW_HOSTS,
  });
  tdb = await createTestDatabase();
  db = createDatabase(tdb.url);
  const port = await closedPort();
  url = `http://127.0.0.1:${port}`;
  api = spawn(process.execPath, [path.join(repoRoot(), 'apps', 'api', 'dist', 'main.js')], {
    env: {
      ...process.env, DATABASE_URL: tdb.url, ERG_API_PORT: String(port), ERG_SECRET_KEY: TEST_SECRET_KEY, ERG_QUEUE_PREFIX: uniqueName('erglogs'),
      LOG_LEVEL: 'warn', ERG_LOG_READS_PER_TOKEN: '2', ERG_LOG_READS_PER_CLUSTER: '6',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  await waitFor(async () => (await fetch(`${url}/healthz`).catch(() => null))?.ok === true, { timeoutMs: 30_000, intervalMs: 200, what: 'the API to listen' });
  token = (await createApiToken(db, 'logs-e2e')).token;

  workDir = `${cluster.workDir}/${uniqueName('api-logs')}`;
  // The local cluster is on loopback: allowed for the project as an admin allows it for the quickstart.
  expect((await call('PUT', '/v1/projects/default/cluster-policy', { allowHosts: LOOPBACK_ALLOW_HOSTS })).status).toBe(200);
  const registered = await call('PUT', '/v1/clusters/local', {
    host: cluster.host, port: cluster.port, user: cluster.user, privateKey: cluster.privateKey, hostKeySha256: cluster.hostKeySha256,
    defaultPartition: cluster.partition, workDir,
  });
  expect(registered.status).toBe(200);
  // Side by side on the one local node (erg's default is whole nodes): the test is about logs, not energy.
  const campaign = await call('POST', '/v1/campaigns', { name: 'logs', cluster: 'local', parameters: { v: ['big', 'fifo', 'small'] }, run: 'true', resources: { exclusive: false } });
  expect(campaign.status).toBe(201);
  // No scheduler runs here: the runs stay pending, with run directories made by hand.
  for (const run of campaign.body.runs as { id: string; configurationKey: string }[]) {
    const which = run.configurationKey.split('=')[1] as keyof typeof runs;
    runs[which] = run.id;
    await setRunDir(db, run.id, `${workDir}/${which}`);
  }
  const q = shellQuote(workDir);
  const made = await ssh.exec(
    `mkdir -p ${q}/big ${q}/fifo ${q}/small && cd ${q} && ` +
      `head -c ${12 * MiB} /dev/urandom | base64 -w 100 > big/stdout.log && cp big/stdout.log big/stderr.log && ` +
      `mkfifo fifo/stdout.log && printf 'hello\\npassword=hunter2\\n' > small/stdout.log && printf 'warn\\n' > small/stderr.log`,
  );
  expect(made.code).toBe(0);
});

afterAll(async () => {
  api?.kill('SIGTERM');
  await new Promise((resolve) => (api?.exitCode !== null ? resolve(null) : api.once('exit', resolve)));
  await ssh?.exec(`rm -rf ${shellQuote(workDir)}`).catch(() => undefined);
  await ssh?.close();
  await db?.close();
  await tdb?.drop();
});

test('logs are read live from the run directory and redacted', async () => {
  const res = await call('GET', `/v1/runs/${runs.small}/logs`);
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ runId: runs.small, source: 'cluster', truncated: false, stdout: 'hello\npassword=[redacted]\n', stderr: 'warn\n' });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
});

test('a run whose stdout.log is a FIFO answers 409 at once, and never holds up the logs of another run', async () => {
  const [fifo, small] = await Promise.all([call('GET', `/v1/runs/${runs.fifo}/logs`), call('GET', `/v1/runs/${runs.small}/logs`)]);
  expect(fifo.status).toBe(409);
  expect(fifo.body.error).toEqual({
    code: 'ERG_LOG_UNREADABLE',
    message: `the logs of run ${runs.fifo} cannot be read: stdout.log is a FIFO, not a regular file; erg reads job output only from regular files`,
  });
  expect(small.status).toBe(200);
  expect(small.body.stdout).toBe('hello\npassword=[redacted]\n');
});

test('six concurrent 16 MiB tails stream through without tripling the API memory', async () => {
  await call('GET', `/v1/runs/${runs.small}/logs`); // warm: the connection and the route are set up
  const before = apiMemory();
  // Six at once, from three tokens (two reads each, the per-token limit); each response is read
  // as it comes (a client that does not read holds its SSH channel).
  const tokens = [token, (await createApiToken(db, 'logs-e2e-2')).token, (await createApiToken(db, 'logs-e2e-3')).token];
  const bodies = await Promise.all(
    Array.from({ length: 6 }, async (_, i) => {
      const res = await fetch(`${url}/v1/runs/${runs.big}/logs?tailBytes=${16 * MiB}`, { headers: { authorization: `Bearer ${tokens[i % 3]}` } });
      return { status: res.status, ...(await drain(res)) };
    }),
  );
  expect(bodies.map((b) => b.status)).toEqual([200, 200, 200, 200, 200, 200]);
  const after = apiMemory();
  for (const body of bodies) {
    // Both logs whole (16 MiB of base64 each), in one well-formed JSON body.
    expect(body.bytes).toBeGreaterThan(32 * MiB);
    // The files are 16.2 MiB (base64 with line ends): the last 16 MiB of each.
    expect(body.head.startsWith(`{"runId":"${runs.big}","source":"cluster","truncated":true,"stdout":"`)).toBe(true);
    expect(body.tail.endsWith('\\n"}')).toBe(true);
  }
  // The process's peak resident memory while serving 6 x 32 MiB stayed under three times what it was before.
  expect(after.peak).toBeLessThan(3 * before.rss);
});

test('beyond the per-token limit a log read answers 429 with Retry-After, and the place frees when a read ends', async () => {
  // Two reads that are not read by their client stay in flight (each holds one of the API's two
  // SSH channels to the cluster until its deadline).
  const controllers = [new AbortController(), new AbortController()];
  const held = await Promise.all(
    controllers.map((c) => fetch(`${url}/v1/runs/${runs.big}/logs?tailBytes=${16 * MiB}`, { headers: { authorization: `Bearer ${token}` }, signal: c.signal })),
  );
  expect(held.map((r) => r.status)).toEqual([200, 200]);
  const refused = await call('GET', `/v1/runs/${runs.small}/logs`);
  expect(refused.status).toBe(429);
  expect(refused.body.error).toEqual({
    code: 'ERG_RATE_LIMITED',
    message: 'this token already has 2 log reads in flight, the most at once; retry in a second (see the Retry-After header)',
  });
  expect(refused.headers.get('retry-after')).toBe('1');
  for (const c of controllers) c.abort();
  await waitFor(async () => (await call('GET', `/v1/runs/${runs.small}/logs`)).status === 200, { timeoutMs: 10_000, intervalMs: 100, what: 'the places to free' });
});
