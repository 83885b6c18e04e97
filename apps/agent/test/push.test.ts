import fs from 'node:fs';
import path from 'node:path';
import { backoffDelay } from '@erg/backoff';
import { waitFor } from '@erg/testkit';
import { createLogger } from '../src/log';
import { PUSH_RETRY_BACKOFF, Pusher } from '../src/push';
import { Spool } from '../src/spool';
import type { TelemetryBatch } from '../src/wire';
import { agentArgs, cleanupTempDirs, copyFixtures, fakeApi, readSpool, RUN_ID, spawnAgent, tempDir, writeToken, type AgentProcess } from './helpers';

// Spool + push against a local HTTP server that records requests (it stands in for erg's API in
// the agent's own tests). The agent runs as a real process (the bundle) on the GH200 hwmon and
// procfs fixtures.

type Api = Awaited<ReturnType<typeof fakeApi>>;
let api: Api;
const running: AgentProcess[] = [];
beforeEach(async () => {
  api = await fakeApi();
});
afterEach(async () => {
  for (const a of running.splice(0)) if (a.child.exitCode === null && a.child.signalCode === null) a.child.kill('SIGKILL');
  await api.close();
});
afterAll(cleanupTempDirs);

const FAST = ['--interval-ms', '50', '--batch-ms', '200'];
async function start(spool: string, extra: string[] = [], sysfs = copyFixtures('gh200')): Promise<AgentProcess> {
  const token = writeToken(spool);
  const agent = await spawnAgent(agentArgs(spool, sysfs, ['--api-url', api.url, '--token-file', token, ...FAST, ...extra]));
  running.push(agent);
  return agent;
}
async function stop(agent: AgentProcess): Promise<number | null> {
  agent.child.kill('SIGTERM');
  return (await agent.exited).code;
}
const stats = (spool: string) => JSON.parse(fs.readFileSync(path.join(spool, 'node1.stats.json'), 'utf8')) as Record<string, unknown>;
const spooledSeqs = (spool: string) => readSpool(spool).map((b) => b.seq);
const increasing = (xs: number[]) => xs.every((x, i) => i === 0 || x > (xs[i - 1] as number));
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('agent push (local API stand-in)', () => {
  test('batches arrive in seq order with the right shape, headers and one kept-alive connection', async () => {
    const spool = tempDir();
    const agent = await start(spool);
    await waitFor(() => api.acked().length >= 4, { what: '4 acknowledged batches', timeoutMs: 15_000 });
    expect(await stop(agent)).toBe(0);

    const spooled = readSpool(spool);
    const seqs = api.acked();
    expect(seqs).toEqual(range(0, spooled.length - 1)); // everything, in order, once (drained at stop)
    for (const r of api.requests) {
      expect(r.method).toBe('POST');
      expect(r.url).toBe(`/v1/runs/${RUN_ID}/telemetry`);
      expect(r.headers.authorization).toBe('Bearer run-token-abc');
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['content-encoding']).toBeUndefined();
      // The agent's clock when it sent the batch — after the batch closed, on the clock that stamped its samples.
      expect(r.headers['x-erg-sent-at']).toMatch(/^\d+\.\d{3}$/);
      expect(Number(r.headers['x-erg-sent-at'])).toBeGreaterThanOrEqual(Math.max(...r.batch.samples.flatMap((c) => c.t)));
    }
    const sentAt = api.requests.map((r) => Number(r.headers['x-erg-sent-at']));
    expect(sentAt.every((x, i) => i === 0 || x >= sentAt[i - 1]!)).toBe(true);
    expect(new Set(api.requests.map((r) => r.remotePort)).size).toBe(1);
    // What was sent is exactly what was spooled.
    expect(api.requests.map((r) => r.batch)).toEqual(spooled);
    const [first, ...rest] = spooled as [TelemetryBatch, ...TelemetryBatch[]];
    expect(first.node).toBe('node1');
    expect(first.sensors?.map((s) => s.sensor)).toEqual(['module0.power', 'grace0.power', 'cpu0.power', 'sysio0.power', 'cpu0.util', 'node0.mem_used']);
    expect(rest.every((b) => b.sensors === undefined)).toBe(true);
    for (const b of spooled) {
      for (const col of b.samples) {
        expect(col.t).toHaveLength(col.v.length);
        expect(increasing(col.t)).toBe(true);
      }
    }
    // One t per read cycle: every hwmon sensor of a batch has the same time column.
    expect(first.samples.find((c) => c.sensor === 'grace0.power')?.t).toEqual(first.samples.find((c) => c.sensor === 'module0.power')?.t);
    expect(fs.readFileSync(path.join(spool, 'node1.acked'), 'utf8')).toBe(`${spooled.length - 1}\n`);
    expect(stats(spool)).toMatchObject({ pushed: spooled.length, rejected: 0, unacked: 0, batches: spooled.length, ackedSeq: spooled.length - 1 });
  });

  test('API answering 503 for a while: nothing lost, everything arrives after it recovers, in seq order', async () => {
    const spool = tempDir();
    let failing = true;
    api.setRespond(() => (failing ? { status: 503, body: { message: 'maintenance' } } : { status: 200, body: null }));
    const agent = await start(spool);
    await waitFor(() => spooledSeqs(spool).length >= 6 && api.requests.length >= 3, { what: 'batches spooled while the API fails', timeoutMs: 15_000 });
    failing = false;
    // Backoff is 0.5, 1, 2 s …: the next retry comes within a few seconds and then the backlog drains.
    await waitFor(() => api.acked().length >= 8, { what: 'the backlog pushed after recovery', timeoutMs: 20_000 });
    expect(await stop(agent)).toBe(0);
    const acked = api.acked();
    expect(acked).toEqual(range(0, spooledSeqs(spool).length - 1));
    // Every failed attempt was for the oldest unacknowledged batch (one in flight, seq order kept).
    expect(api.requests.filter((r) => r.status === 503).every((r) => r.batch.seq === 0)).toBe(true);
    expect(stats(spool)).toMatchObject({ unacked: 0, rejected: 0 });
    expect((stats(spool).retries as number) >= 3).toBe(true);
  });

  test('400: the server’s message is logged, the batch is counted rejected and never resent', async () => {
    const spool = tempDir();
    api.setRespond((b) => (b.seq === 2 ? { status: 400, body: { message: 'samples[0].v: expected number' } } : { status: 200, body: null }));
    const agent = await start(spool);
    await waitFor(() => api.acked().length >= 5, { what: 'batches after the rejected one', timeoutMs: 15_000 });
    expect(await stop(agent)).toBe(0);
    expect(api.requests.filter((r) => r.batch.seq === 2)).toHaveLength(1);
    expect(api.requests.map((r) => r.batch.seq)).toEqual(range(0, spooledSeqs(spool).length - 1));
    expect(agent.stderr()).toContain('samples[0].v: expected number');
    expect(stats(spool)).toMatchObject({ rejected: 1, unacked: 0 });
    // Settled (acknowledged or rejected) through the end: a restart would not resend seq 2.
    expect(Number(fs.readFileSync(path.join(spool, 'node1.acked'), 'utf8'))).toBe(spooledSeqs(spool).length - 1);
  });

  test('401/403/404: pushing stops for the rest of the run; sampling and spooling go on', async () => {
    const spool = tempDir();
    api.setRespond(() => ({ status: 401, body: { message: 'token expired' } }));
    const agent = await start(spool);
    await waitFor(() => api.requests.length >= 1, { what: 'the first request' });
    const spooledThen = spooledSeqs(spool).length;
    await waitFor(() => spooledSeqs(spool).length >= spooledThen + 4, { what: 'spooling to go on', timeoutMs: 15_000 });
    expect(await stop(agent)).toBe(0);
    expect(api.requests).toHaveLength(1);
    expect(agent.stderr()).toContain('token expired');
    expect(stats(spool)).toMatchObject({ pushStoppedByStatus: 401, pushed: 0 });
    expect(fs.existsSync(path.join(spool, 'node1.acked'))).toBe(false);
  });

  test('restart with an existing spool: seq continues after the last line, unacknowledged batches are re-sent', async () => {
    const spool = tempDir();
    const sysfs = copyFixtures('gh200');
    // First run: the API acknowledges seq 0 and 1, then fails; the agent is killed -9.
    api.setRespond((b) => (b.seq <= 1 ? { status: 200, body: null } : { status: 503, body: {} }));
    const first = await start(spool, [], sysfs);
    await waitFor(() => spooledSeqs(spool).length >= 5 && fs.existsSync(path.join(spool, 'node1.acked')), { what: 'spool and .acked', timeoutMs: 15_000 });
    first.child.kill('SIGKILL');
    await first.exited;
    const before = spooledSeqs(spool);
    const ackedBefore = Number(fs.readFileSync(path.join(spool, 'node1.acked'), 'utf8'));
    expect(ackedBefore).toBe(1);
    const requestsBefore = api.requests.length;

    api.setRespond(() => ({ status: 200, body: null }));
    const second = await start(spool, [], sysfs);
    const last = before[before.length - 1] as number;
    await waitFor(() => api.acked().includes(last + 3), { what: 'new batches after the restart', timeoutMs: 15_000 });
    expect(await stop(second)).toBe(0);

    const all = readSpool(spool);
    expect(all.map((b) => b.seq)).toEqual(range(0, all.length - 1)); // no seq reused, none skipped
    const resent = api.requests.slice(requestsBefore).map((r) => r.batch.seq);
    expect(resent).toEqual(range(2, all.length - 1)); // 2..last re-sent in order, then the new ones
    // The restarted agent's first batch carries the sensor set again.
    expect(all[last + 1]?.sensors).toBeDefined();
    expect(all[last + 2]?.sensors).toBeUndefined();
    expect(stats(spool)).toMatchObject({ firstSeq: last + 1, unacked: 0 });
    const meta = JSON.parse(fs.readFileSync(path.join(spool, 'node1.meta.json'), 'utf8')) as { resumedAtSeq: number };
    expect(meta.resumedAtSeq).toBe(last + 1);
  });

  test('SIGTERM drains: a last sample, then unacknowledged batches pushed within --drain-ms', async () => {
    const spool = tempDir();
    let down = true;
    api.setRespond(() => (down ? { status: 503, body: {} } : { status: 200, body: null }));
    const agent = await start(spool, ['--drain-ms', '5000']);
    await waitFor(() => spooledSeqs(spool).length >= 4, { what: 'a backlog', timeoutMs: 15_000 });
    down = false;
    const stoppedAt = Date.now();
    agent.child.kill('SIGTERM');
    expect((await agent.exited).code).toBe(0);
    const all = readSpool(spool);
    expect(api.acked()).toEqual(range(0, all.length - 1));
    const lastT = Math.max(...(all[all.length - 1]?.samples.flatMap((c) => c.t) ?? []));
    expect(lastT).toBeGreaterThanOrEqual(stoppedAt - 20); // the last sample was taken at stop
    const s = stats(spool);
    expect(s).toMatchObject({ unacked: 0, pushed: all.length, ackedSeq: all.length - 1 });
    for (const key of ['samples', 'batches', 'pushed', 'rejected', 'cachedRepeats', 'cpuUserMs', 'cpuSystemMs', 'maxRssBytes']) expect(s).toHaveProperty(key);
  });

  test('SIGUSR2 (what job.sh sends) with the API hanging: gives up after --drain-ms, exits 0, the spool keeps everything', async () => {
    const spool = tempDir();
    api.setRespond(() => 'hang');
    const agent = await start(spool, ['--drain-ms', '600']);
    await waitFor(() => spooledSeqs(spool).length >= 3, { what: 'batches', timeoutMs: 15_000 });
    const t0 = Date.now();
    agent.child.kill('SIGUSR2');
    expect((await agent.exited).code).toBe(0);
    expect(Date.now() - t0).toBeLessThan(600 + 2000);
    expect(stats(spool).unacked).toBe(spooledSeqs(spool).length);
    expect(api.requests.every((r) => r.batch.seq === 0)).toBe(true);
  });

  test('spool only (no --api-url): kill -9 mid-run loses nothing that was written; a restart continues', async () => {
    const spool = tempDir();
    const sysfs = copyFixtures('gh200');
    const args = agentArgs(spool, sysfs, ['--interval-ms', '20', '--batch-ms', '60']);
    const first = await spawnAgent(args);
    running.push(first);
    await waitFor(() => fs.existsSync(path.join(spool, 'node1.ready')), { what: '.ready' });
    await waitFor(() => spooledSeqs(spool).length >= 10, { what: '10 batches', timeoutMs: 15_000 });
    first.child.kill('SIGKILL');
    await first.exited;
    const text = fs.readFileSync(path.join(spool, 'node1.spool'), 'utf8');
    expect(text.endsWith('\n')).toBe(true); // each batch is one write: no torn line
    const batches = readSpool(spool);
    expect(batches.map((b) => b.seq)).toEqual(range(0, batches.length - 1));
    expect(fs.existsSync(path.join(spool, 'node1.stats.json'))).toBe(false);

    const second = await spawnAgent(args);
    running.push(second);
    await waitFor(() => spooledSeqs(spool).length >= batches.length + 3, { what: 'more batches', timeoutMs: 15_000 });
    second.child.kill('SIGINT'); // SIGINT stops it like SIGTERM
    expect((await second.exited).code).toBe(0);
    expect(fs.existsSync(path.join(spool, 'node1.stats.json'))).toBe(true);
    const all = readSpool(spool);
    expect(all.map((b) => b.seq)).toEqual(range(0, all.length - 1));
    expect(all.slice(0, batches.length)).toEqual(batches);
    expect(api.requests).toHaveLength(0);
  });
});

describe('Pusher (in process)', () => {
  test('retries wait 0.5 s doubling to 30 s, without jitter', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 50].map((failures) => backoffDelay(failures, PUSH_RETRY_BACKOFF, () => 0))).toEqual([500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000]);
  });

  test('a body over 64 KiB is sent gzip-compressed with Content-Encoding: gzip', async () => {
    const dir = tempDir();
    const spool = new Spool(path.join(dir, 'n.spool'), path.join(dir, 'n.acked'), createLogger('silent'));
    const big = JSON.stringify({ node: 'n', seq: 0, samples: [{ sensor: 'gpu0.power', t: Array.from({ length: 8000 }, (_, i) => 1764500000000 + i * 10.5), v: Array.from({ length: 8000 }, (_, i) => 300 + i / 7) }] });
    const small = JSON.stringify({ node: 'n', seq: 1, samples: [{ sensor: 'gpu0.power', t: [1], v: [2] }] });
    expect(Buffer.byteLength(big)).toBeGreaterThan(64 * 1024);
    let settled = -1;
    const pusher = new Pusher({ apiUrl: `${api.url}/`, runId: RUN_ID, token: 't', spool, log: createLogger('silent'), onSettled: (s) => (settled = s) });
    pusher.enqueue(spool.append(0, big));
    pusher.enqueue(spool.append(1, small));
    await waitFor(() => settled === 1, { what: 'both batches acknowledged' });
    expect(api.requests[0]?.headers['content-encoding']).toBe('gzip');
    expect(api.requests[0]?.rawLength).toBeLessThan(Buffer.byteLength(big) / 2);
    expect(api.requests[0]?.batch).toEqual(JSON.parse(big));
    expect(api.requests[1]?.headers['content-encoding']).toBeUndefined();
    expect(api.requests[0]?.url).toBe(`/v1/runs/${RUN_ID}/telemetry`); // a trailing slash on --api-url is fine
    pusher.close();
    spool.close();
  });

  test('a request with no answer times out and is retried', async () => {
    const dir = tempDir();
    const spool = new Spool(path.join(dir, 'n.spool'), path.join(dir, 'n.acked'), createLogger('silent'));
    api.setRespond((_b, n) => (n === 0 ? 'hang' : { status: 200, body: null }));
    let settled = -1;
    const pusher = new Pusher({ apiUrl: api.url, runId: RUN_ID, token: 't', spool, log: createLogger('silent'), onSettled: (s) => (settled = s), requestTimeoutMs: 300 });
    pusher.enqueue(spool.append(0, JSON.stringify({ node: 'n', seq: 0, samples: [] })));
    await waitFor(() => settled === 0, { what: 'the retry to succeed', timeoutMs: 5000 });
    expect(api.requests.map((r) => r.batch.seq)).toEqual([0, 0]);
    expect(pusher.stats).toMatchObject({ retries: 1, pushed: 1 });
    pusher.close();
    spool.close();
  });
});
