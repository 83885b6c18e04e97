import { generateKeyPairSync } from 'node:crypto';
import { claimRunsForSubmission, findClusterByName, markRunsQueued, recordClusterContact, recordSlurmProgress } from '@erg/db';
import { setRunWindows } from '@erg/db/testing';
import { startTestApi, type TestApi } from './helpers';

const PRIVATE_KEY = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const cluster = (name: string, defaultPartition?: string) => ({
  name, host: '127.0.0.1', port: 2222, user: 'root', privateKey: PRIVATE_KEY, hostKeySha256: 'SHA256:' + 'A'.repeat(43),
  workDir: '/var/lib/erg-test', ...(defaultPartition ? { defaultPartition } : {}),
});
const spec = (name: string, clusterName: string, resources: Record<string, unknown> = {}) => ({
  name, cluster: clusterName, repetitions: 2, parameters: { n: [1, 2] }, resources: { time: '00:10:00', ...resources }, run: 'echo {{n}}',
});

describe('GET /v1/queue, campaign owners, run body fields (Postgres + Redis)', () => {
  let t: TestApi;
  let alice: string;
  let a: { id: string; runs: { id: string }[] };
  let b: { id: string; runs: { id: string }[] };
  let running: string;
  /** The running run's configuration: the first in campaign a's run order (its seed's). */
  let runningKey: { configurationKey: string; parameters: Record<string, unknown> };
  let queued: string;

  async function call(method: string, url: string, body?: unknown, token = t.token) {
    const res = await t.app.inject({
      method: method as 'GET', url, headers: { authorization: `Bearer ${token}` }, ...(body === undefined ? {} : { payload: body as object }),
    });
    return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : null };
  }
  const queue = async (query = '') => (await call('GET', `/v1/queue${query}`)).body;

  beforeAll(async () => {
    t = await startTestApi();
    // Alice (a researcher) creates b with a token named after nobody: owners are users, not token names.
    expect((await call('POST', '/v1/users', { name: 'alice' })).status).toBe(201);
    expect((await call('PUT', '/v1/projects/default/members/alice', { role: 'researcher' })).status).toBe(200);
    alice = (await call('POST', '/v1/tokens', { name: 'laptop', user: 'alice' })).body.token;
    expect((await call('POST', '/v1/clusters', cluster('alpha', 'gh200'))).status).toBe(201);
    expect((await call('POST', '/v1/clusters', cluster('beta'))).status).toBe(201);
    a = (await call('POST', '/v1/campaigns', spec('a', 'alpha'))).body;
    b = (await call('POST', '/v1/campaigns', spec('b', 'beta', { partition: 'short', nodes: 2 }), alice)).body;
    // Campaign a: 1 running, 1 queued, 1 submitting, 1 pending (claimed in position order).
    const alpha = (await findClusterByName(t.db, 'alpha'))!;
    const claimed = await claimRunsForSubmission(t.db, alpha.id, 3);
    [running, queued] = [claimed[0]!.id, claimed[1]!.id];
    runningKey = { configurationKey: claimed[0]!.configurationKey, parameters: claimed[0]!.parameters };
    await markRunsQueued(t.db, [{ runId: running, slurmJobId: '101' }, { runId: queued, slurmJobId: '102' }]);
    await recordSlurmProgress(t.db, [{ runId: running, state: 'running', slurmState: 'RUNNING', reason: null, startedAt: new Date(), nodeList: 'gh-[01-02]' }]);
  });
  afterAll(async () => {
    await t.close();
  });

  test('campaigns carry their owner, the user who created them, and the user and the token apart', async () => {
    expect((await call('GET', `/v1/campaigns/${a.id}`)).body.owner).toBe('admin');
    const detail = (await call('GET', `/v1/campaigns/${b.id}`)).body;
    expect(detail.owner).toBe('alice');
    expect(detail.createdBy).toEqual({ user: { id: expect.any(String), name: 'alice' }, token: { id: expect.any(String), name: 'laptop' }, suite: null });
    const list = (await call('GET', '/v1/campaigns')).body.items;
    expect(list.map((c: { owner: string }) => c.owner)).toEqual(['alice', 'admin']);
    expect(list[1].createdBy).toMatchObject({ user: { name: 'admin' }, token: { name: 'test' }, suite: null });
  });

  test('lists every unfinished run: running first, then queued/submitting, then pending, oldest first', async () => {
    const q = await queue();
    expect(q.total).toBe(8);
    expect(q.truncated).toBe(false);
    expect(q.runs.map((r: { state: string; campaignName: string }) => `${r.state}:${r.campaignName}`)).toEqual([
      'running:a', 'queued:a', 'submitting:a', 'pending:a', 'pending:b', 'pending:b', 'pending:b', 'pending:b',
    ]);
    const top = q.runs[0];
    expect(top).toMatchObject({
      id: running, campaignId: a.id, owner: 'admin', cluster: 'alpha', state: 'running', slurmJobId: '101', partition: 'gh200', nodes: 1,
      nodeList: 'gh-[01-02]', ...runningKey, repetition: 1, reason: null, powerW: null,
    });
    expect(Date.parse(top.startedAt)).not.toBeNaN();
    expect(Date.parse(top.submittedAt)).not.toBeNaN();
    expect(q.runs[4]).toMatchObject({ owner: 'alice', cluster: 'beta', partition: 'short', nodes: 2, submittedAt: null, startedAt: null });
  });

  test('per cluster: every run of its unfinished campaigns by state', async () => {
    const q = await queue();
    expect(q.clusters).toEqual([
      { name: 'alpha', runCounts: { running: 1, queued: 1, submitting: 1, pending: 1 }, lastError: null, lastContactAt: null },
      { name: 'beta', runCounts: { pending: 4 }, lastError: null, lastContactAt: null },
    ]);
    expect((await queue('?cluster=beta')).clusters.map((c: { name: string }) => c.name)).toEqual(['beta']);
  });

  test('filters by cluster, campaign, state (repeated or comma-separated) and owner; limit truncates', async () => {
    const ids = (q: { runs: { id: string }[] }) => q.runs.map((r) => r.id);
    expect((await queue('?cluster=beta')).total).toBe(4);
    expect((await queue(`?campaign=${a.id}`)).total).toBe(4);
    expect(ids(await queue('?state=running,queued'))).toEqual([running, queued]);
    expect(ids(await queue('?state=running&state=queued'))).toEqual([running, queued]);
    expect((await queue('?owner=alice')).runs.every((r: { campaignId: string }) => r.campaignId === b.id)).toBe(true);
    expect((await queue('?owner=alice')).total).toBe(4);
    expect((await queue('?owner=nobody')).total).toBe(0);
    // Token names are not owners.
    expect((await queue('?owner=laptop')).total).toBe(0);
    const page = await queue('?limit=2');
    expect(page).toMatchObject({ total: 8, truncated: true });
    expect(ids(page)).toEqual([running, queued]);
    const bad = await call('GET', '/v1/queue?state=completed');
    expect(bad.status).toBe(400);
    expect(bad.body.error.issues[0].path).toMatch(/^state/);
    expect((await call('GET', '/v1/queue?limit=5001')).status).toBe(400);
  });

  test('a pending run of a failing cluster says so; only the project\'s maintainers and admins read why', async () => {
    const beta = (await findClusterByName(t.db, 'beta'))!;
    const why = 'cannot reach 127.0.0.1:6379: connection closed during handshake';
    const hidden = 'the cluster cannot be reached; a maintainer can see why';
    const tokens: Record<string, string> = { admin: t.token };
    for (const role of ['viewer', 'researcher', 'maintainer']) {
      expect((await call('POST', '/v1/users', { name: `q-${role}` })).status).toBe(201);
      expect((await call('PUT', `/v1/projects/default/members/q-${role}`, { role })).status).toBe(200);
      tokens[role] = (await call('POST', '/v1/tokens', { name: `q-${role}`, user: `q-${role}` })).body.token;
    }
    await recordClusterContact(t.db, beta.id, why);
    try {
      for (const [role, token] of Object.entries(tokens)) {
        const shown = role === 'admin' || role === 'maintainer' ? why : hidden;
        const q = (await call('GET', '/v1/queue?cluster=beta&limit=1', undefined, token)).body;
        expect({ role, reason: q.runs[0].reason, lastError: q.clusters[0].lastError }).toEqual({ role, reason: `waiting for cluster "beta": ${shown}`, lastError: shown });
        expect({ role, lastError: (await call('GET', '/v1/clusters/beta', undefined, token)).body.lastError }).toEqual({ role, lastError: shown });
        const listed = (await call('GET', '/v1/clusters', undefined, token)).body.items.find((c: { name: string }) => c.name === 'beta');
        expect({ role, lastError: listed.lastError }).toEqual({ role, lastError: shown });
        expect({ role, reason: (await call('GET', `/v1/runs/${b.runs[0]!.id}`, undefined, token)).body.reason }).toEqual({ role, reason: `waiting for cluster "beta": ${shown}` });
        const page = (await call('GET', `/v1/campaigns/${b.id}/runs?limit=1`, undefined, token)).body;
        expect({ role, reason: page.items[0].reason }).toEqual({ role, reason: `waiting for cluster "beta": ${shown}` });
      }
    } finally {
      await recordClusterContact(t.db, beta.id, null);
    }
  });

  test('powerW: the last sample of each counted power sensor within 60 s, summed over nodes', async () => {
    const now = Date.now();
    const post = async (runId: string, node: string, seq: number, samples: unknown[]) =>
      expect((await call('POST', `/v1/runs/${runId}/telemetry`, { node, seq, samples })).status).toBe(200);
    await post(running, 'n1', 0, [
      { sensor: 'gpu0.power', t: [now - 3000, now - 2000], v: [250, 300] },
      { sensor: 'cpu0.power', t: now - 2000, v: 100 },
      { sensor: 'node0.power', t: now - 2000, v: 900 }, // another scope: never added
      { sensor: 'gpu0.util', t: now - 2000, v: 90 },
    ]);
    await post(running, 'n2', 0, [{ sensor: 'gpu0.power', t: now - 1000, v: 200 }]);
    // Older than 60 s: not "now".
    await post(queued, 'n1', 0, [{ sensor: 'gpu0.power', t: now - 120_000, v: 500 }]);
    const q = await queue('?state=running,queued');
    expect(q.runs.map((r: { powerW: number | null }) => r.powerW)).toEqual([600, null]);
  });

  test('GET /v1/runs/:id has the workload and idle windows, the partition and the campaign name', async () => {
    const start = 1_764_480_000_123_456_789n;
    await setRunWindows(t.db, running, { idleStartNs: start - 5_000_000_000n, idleEndNs: start, workloadStartNs: start, workloadEndNs: start + 61_500_000_000n });
    const run = (await call('GET', `/v1/runs/${running}`)).body;
    expect(run).toMatchObject({
      campaignName: 'a', partition: 'gh200', timeS: 61.5,
      idleStart: '2025-11-30T05:19:55.123Z', idleEnd: '2025-11-30T05:20:00.123Z',
      workloadStart: '2025-11-30T05:20:00.123Z', workloadEnd: '2025-11-30T05:21:01.623Z',
    });
    const pending = (await call('GET', `/v1/runs/${b.runs[0]!.id}`)).body;
    expect(pending).toMatchObject({ campaignName: 'b', partition: 'short', workloadStart: null, workloadEnd: null, idleStart: null, idleEnd: null });
  });
});
