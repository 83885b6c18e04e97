// Access that ends, ends (issue 27): campaigns name their user and token apart (a token cannot pass
// for a suite), and users, projects and clusters are retired by deactivation, which keeps their
// history: what each refuses, what it still allows, what the scheduler holds, the audit rows.
import { generateKeyPairSync } from 'node:crypto';
import { claimRunsForSubmission, findClusterByName } from '@erg/db';
import { waitFor } from '@erg/testkit';
import { startTestApi, type TestApi } from './helpers';

const PRIVATE_KEY = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const cluster = (name: string) => ({ name, host: '127.0.0.1', port: 2222, user: 'root', privateKey: PRIVATE_KEY, hostKeySha256: 'SHA256:' + 'A'.repeat(43), workDir: '/var/lib/erg-test' });
const slurm = (clusterName: string) => ({ name: 'ends', cluster: clusterName, repetitions: 1, parameters: { n: [1, 2] }, run: 'true' });
const imported = { name: 'ends-import', execution: 'import', repetitions: 1, parameters: { n: [1] } };

describe('access that ends: owners, deactivation (Postgres + Redis)', () => {
  let t: TestApi;
  /** Tokens by user name; every user gets a role in `proj-a` (their name says which). */
  const tokens: Record<string, string> = {};

  async function call(method: string, url: string, body?: unknown, token = t.token) {
    const res = await t.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${token}` }, ...(body === undefined ? {} : { payload: body as object }) });
    return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : null };
  }
  async function ok(method: string, url: string, body?: unknown, token = t.token) {
    const res = await call(method, url, body, token);
    if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }
  async function user(name: string, role: string, tokenName = 'laptop'): Promise<string> {
    await ok('POST', '/v1/users', { name });
    await ok('PUT', `/v1/projects/proj-a/members/${name}`, { role });
    return (await ok('POST', '/v1/tokens', { name: tokenName, user: name })).token;
  }

  beforeAll(async () => {
    t = await startTestApi();
    await ok('POST', '/v1/projects', { name: 'proj-a' });
    // Its clusters are on loopback: allowed by an admin, as for the quickstart.
    await ok('PUT', '/v1/projects/proj-a/cluster-policy', { allowHosts: ['127.0.0.1'] });
    await ok('POST', '/v1/clusters?project=proj-a', cluster('cl-a'));
    tokens.r1 = await user('r1', 'researcher');
    tokens.r2 = await user('r2', 'researcher');
    tokens.m1 = await user('m1', 'maintainer');
  });
  afterAll(async () => {
    await t.close();
  });

  describe('owners', () => {
    test("token names that begin as erg's own names (suite:, erg:) are refused, naming the field", async () => {
      for (const name of ['suite:nightly', 'Suite:Nightly', '  erg:scheduler']) {
        const res = await call('POST', '/v1/tokens', { name });
        expect(res.status).toBe(400);
        expect(res.body.error.issues).toEqual([expect.objectContaining({ path: 'name', message: expect.stringContaining('suite:') })]);
      }
      expect((await call('POST', '/v1/tokens', { name: 'nightly suite' })).status).toBe(201);
    });

    test("a campaign names its user and its token apart; a suite's names the suite, and no token", async () => {
      const mine = await ok('POST', '/v1/campaigns', slurm('cl-a'), tokens.r1);
      expect(mine.owner).toBe('r1');
      expect(mine.createdBy).toEqual({ user: { id: expect.any(String), name: 'r1' }, token: { id: expect.any(String), name: 'laptop' }, suite: null });
      await ok('POST', '/v1/suites', { name: 'nightly', campaign: slurm('cl-a') }, tokens.m1);
      const run = await ok('POST', '/v1/suites/nightly/trigger', undefined, tokens.m1);
      const started = await ok('GET', `/v1/campaigns/${run.campaignId}`);
      expect(started.owner).toBe('suite:nightly');
      expect(started.createdBy).toEqual({ user: null, token: null, suite: 'nightly' });
    });

    test("a researcher cancels their own campaign with any of their tokens; another's token of the same name cannot", async () => {
      const other = (await ok('POST', '/v1/tokens', { name: 'ci', user: 'r1' })).token;
      const mine = await ok('POST', '/v1/campaigns', slurm('cl-a'), tokens.r1);
      // r2's token is named "laptop" too.
      expect((await call('POST', `/v1/campaigns/${mine.id}/cancel`, undefined, tokens.r2)).status).toBe(403);
      expect((await call('POST', `/v1/campaigns/${mine.id}/cancel`, undefined, other)).status).toBe(202);
    });
  });

  describe('users', () => {
    test('a deactivated user is refused with every token; history and memberships stay; reactivation lets them in again', async () => {
      const token = await user('leaver', 'researcher');
      const campaign = await ok('POST', '/v1/campaigns', slurm('cl-a'), token);
      const deactivated = await ok('POST', '/v1/users/leaver/deactivate');
      expect(deactivated).toMatchObject({ name: 'leaver', deactivatedAt: expect.any(String) });
      expect((await call('GET', '/v1/me', undefined, token)).status).toBe(401);
      // Idempotent: the first time stays.
      expect((await ok('POST', '/v1/users/leaver/deactivate')).deactivatedAt).toBe(deactivated.deactivatedAt);
      expect((await ok('GET', '/v1/users')).items.find((u: { name: string }) => u.name === 'leaver').deactivatedAt).toBe(deactivated.deactivatedAt);
      expect((await ok('GET', `/v1/campaigns/${campaign.id}`)).createdBy.user.name).toBe('leaver');
      expect((await ok('GET', '/v1/projects/proj-a')).members.map((m: { user: string }) => m.user)).toContain('leaver');
      expect((await ok('POST', '/v1/users/leaver/reactivate')).deactivatedAt).toBeNull();
      expect((await call('GET', '/v1/me', undefined, token)).status).toBe(200);
    });

    test('nobody deactivates themselves; an unknown user is a 404; each change is in the audit log', async () => {
      const self = await call('POST', '/v1/users/admin/deactivate');
      expect(self.status).toBe(409);
      expect(self.body.error.message).toContain('yourself');
      expect((await call('POST', '/v1/users/nobody-here/deactivate')).status).toBe(404);
      await ok('POST', '/v1/users/r2/deactivate');
      await ok('POST', '/v1/users/r2/reactivate');
      // The audit row is written once the response is sent.
      const rows = await waitFor(async () => {
        const items = (await ok('GET', '/v1/audit?resource=user:r2')).items as { action: string; statusCode: number }[];
        return items.length === 2 && items;
      }, { what: 'two audit rows of user r2', timeoutMs: 10_000 });
      expect(rows.map((r) => `${r.action} ${r.statusCode}`)).toEqual(['user.reactivate 200', 'user.deactivate 200']);
    });
  });

  describe('projects', () => {
    test('a deactivated project is read-only: nothing new starts in it, its campaigns can be read and cancelled; reactivated, it works again', async () => {
      await ok('POST', '/v1/projects', { name: 'proj-old' });
      // Its clusters are on loopback: allowed by an admin, as for the quickstart.
      await ok('PUT', '/v1/projects/proj-old/cluster-policy', { allowHosts: ['127.0.0.1'] });
      await ok('POST', '/v1/clusters?project=proj-old', cluster('cl-old'));
      await ok('POST', '/v1/suites', { name: 'old-suite', campaign: slurm('cl-old') });
      const before = await ok('POST', '/v1/campaigns', slurm('cl-old'));
      const imp = await ok('POST', '/v1/campaigns?project=proj-old', imported);
      const view = await ok('POST', '/v1/projects/proj-old/deactivate');
      expect(view).toMatchObject({ name: 'proj-old', deactivatedAt: expect.any(String) });
      expect((await ok('GET', '/v1/projects/proj-old')).deactivatedAt).toBe(view.deactivatedAt);

      const refusals = [
        await call('POST', '/v1/campaigns', slurm('cl-old')),
        await call('POST', '/v1/campaigns?project=proj-old', imported),
        await call('POST', '/v1/clusters?project=proj-old', cluster('cl-new')),
        await call('PUT', '/v1/suites/old-suite', { name: 'old-suite', campaign: slurm('cl-old') }),
        await call('POST', '/v1/suites/old-suite/trigger'),
        await call('POST', `/v1/runs/${imp.runs[0].id}/finish`, { startedAt: new Date(Date.now() - 60_000).toISOString(), endedAt: new Date().toISOString() }),
      ];
      for (const r of refusals) {
        expect(r.status).toBe(409);
        expect(r.body.error).toMatchObject({ code: 'ERG_DEACTIVATED', message: expect.stringContaining('project "proj-old" is deactivated') });
      }
      expect((await call('GET', `/v1/campaigns/${before.id}`)).status).toBe(200);
      expect((await call('GET', '/v1/suites/old-suite')).status).toBe(200);
      expect((await call('POST', `/v1/campaigns/${before.id}/cancel`)).status).toBe(202);

      expect((await ok('POST', '/v1/projects/proj-old/reactivate')).deactivatedAt).toBeNull();
      expect((await call('POST', '/v1/campaigns', slurm('cl-old'))).status).toBe(201);
    });

    test("the scheduler holds a deactivated project's pending runs (not cancelled) and submits them once it is reactivated", async () => {
      await ok('POST', '/v1/projects', { name: 'proj-held' });
      // Its clusters are on loopback: allowed by an admin, as for the quickstart.
      await ok('PUT', '/v1/projects/proj-held/cluster-policy', { allowHosts: ['127.0.0.1'] });
      await ok('POST', '/v1/clusters?project=proj-held', cluster('cl-held'));
      const campaign = await ok('POST', '/v1/campaigns', slurm('cl-held'));
      const { id: clusterId } = (await findClusterByName(t.db, 'cl-held'))!;
      await ok('POST', '/v1/projects/proj-held/deactivate');
      expect(await claimRunsForSubmission(t.db, clusterId, 10)).toEqual([]);
      const held = (await ok('GET', `/v1/campaigns/${campaign.id}/runs`)).items;
      expect(held.map((r: { state: string; reason: string }) => `${r.state}: ${r.reason}`)).toEqual(
        Array(2).fill('pending: held: project "proj-held" is deactivated; its runs wait until it is reactivated (or cancel the campaign)'),
      );
      await ok('POST', '/v1/projects/proj-held/reactivate');
      expect((await claimRunsForSubmission(t.db, clusterId, 10)).map((r) => r.campaignId)).toEqual([campaign.id, campaign.id]);
    });
  });

  describe('clusters', () => {
    test("a cluster's maintainers deactivate it: no campaign may name it, its pending runs are held; reactivated, they are submitted", async () => {
      await ok('POST', '/v1/clusters?project=proj-a', cluster('cl-retired'));
      const campaign = await ok('POST', '/v1/campaigns', slurm('cl-retired'), tokens.r1);
      expect((await call('POST', '/v1/clusters/cl-retired/deactivate', undefined, tokens.r1)).status).toBe(403);
      const view = await ok('POST', '/v1/clusters/cl-retired/deactivate', undefined, tokens.m1);
      expect(view).toMatchObject({ name: 'cl-retired', deactivatedAt: expect.any(String) });

      const refused = await call('POST', '/v1/campaigns', slurm('cl-retired'), tokens.r1);
      expect(refused.status).toBe(409);
      expect(refused.body.error).toMatchObject({ code: 'ERG_DEACTIVATED', message: expect.stringContaining('cluster "cl-retired" is deactivated') });
      await ok('POST', '/v1/suites', { name: 'retired-suite', campaign: slurm('cl-retired') }, tokens.m1);
      expect((await call('POST', '/v1/suites/retired-suite/trigger', undefined, tokens.m1)).body.error.code).toBe('ERG_DEACTIVATED');

      const { id: clusterId } = (await findClusterByName(t.db, 'cl-retired'))!;
      expect(await claimRunsForSubmission(t.db, clusterId, 10)).toEqual([]);
      const held = (await ok('GET', `/v1/campaigns/${campaign.id}/runs`)).items;
      expect(held.every((r: { state: string; reason: string }) => r.state === 'pending' && r.reason.startsWith('held: cluster "cl-retired" is deactivated'))).toBe(true);

      expect((await ok('POST', '/v1/clusters/cl-retired/reactivate', undefined, tokens.m1)).deactivatedAt).toBeNull();
      expect(await claimRunsForSubmission(t.db, clusterId, 10)).toHaveLength(2);
      expect((await call('POST', '/v1/campaigns', slurm('cl-retired'), tokens.r1)).status).toBe(201);
    });
  });
});
