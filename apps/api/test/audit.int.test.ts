// The audit log: one row per mutating request (refused ones included), read with GET /v1/audit.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createApiToken, createUser, findClusterByName, listAudit } from '@erg/db';
import { waitFor } from '@erg/testkit';
import { startTestApi, type TestApi } from './helpers';

const PRIVATE_KEY = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const CLUSTER = {
  name: 'alpha', host: '127.0.0.1', port: 2222, user: 'root', privateKey: PRIVATE_KEY,
  hostKeySha256: 'SHA256:' + 'A'.repeat(43), workDir: '/var/lib/erg-test',
};
const SPEC = { name: 'sweep', cluster: 'alpha', parameters: { n: [1, 2] }, run: 'echo {{n}}' };

describe('audit log', () => {
  let t: TestApi;
  let tokenId: string;
  let token: string;

  async function call(method: string, url: string, body?: unknown, who = token) {
    const res = await t.app.inject({
      method: method as 'GET', url,
      headers: { authorization: `Bearer ${who}`, 'user-agent': 'audit-test/1.0', ...(typeof body === 'string' ? { 'content-type': 'application/yaml' } : {}) },
      ...(body === undefined ? {} : { payload: body as object }),
    });
    return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : null };
  }
  /** Every audit row, oldest first. */
  const rows = async () => (await listAudit(t.db, { limit: 10_000 })).items.reverse();
  /** The audit row is written after the response: wait until there are `n`. */
  const waitForRows = (n: number) => waitFor(async () => ((await rows()).length >= n ? rows() : undefined), { timeoutMs: 10_000, what: `${n} audit rows` });

  beforeAll(async () => {
    t = await startTestApi();
    ({ id: tokenId, token } = await createApiToken(t.db, 'auditor'));
  });
  afterAll(async () => {
    await t.close();
  });

  test('create, update, cancel and trigger are logged with actor, resource, ip, user agent and status; reads and telemetry are not', async () => {
    expect((await call('POST', '/v1/clusters', CLUSTER)).status).toBe(201);
    expect((await call('PUT', '/v1/clusters/alpha', { ...CLUSTER, name: undefined, port: 2223 })).status).toBe(200);
    const refused = await call('POST', '/v1/campaigns', { ...SPEC, parameters: { n: [] } });
    expect(refused.status).toBe(400);
    const campaign = await call('POST', '/v1/campaigns', SPEC);
    expect(campaign.status).toBe(201);
    expect((await call('POST', `/v1/campaigns/${campaign.body.id}/cancel`)).status).toBe(202);
    const suite = ['name: nightly', 'campaign:', '  name: nightly', '  cluster: alpha', '  parameters: { n: [1] }', '  run: echo {{n}}'].join('\n');
    expect((await call('POST', '/v1/suites', suite)).status).toBe(201);
    expect((await call('POST', '/v1/suites/nightly/trigger')).status).toBe(201);
    expect((await call('POST', '/v1/suites/nope/trigger')).status).toBe(404);
    // Not audited: reads and telemetry ingest.
    await call('GET', '/v1/campaigns');
    await call('GET', `/v1/campaigns/${campaign.body.id}`);
    await call('POST', `/v1/runs/${campaign.body.runs[0].id}/telemetry`, { node: 'n1', seq: 0, samples: [] });

    const logged = await waitForRows(8);
    expect(logged.map((r) => [r.action, r.resourceType, r.resourceId, r.statusCode])).toEqual([
      ['cluster.create', 'cluster', 'alpha', 201],
      ['cluster.update', 'cluster', 'alpha', 200],
      ['campaign.create', 'campaign', null, 400],
      ['campaign.create', 'campaign', campaign.body.id, 201],
      ['campaign.cancel', 'campaign', campaign.body.id, 202],
      ['suite.create', 'suite', 'nightly', 201],
      ['suite.trigger', 'suite', 'nightly', 201],
      ['suite.trigger', 'suite', 'nope', 404],
    ]);
    for (const r of logged) {
      expect(r).toMatchObject({ actorTokenId: tokenId, actorName: 'auditor', ip: '127.0.0.1', userAgent: 'audit-test/1.0' });
      expect(r.requestId).toBeTruthy();
    }
    // Resources of a project carry it, so a project's maintainers can read their entries.
    const cluster = (await findClusterByName(t.db, 'alpha'))!;
    expect(logged[0]!.projectId).toBe(cluster.projectId);
    expect(logged[4]!.projectId).toBe(cluster.projectId);
    // Nothing more arrives for the reads and the telemetry batch (a later mutation is the marker).
    await call('DELETE', '/v1/suites/nope');
    const after = await waitForRows(9);
    expect(after).toHaveLength(9);
    expect(after[8]).toMatchObject({ action: 'suite.delete', statusCode: 404 });
  });

  test('GET /v1/audit: newest first, filters, and an opaque cursor through every page', async () => {
    const all = await call('GET', '/v1/audit?limit=500');
    expect(all.status).toBe(200);
    const ids = all.body.items.map((e: { id: string }) => BigInt(e.id));
    expect(ids.length).toBeGreaterThanOrEqual(9);
    expect([...ids].sort((a, b) => (a < b ? 1 : -1))).toEqual(ids);
    expect(all.body.next).toBeNull();

    const creates = await call('GET', '/v1/audit?action=campaign.create');
    expect(creates.body.items.map((e: { statusCode: number }) => e.statusCode)).toEqual([201, 400]);
    expect((await call('GET', '/v1/audit?resource=cluster:alpha')).body.items.map((e: { action: string }) => e.action)).toEqual(['cluster.update', 'cluster.create']);
    expect((await call('GET', '/v1/audit?resource=suite')).body.items).toHaveLength(4);
    expect((await call('GET', '/v1/audit?actor=auditor')).body.items).toHaveLength(ids.length);
    expect((await call('GET', `/v1/audit?actor=${tokenId}`)).body.items).toHaveLength(ids.length);
    expect((await call('GET', '/v1/audit?actor=someone-else')).body.items).toEqual([]);
    const first = all.body.items[all.body.items.length - 1];
    expect((await call('GET', `/v1/audit?until=${encodeURIComponent(first.at)}`)).body.items).toEqual(
      all.body.items.filter((e: { at: string }) => e.at < first.at),
    );
    expect((await call('GET', `/v1/audit?since=${new Date(Date.now() + 60_000).toISOString()}`)).body.items).toEqual([]);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: { body: { items: { id: string }[]; next: string | null } } = await call('GET', `/v1/audit?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...page.body.items.map((e) => e.id));
      cursor = page.body.next;
      pages++;
    } while (cursor && pages < 50);
    expect(seen).toEqual(all.body.items.map((e: { id: string }) => e.id));

    const bad = await call('GET', '/v1/audit?cursor=bm9wZQ');
    expect(bad.status).toBe(400);
    expect(bad.body.error.issues[0].path).toBe('cursor');
    expect((await call('GET', '/v1/audit?action=Not%20An%20Action')).status).toBe(400);
  });

  test('only admins and project maintainers read it', async () => {
    const user = await createUser(t.db, { name: `nobody-${randomUUID().slice(0, 8)}` });
    const plain = (await createApiToken(t.db, 'plain', { userId: user.id })).token;
    const res = await call('GET', '/v1/audit', undefined, plain);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('ERG_FORBIDDEN');
  });
});
