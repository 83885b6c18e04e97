import { generateKeyPairSync } from 'node:crypto';
import { findClusterByName, listCampaignSummaries, recordClusterCapabilities } from '@erg/db';
import { MAX_DESIGN_SEED } from '@erg/spec';
import { campaignRunOrder } from '@erg/sweep';
import { startTestApi, type TestApi } from './helpers';

// A syntactically valid private key that is only ever stored, never used to connect here.
const PRIVATE_KEY = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const KEY_MARKER = PRIVATE_KEY.split('\n')[1]!; // a line of the key material, to scan responses for
const CLUSTER = {
  name: 'alpha', host: '127.0.0.1', port: 2222, user: 'root', privateKey: PRIVATE_KEY,
  hostKeySha256: 'SHA256:' + 'A'.repeat(43), defaultPartition: 'gh200', workDir: '/var/lib/erg-test',
};
const SPEC = {
  name: 'sweep', cluster: 'alpha', repetitions: 2,
  parameters: { offload: ['none', 'cpu'], sp: [1, 2, 4] },
  exclude: [{ offload: 'none', sp: 4 }],
  resources: { nodes: 1, gpusPerNode: 4, time: '00:10:00' },
  run: 'echo offload={{offload}} sp={{sp}}',
};

describe('REST API (Postgres + Redis)', () => {
  let t: TestApi;
  const bodies: string[] = [];

  async function call(method: string, url: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await t.app.inject({
      method: method as 'GET',
      url,
      headers: { authorization: `Bearer ${t.token}`, ...headers },
      ...(body === undefined ? {} : typeof body === 'string' ? { payload: body } : { payload: body as object }),
    });
    bodies.push(res.body);
    return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : null };
  }

  beforeAll(async () => {
    t = await startTestApi({ ERG_MAX_RUNS: '100' });
  });
  afterAll(async () => {
    // The private key must not have left the API in any response of this file.
    expect(bodies.filter((b) => b.includes(KEY_MARKER))).toEqual([]);
    await t.close();
  });

  test('health needs no token; readiness checks Postgres and Redis', async () => {
    expect((await t.app.inject({ url: '/healthz' })).json()).toEqual({ ok: true });
    const ready = await t.app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ ok: true, postgres: 'ok', redis: 'ok' });
  });

  test('every /v1 route refuses a missing or wrong token with 401', async () => {
    for (const headers of [{}, { authorization: 'Bearer erg_not-a-real-token' }, { authorization: 'Basic abc' }]) {
      const res = await t.app.inject({ url: '/v1/campaigns', headers });
      expect(res.statusCode).toBe(401);
      expect(res.json().error.code).toBe('ERG_UNAUTHORIZED');
    }
    const post = await t.app.inject({ method: 'POST', url: '/v1/clusters', payload: CLUSTER });
    expect(post.statusCode).toBe(401);
    // The scheme name is case-insensitive (RFC 7235); the token is not.
    expect((await t.app.inject({ url: '/v1/campaigns', headers: { authorization: `bearer ${t.token}` } })).statusCode).toBe(200);
  });

  test('the OpenAPI document and docs UI are served without a token', async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json();
    expect(doc.openapi).toMatch(/^3\./);
    for (const p of ['/v1/clusters', '/v1/clusters/{name}', '/v1/campaigns', '/v1/campaigns/{id}', '/v1/campaigns/{id}/runs',
      '/v1/campaigns/{id}/cancel', '/v1/runs/{id}', '/v1/runs/{id}/logs']) {
      expect(Object.keys(doc.paths)).toContain(p);
    }
    expect(doc.components.securitySchemes.bearer).toEqual({ type: 'http', scheme: 'bearer' });
    const ui = await t.app.inject({ url: '/docs/' });
    expect(ui.statusCode).toBe(200);
    expect(ui.headers['content-type']).toMatch(/html/);
  });

  test('clusters: create, list, show; the private key is never returned', async () => {
    const created = await call('POST', '/v1/clusters', CLUSTER);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'alpha', host: '127.0.0.1', port: 2222, user: 'root', workDir: '/var/lib/erg-test' });
    expect(created.body).not.toHaveProperty('privateKey');
    expect((await call('GET', '/v1/clusters')).body.items.map((c: { name: string }) => c.name)).toEqual(['alpha']);
    expect((await call('GET', '/v1/clusters/alpha')).body.hostKeySha256).toBe(CLUSTER.hostKeySha256);
    expect((await call('GET', '/v1/clusters/nope')).status).toBe(404);
    expect((await call('POST', '/v1/clusters', CLUSTER)).status).toBe(409);
  });

  test('clusters: a work dir the job renderer would refuse is refused at registration', async () => {
    for (const workDir of ['/', '/scratch/', '/a//b', '/a/../b', 'relative/dir', '/with space']) {
      const res = await call('PUT', '/v1/clusters/beta', { ...CLUSTER, name: undefined, workDir });
      expect(res.status).toBe(400);
      expect(res.body.error.issues.map((i: { path: string }) => i.path)).toEqual(['workDir']);
    }
  });

  test('clusters: invalid fields are named in a 400', async () => {
    const res = await call('POST', '/v1/clusters', { ...CLUSTER, name: 'Bad Name', port: 70000, hostKeySha256: 'md5:xx', privateKey: 'hello' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('ERG_VALIDATION');
    expect(res.body.error.issues.map((i: { path: string }) => i.path).sort()).toEqual(['hostKeySha256', 'name', 'port', 'privateKey']);
  });

  test('campaigns: a JSON spec creates configurations and runs and wakes the scheduler', async () => {
    const res = await call('POST', '/v1/campaigns', SPEC);
    expect(res.status).toBe(201);
    expect(res.body.configurations).toHaveLength(5); // 2 × 3 minus the excluded one
    expect(res.body.runs).toHaveLength(10);
    expect(res.body).toMatchObject({ state: 'pending', cluster: 'alpha', runCounts: { pending: 10 }, totalRuns: 10 });
    expect(res.body.configurations.map((c: { key: string }) => c.key)).toContain('offload=cpu;sp=4');
    const cluster = (await findClusterByName(t.db, 'alpha'))!;
    const job = await t.queue.getJob(`cycle-${cluster.id}`);
    expect(job?.data).toMatchObject({ clusterId: cluster.id });

    const detail = await call('GET', `/v1/campaigns/${res.body.id}`);
    expect(detail.body.spec).toMatchObject({ name: 'sweep', repetitions: 2 });
    const runs = await call('GET', `/v1/campaigns/${res.body.id}/runs`);
    expect(runs.body.total).toBe(10);
    // The first run is repetition 1 of whichever configuration the campaign's seed put first.
    const run = await call('GET', `/v1/runs/${runs.body.items[0].id}`);
    expect(run.body).toMatchObject({ state: 'pending', repetition: 1, slurmJobId: null, campaignId: res.body.id });
    expect(run.body.parameters).toEqual(res.body.configurations.find((c: { key: string }) => c.key === runs.body.items[0].configurationKey).parameters);
  });

  test('campaigns: the run order and its seed — drawn when the spec gives none, kept when it does — stored with the spec and shown', async () => {
    const drawn = await call('POST', '/v1/campaigns', SPEC);
    expect(drawn.status).toBe(201);
    const { seed } = drawn.body.design;
    expect(drawn.body.design).toEqual({ order: 'randomized-blocks', seed: expect.any(Number) });
    expect(Number.isInteger(seed) && seed >= 0 && seed <= MAX_DESIGN_SEED).toBe(true);
    const detail = await call('GET', `/v1/campaigns/${drawn.body.id}`);
    expect(detail.body.design).toEqual({ order: 'randomized-blocks', seed });
    expect(detail.body.spec.design).toMatchObject({ order: 'randomized-blocks', seed });
    // The runs are in that seed's order: blocks of repetition 1, then 2, each shuffled by it.
    const keys = drawn.body.configurations.map((c: { key: string }) => c.key);
    const expected = [...campaignRunOrder(keys.length, 2, { order: 'randomized-blocks', seed })].map((r) => [keys[r.configuration], r.repetition]);
    const runs = await call('GET', `/v1/campaigns/${drawn.body.id}/runs`);
    expect(runs.body.items.map((r: { configurationKey: string; repetition: number }) => [r.configurationKey, r.repetition])).toEqual(expected);

    const given = await call('POST', '/v1/campaigns', { ...SPEC, design: { seed: 1234 } });
    expect(given.body.design).toEqual({ order: 'randomized-blocks', seed: 1234 });
    expect((await call('GET', `/v1/campaigns/${given.body.id}`)).body.spec.design.seed).toBe(1234);
    const major = await call('POST', '/v1/campaigns', { ...SPEC, design: { order: 'configuration-major' } });
    expect(major.body.design).toEqual({ order: 'configuration-major', seed: null });
    const page = await call('GET', '/v1/campaigns?limit=10');
    expect(page.body.items.find((c: { id: string }) => c.id === given.body.id).design).toEqual({ order: 'randomized-blocks', seed: 1234 });
  });

  test('campaigns: design.nodes over runs of several nodes is a 400 naming design.nodes (design_conflict)', async () => {
    const res = await call('POST', '/v1/campaigns', { ...SPEC, resources: { ...SPEC.resources, nodes: 2 }, design: { nodes: ['gh-01', 'gh-02'] } });
    expect(res.status).toBe(400);
    expect(res.body.error.issues).toEqual([
      expect.objectContaining({ path: 'design.nodes', code: 'design_conflict', message: expect.stringContaining('set resources.nodes to 1') }),
    ]);
  });

  test('campaigns: YAML bodies are accepted, and YAML syntax errors point at the line', async () => {
    const yaml = 'name: y\ncluster: alpha\nparameters:\n  n: [1, 2]\nrun: echo {{n}}\n';
    const ok = await call('POST', '/v1/campaigns', yaml, { 'content-type': 'application/yaml' });
    expect(ok.status).toBe(201);
    expect(ok.body.runs).toHaveLength(2);
    const bad = await call('POST', '/v1/campaigns', 'name: y\nparameters: [1, 2\n', { 'content-type': 'application/yaml' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.issues[0].message).toMatch(/line \d+/);
  });

  test('campaigns: every offending field of an invalid spec is reported with its path', async () => {
    const res = await call('POST', '/v1/campaigns', {
      ...SPEC,
      parameters: { offload: ['none', 'cpu'], sp: [] },
      exclude: [{ nope: 1 }],
      resources: { time: '90min' },
      slurm: { chdir: '/tmp' },
      run: 'echo {{missing}}',
    });
    expect(res.status).toBe(400);
    const paths = res.body.error.issues.map((i: { path: string }) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['parameters.sp', 'exclude[0].nope', 'resources.time', 'slurm.chdir', 'run']));
    const byPath = Object.fromEntries(res.body.error.issues.map((i: { path: string; message: string }) => [i.path, i.message]));
    expect(byPath['run']).toMatch(/missing/);
    expect(byPath['slurm.chdir']).toMatch(/not allowed/);
  });

  test('campaigns: a value that could run in a shell is refused with the field named', async () => {
    for (const value of ['$(touch /tmp/erg-pwned)', '; rm -rf ~', '`id`', 'a b', "it's"]) {
      const res = await call('POST', '/v1/campaigns', { ...SPEC, parameters: { msg: ['ok', value] }, exclude: [], run: 'echo {{msg}}' });
      expect(res.status).toBe(400);
      expect(res.body.error.issues.map((i: { path: string }) => i.path)).toContain('parameters.msg[1]');
    }
  });

  test('campaigns: larger than the configured limit is refused with the count', async () => {
    const res = await call('POST', '/v1/campaigns', { ...SPEC, parameters: { a: Array.from({ length: 60 }, (_, i) => i) }, exclude: [], run: 'echo {{a}}' });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/120/);
    expect(res.body.error.message).toMatch(/100/);
  });

  test('campaigns: an unknown cluster is a 422 that names it', async () => {
    const res = await call('POST', '/v1/campaigns', { ...SPEC, cluster: 'ghost' });
    expect(res.status).toBe(422);
    expect(res.body.error.message).toMatch(/"ghost"/);
    expect(res.body.error.message).toMatch(/alpha/);
  });

  test('campaigns: a power state is refused on a cluster not probed yet (409, retry shortly) and on one whose helper does not allow it (422)', async () => {
    const powered = { ...SPEC, name: 'powered', power: { gpuPowerLimitW: 300 } };
    const notProbed = await t.app.inject({ method: 'POST', url: '/v1/campaigns', headers: { authorization: `Bearer ${t.token}` }, payload: powered });
    expect(notProbed.statusCode).toBe(409);
    expect(notProbed.json().error.code).toBe('ERG_CLUSTER_NOT_PROBED');
    expect(notProbed.headers['retry-after']).toBe('5');
    const cluster = (await findClusterByName(t.db, 'alpha'))!;
    const probed = { probedAt: new Date().toISOString(), slurmVersion: 'slurm 24.05.0', powerHelperProblem: null };
    await recordClusterCapabilities(t.db, cluster.id, { ...probed, powerHelper: { version: 1, knobs: ['cpuFreqKHz'] } });
    try {
      const refused = await call('POST', '/v1/campaigns', powered);
      expect(refused.status).toBe(422);
      expect(refused.body.error.code).toBe('ERG_POWER_UNSUPPORTED');
      expect(refused.body.error.issues).toEqual([{ path: 'power', code: 'power_unsupported', message: expect.stringMatching(/does not allow gpuPowerLimitW/) }]);
      const allowed = await call('POST', '/v1/campaigns', { ...powered, power: { cpuFreqKHz: 2_000_000 } });
      expect(allowed.status).toBe(201);
      await call('POST', `/v1/campaigns/${allowed.body.id}/cancel`);
    } finally {
      await recordClusterCapabilities(t.db, cluster.id, { ...probed, powerHelper: null, powerHelperProblem: 'not installed' });
    }
  });

  test('campaigns: cancel before submission cancels every pending run', async () => {
    const created = await call('POST', '/v1/campaigns', SPEC);
    const cancelled = await call('POST', `/v1/campaigns/${created.body.id}/cancel`);
    expect(cancelled.status).toBe(202);
    expect(cancelled.body).toMatchObject({ state: 'cancelled', runCounts: { cancelled: 10 } });
    const runs = await call('GET', `/v1/campaigns/${created.body.id}/runs?state=cancelled`);
    expect(runs.body.total).toBe(10);
  });

  test('ids are checked: a malformed id is a 400, an unknown one a 404', async () => {
    expect((await call('GET', '/v1/runs/not-a-uuid')).status).toBe(400);
    expect((await call('GET', '/v1/runs/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await call('GET', '/v1/campaigns/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    // Paging visits every campaign exactly once, newest first.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { items: { id: string }[]; next: string | null } } = await call('GET', `/v1/campaigns?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...page.body.items.map((c) => c.id));
      cursor = page.body.next;
    } while (cursor);
    const all = await listCampaignSummaries(t.db, { limit: 100_000 });
    expect(seen).toEqual(all.items.map((c) => c.campaign.id));
    expect((await call('GET', '/v1/campaigns?cursor=bogus')).status).toBe(400);
  });
});
