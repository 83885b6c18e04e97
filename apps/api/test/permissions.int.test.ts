// The permission matrix: every /v1 route × every role × a resource of the caller's project and
// one of another project → the status the rules promise. The routes come from the app's own
// route table (app.accessRules, filled by onRoute), so a route added without a request here
// fails the first test, and a route registered without an access rule does not even start.
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { issueRunToken } from '@erg/db';
import { backdateRunEnd, expireApiToken } from '@erg/db/testing';
import { ACTIONS } from '../src/access';
import { startTestApi, type TestApi } from './helpers';

const NODE_REPORT = JSON.parse(readFileSync(path.join(__dirname, '../../../packages/spec/test/fixtures/node-doctor-report.json'), 'utf8')) as object;
const PRIVATE_KEY = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const cluster = (name: string) => ({
  name, host: '127.0.0.1', port: 2222, user: 'root', privateKey: PRIVATE_KEY, hostKeySha256: 'SHA256:' + 'A'.repeat(43), workDir: '/var/lib/erg-test',
});
const slurmCampaign = (clusterName: string) => ({ name: 'perm', cluster: clusterName, repetitions: 1, parameters: { n: [1] }, run: 'true' });
const importCampaign = { name: 'perm-import', execution: 'import', repetitions: 1, parameters: { n: [1] } };
const suite = (name: string, clusterName: string) => ({ name, campaign: slurmCampaign(clusterName) });

type Role = 'viewer' | 'researcher' | 'maintainer' | 'admin';
const ROLES: Role[] = ['viewer', 'researcher', 'maintainer', 'admin'];
type Where = 'own' | 'other';

interface Req {
  method: string;
  url: string;
  body?: unknown;
}

/** The project of each side and what lives in it. */
interface Side {
  project: string;
  cluster: string;
  campaignId: string;
  runId: string;
  importRunId: string;
  suite: string;
  /** A cluster of the side's project that only the deactivation routes use. */
  spareCluster: string;
}

describe('permission matrix: every route × role × own / other project (Postgres + Redis)', () => {
  let t: TestApi;
  const tokens = {} as Record<Role, string>;
  const userIds = {} as Record<Role, string>;
  const sides = {} as Record<Where, Side>;
  let n = 0;
  const fresh = (prefix: string) => `${prefix}-${++n}`;

  async function call(token: string, r: Req) {
    const res = await t.app.inject({ method: r.method as 'GET', url: r.url, headers: { authorization: `Bearer ${token}` }, ...(r.body === undefined ? {} : { payload: r.body as object }) });
    // An evidence bundle (GET …/export) is a tar archive, not JSON.
    const json = (res.headers['content-type'] ?? '').toString().startsWith('application/json');
    return { status: res.statusCode, body: res.body && json ? JSON.parse(res.body) : null };
  }
  const admin = (r: Req) => call(t.token, r);

  async function side(project: string): Promise<Side> {
    const clusterName = `c-${project}`;
    expect((await admin({ method: 'POST', url: `/v1/clusters?project=${project}`, body: cluster(clusterName) })).status).toBe(201);
    const campaign = await call(tokens.researcher, { method: 'POST', url: '/v1/campaigns', body: slurmCampaign(clusterName) });
    // The outsider side's campaign is created by the admin (the researcher has no role there).
    const created = campaign.status === 201 ? campaign : await admin({ method: 'POST', url: '/v1/campaigns', body: slurmCampaign(clusterName) });
    expect(created.status).toBe(201);
    const imported = await admin({ method: 'POST', url: `/v1/campaigns?project=${project}`, body: importCampaign });
    expect(imported.status).toBe(201);
    const suiteName = `s-${project}`;
    expect((await admin({ method: 'POST', url: '/v1/suites', body: suite(suiteName, clusterName) })).status).toBe(201);
    const spareCluster = `spare-${project}`;
    expect((await admin({ method: 'POST', url: `/v1/clusters?project=${project}`, body: cluster(spareCluster) })).status).toBe(201);
    return { project, cluster: clusterName, campaignId: created.body.id, runId: created.body.runs[0].id, importRunId: imported.body.runs[0].id, suite: suiteName, spareCluster };
  }

  /** A request per route, aimed at side `s`; destructive ones get a fresh target each time. */
  const REQUESTS: Record<string, (s: Side, role: Role) => Promise<Req> | Req> = {
    'GET /v1/clusters': () => ({ method: 'GET', url: '/v1/clusters' }),
    'POST /v1/clusters': (s) => ({ method: 'POST', url: `/v1/clusters?project=${s.project}`, body: cluster(fresh('cl')) }),
    'PUT /v1/clusters/:name': (s) => {
      const { name: _n, ...body } = cluster(s.cluster);
      return { method: 'PUT', url: `/v1/clusters/${s.cluster}`, body };
    },
    'GET /v1/clusters/:name': (s) => ({ method: 'GET', url: `/v1/clusters/${s.cluster}` }),
    // Dropping a certificate the cluster does not have: valid for any cluster, changes nothing that matters.
    'PUT /v1/clusters/:name/credentials': (s) => ({ method: 'PUT', url: `/v1/clusters/${s.cluster}/credentials`, body: { certificate: null } }),
    // Merging no points: valid for any cluster, changes nothing.
    'PUT /v1/clusters/:name/carbon-intensity': (s) => ({ method: 'PUT', url: `/v1/clusters/${s.cluster}/carbon-intensity`, body: { points: [] } }),
    // The node report of the API's own tests (a fixture of the fake NVML): storing it again replaces the same.
    'PUT /v1/clusters/:name/node-report': (s) => ({ method: 'PUT', url: `/v1/clusters/${s.cluster}/node-report`, body: NODE_REPORT }),
    'GET /v1/clusters/:name/carbon-intensity': (s) => ({ method: 'GET', url: `/v1/clusters/${s.cluster}/carbon-intensity` }),
    // Retiring a spare cluster of the side's project (idempotent), so that the side's own keeps working.
    'POST /v1/clusters/:name/deactivate': (s) => ({ method: 'POST', url: `/v1/clusters/${s.spareCluster}/deactivate` }),
    'POST /v1/clusters/:name/reactivate': (s) => ({ method: 'POST', url: `/v1/clusters/${s.spareCluster}/reactivate` }),
    'POST /v1/campaigns': (s) => ({ method: 'POST', url: '/v1/campaigns', body: slurmCampaign(s.cluster) }),
    'GET /v1/campaigns': () => ({ method: 'GET', url: '/v1/campaigns' }),
    'GET /v1/campaigns/:id': (s) => ({ method: 'GET', url: `/v1/campaigns/${s.campaignId}` }),
    'GET /v1/campaigns/:id/runs': (s) => ({ method: 'GET', url: `/v1/campaigns/${s.campaignId}/runs` }),
    'GET /v1/campaigns/:id/results': (s) => ({ method: 'GET', url: `/v1/campaigns/${s.campaignId}/results` }),
    'GET /v1/campaigns/:id/configurations': (s) => ({ method: 'GET', url: `/v1/campaigns/${s.campaignId}/configurations?measured=false` }),
    'GET /v1/campaigns/:id/decisions': (s) => ({ method: 'GET', url: `/v1/campaigns/${s.campaignId}/decisions` }),
    'GET /v1/campaigns/:id/export': (s) => ({ method: 'GET', url: `/v1/campaigns/${s.campaignId}/export` }),
    'GET /v1/campaigns/:id/verdict': (s) => ({ method: 'GET', url: `/v1/campaigns/${s.campaignId}/verdict?baseline=${s.campaignId}` }),
    'POST /v1/campaigns/:id/cancel': (s) => ({ method: 'POST', url: `/v1/campaigns/${s.campaignId}/cancel` }),
    'GET /v1/runs/:id': (s) => ({ method: 'GET', url: `/v1/runs/${s.runId}` }),
    'POST /v1/runs/:id/finish': (s) => ({ method: 'POST', url: `/v1/runs/${s.importRunId}/finish`, body: { startedAt: new Date(Date.now() - 60_000).toISOString(), endedAt: new Date().toISOString() } }),
    'GET /v1/runs/:id/logs': (s) => ({ method: 'GET', url: `/v1/runs/${s.runId}/logs` }),
    'POST /v1/runs/:id/cancel': (s) => ({ method: 'POST', url: `/v1/runs/${s.runId}/cancel` }),
    'POST /v1/runs/:id/telemetry': (s) => ({ method: 'POST', url: `/v1/runs/${s.importRunId}/telemetry`, body: { node: 'n1', seq: ++n, samples: [{ sensor: 'cpu0.power', t: [Date.now()], v: [100] }] } }),
    'GET /v1/runs/:id/telemetry': (s) => ({ method: 'GET', url: `/v1/runs/${s.runId}/telemetry` }),
    'GET /v1/runs/:id/energy': (s) => ({ method: 'GET', url: `/v1/runs/${s.runId}/energy` }),
    'GET /v1/runs/:id/phases': (s) => ({ method: 'GET', url: `/v1/runs/${s.runId}/phases` }),
    'POST /v1/suites': (s) => ({ method: 'POST', url: '/v1/suites', body: suite(fresh('su'), s.cluster) }),
    'PUT /v1/suites/:name': (s) => ({ method: 'PUT', url: `/v1/suites/${s.suite}`, body: suite(s.suite, s.cluster) }),
    'GET /v1/suites': () => ({ method: 'GET', url: '/v1/suites' }),
    'GET /v1/suites/:name': (s) => ({ method: 'GET', url: `/v1/suites/${s.suite}` }),
    'DELETE /v1/suites/:name': async (s) => {
      const name = fresh('del');
      expect((await admin({ method: 'POST', url: '/v1/suites', body: suite(name, s.cluster) })).status).toBe(201);
      return { method: 'DELETE', url: `/v1/suites/${name}` };
    },
    'POST /v1/suites/:name/trigger': (s) => ({ method: 'POST', url: `/v1/suites/${s.suite}/trigger` }),
    'GET /v1/suites/:name/runs': (s) => ({ method: 'GET', url: `/v1/suites/${s.suite}/runs` }),
    'GET /v1/suites/:name/runs/:runId': async (s) => {
      const runs = await admin({ method: 'GET', url: `/v1/suites/${s.suite}/runs?limit=1` });
      const id = runs.body.items[0]?.id ?? (await admin({ method: 'POST', url: `/v1/suites/${s.suite}/trigger` })).body.id;
      return { method: 'GET', url: `/v1/suites/${s.suite}/runs/${id}` };
    },
    'GET /v1/queue': () => ({ method: 'GET', url: '/v1/queue' }),
    'GET /v1/me': () => ({ method: 'GET', url: '/v1/me' }),
    'GET /v1/projects': () => ({ method: 'GET', url: '/v1/projects' }),
    'POST /v1/projects': () => ({ method: 'POST', url: '/v1/projects', body: { name: fresh('p') } }),
    'GET /v1/projects/:name': (s) => ({ method: 'GET', url: `/v1/projects/${s.project}` }),
    'GET /v1/projects/:name/webhook-policy': (s) => ({ method: 'GET', url: `/v1/projects/${s.project}/webhook-policy` }),
    'PUT /v1/projects/:name/webhook-policy': (s) => ({ method: 'PUT', url: `/v1/projects/${s.project}/webhook-policy`, body: { allowHttp: false, allowHosts: [] } }),
    // Admin-only: a spare project, whichever side (alpha and beta must stay active).
    'POST /v1/projects/:name/deactivate': () => ({ method: 'POST', url: '/v1/projects/spare-project/deactivate' }),
    'POST /v1/projects/:name/reactivate': () => ({ method: 'POST', url: '/v1/projects/spare-project/reactivate' }),
    'GET /v1/projects/:name/cluster-policy': (s) => ({ method: 'GET', url: `/v1/projects/${s.project}/cluster-policy` }),
    // The policy each side already has (its clusters are on loopback): a PUT that succeeds changes nothing for the routes after it.
    'PUT /v1/projects/:name/cluster-policy': (s) => ({ method: 'PUT', url: `/v1/projects/${s.project}/cluster-policy`, body: { allowHosts: ['127.0.0.1'] } }),
    'PUT /v1/projects/:name/members/:user': (s) => ({ method: 'PUT', url: `/v1/projects/${s.project}/members/spare`, body: { role: 'viewer' } }),
    'DELETE /v1/projects/:name/members/:user': async (s) => {
      await admin({ method: 'PUT', url: `/v1/projects/${s.project}/members/spare`, body: { role: 'viewer' } });
      return { method: 'DELETE', url: `/v1/projects/${s.project}/members/spare` };
    },
    'GET /v1/users': () => ({ method: 'GET', url: '/v1/users' }),
    'POST /v1/users': () => ({ method: 'POST', url: '/v1/users', body: { name: fresh('u') } }),
    'POST /v1/users/:name/deactivate': () => ({ method: 'POST', url: '/v1/users/spare/deactivate' }),
    'POST /v1/users/:name/reactivate': () => ({ method: 'POST', url: '/v1/users/spare/reactivate' }),
    'GET /v1/tokens': () => ({ method: 'GET', url: '/v1/tokens' }),
    'POST /v1/tokens': () => ({ method: 'POST', url: '/v1/tokens', body: { name: 'matrix' } }),
    'DELETE /v1/tokens/:id': async (_s, role) => {
      // One of the caller's own tokens (admin: anyone's).
      const created = await call(tokens[role], { method: 'POST', url: '/v1/tokens', body: { name: 'to-revoke' } });
      return { method: 'DELETE', url: `/v1/tokens/${created.body.id}` };
    },
    'GET /v1/audit': () => ({ method: 'GET', url: '/v1/audit' }),
  };
  /** Streams are checked over a real socket in events.int.test.ts; here only that their rule is a listing. */
  const STREAMS = new Set(['GET /v1/events']);

  /** How a caller without the needed rights is refused on the other side for creation routes (the named thing is not theirs to see). */
  const CREATE_OTHER: Record<string, number | ((role: Role) => number)> = {
    'POST /v1/clusters': 404, 'POST /v1/campaigns': 422, 'POST /v1/suites': 422,
    // Another project's cluster answers as a free name would: refused below maintainer, else "name taken" (as POST says).
    'PUT /v1/clusters/:name': (role) => (role === 'maintainer' ? 409 : 403),
  };

  beforeAll(async () => {
    t = await startTestApi();
    for (const p of ['alpha', 'beta', 'spare-project']) {
      expect((await admin({ method: 'POST', url: '/v1/projects', body: { name: p } })).status).toBe(201);
      // Its clusters are registered at 127.0.0.1: the admin allows loopback for the project, as for the quickstart.
      expect((await admin({ method: 'PUT', url: `/v1/projects/${p}/cluster-policy`, body: { allowHosts: ['127.0.0.1'] } })).status).toBe(200);
    }
    expect((await admin({ method: 'POST', url: '/v1/users', body: { name: 'spare' } })).status).toBe(201);
    // Maintainers find only users who share a project with them (oracles.int.test.ts): spare is in alpha.
    expect((await admin({ method: 'PUT', url: '/v1/projects/alpha/members/spare', body: { role: 'viewer' } })).status).toBe(200);
    for (const role of ROLES) {
      if (role === 'admin') {
        tokens.admin = t.token;
        continue;
      }
      const user = await admin({ method: 'POST', url: '/v1/users', body: { name: role } });
      userIds[role] = user.body.id;
      expect((await admin({ method: 'PUT', url: `/v1/projects/alpha/members/${role}`, body: { role } })).status).toBe(200);
      tokens[role] = (await admin({ method: 'POST', url: '/v1/tokens', body: { name: `${role}-token`, user: role } })).body.token;
    }
    sides.own = await side('alpha');
    sides.other = await side('beta');
  });
  afterAll(async () => {
    await t.close();
  });

  test('every /v1 route has an access rule and a request in this matrix', () => {
    const routes = t.app.accessRules.map((r) => `${r.method} ${r.url}`);
    expect(routes.length).toBeGreaterThan(30);
    const missing = routes.filter((r) => !REQUESTS[r] && !STREAMS.has(r));
    expect(missing).toEqual([]);
  });

  /** What the rules promise: allowed (any status but 401/403/404), or the exact refusal. */
  function expected(key: string, role: Role, where: Where): 'allowed' | number {
    const rule = t.app.accessRules.find((r) => `${r.method} ${r.url}` === key)!.access;
    const need = ACTIONS[rule.action];
    if (need === 'any') return 'allowed';
    if (need === 'admin') return role === 'admin' ? 'allowed' : 403;
    if (role === 'admin') return 'allowed';
    const rank = (r: string) => ['viewer', 'researcher', 'maintainer'].indexOf(r);
    // A list shows the projects where the caller has the role it needs; with none, it is refused.
    if (rule.target.kind === 'listing') return rank(role) >= rank(need) ? 'allowed' : 403;
    if (rule.target.kind === 'none') return 'allowed';
    // Routes that create (or create-or-replace) refuse a caller holding the needed role in no
    // project before the body is read, whichever project it names (these callers have a role
    // in alpha only): 403 on both sides.
    if ((rule.target.kind === 'create' || rule.upsert) && rank(role) < rank(need)) return 403;
    if (where === 'other') {
      if (rule.target.kind !== 'create') return 404;
      const other = CREATE_OTHER[key] ?? 404;
      return typeof other === 'function' ? other(role) : other;
    }
    if (rank(role) >= rank(need)) return 'allowed';
    // The own side's campaign was created by the researcher: researchers may cancel their own.
    if (rule.ownerMay && role === 'researcher' && rank(role) >= rank(rule.ownerMay)) return 'allowed';
    return 403;
  }

  test('each route, role and side gets the status its rule promises', async () => {
    const problems: string[] = [];
    for (const { method, url } of t.app.accessRules) {
      const key = `${method} ${url}`;
      if (STREAMS.has(key)) continue;
      for (const role of ROLES) {
        for (const where of ['own', 'other'] as Where[]) {
          const request = await REQUESTS[key]!(sides[where], role);
          const { status, body } = await call(tokens[role], request);
          const want = expected(key, role, where);
          // Allowed calls may still fail for other reasons (503: the fake cluster cannot be reached for logs), never for access.
          const ok = want === 'allowed' ? ![401, 403, 404, 500].includes(status) : status === want;
          if (!ok) problems.push(`${key} as ${role} on ${where}: got ${status} (${JSON.stringify(body?.error?.message ?? '').slice(0, 120)}), want ${want}`);
        }
      }
    }
    expect(problems).toEqual([]);
    // ~300 requests: seconds, more on a loaded 2-core machine than Jest's 5 s default allows.
  }, 60_000);

  test('lists show only the caller\'s projects', async () => {
    const campaigns = await call(tokens.viewer, { method: 'GET', url: '/v1/campaigns?limit=500' });
    const ids = new Set(campaigns.body.items.map((c: { id: string }) => c.id));
    expect(ids.has(sides.own.campaignId)).toBe(true);
    expect(ids.has(sides.other.campaignId)).toBe(false);
    const clusters = (await call(tokens.viewer, { method: 'GET', url: '/v1/clusters' })).body.items.map((c: { name: string }) => c.name);
    expect(clusters).toContain(sides.own.cluster);
    expect(clusters).not.toContain(sides.other.cluster);
    const suites = (await call(tokens.viewer, { method: 'GET', url: '/v1/suites' })).body.items.map((s: { name: string }) => s.name);
    expect(suites).toContain(sides.own.suite);
    expect(suites).not.toContain(sides.other.suite);
    const queue = await call(tokens.viewer, { method: 'GET', url: '/v1/queue' });
    expect(queue.body.runs.every((r: { cluster: string }) => r.cluster !== sides.other.cluster)).toBe(true);
    const projects = (await call(tokens.viewer, { method: 'GET', url: '/v1/projects' })).body.items.map((p: { name: string; role: string }) => `${p.name}:${p.role}`);
    expect(projects).toEqual(['alpha:viewer']);
  });

  test('another project\'s resource answers exactly like one that does not exist', async () => {
    const missing = await call(tokens.maintainer, { method: 'GET', url: '/v1/campaigns/00000000-0000-4000-8000-000000000000' });
    const hidden = await call(tokens.maintainer, { method: 'GET', url: `/v1/campaigns/${sides.other.campaignId}` });
    expect(hidden.status).toBe(404);
    expect(hidden.body.error.message.replace(sides.other.campaignId, 'X')).toBe(missing.body.error.message.replace('00000000-0000-4000-8000-000000000000', 'X'));
  });

  test('a researcher cancels their own campaign but not someone else\'s', async () => {
    const mine = await call(tokens.researcher, { method: 'POST', url: '/v1/campaigns', body: slurmCampaign(sides.own.cluster) });
    expect((await call(tokens.researcher, { method: 'POST', url: `/v1/campaigns/${mine.body.id}/cancel` })).status).toBe(202);
    const theirs = await admin({ method: 'POST', url: '/v1/campaigns', body: slurmCampaign(sides.own.cluster) });
    expect((await call(tokens.researcher, { method: 'POST', url: `/v1/campaigns/${theirs.body.id}/cancel` })).status).toBe(403);
    expect((await call(tokens.maintainer, { method: 'POST', url: `/v1/campaigns/${theirs.body.id}/cancel` })).status).toBe(202);
  });

  test('expired and revoked tokens are refused; a narrowed token cannot widen itself', async () => {
    const created = await call(tokens.maintainer, { method: 'POST', url: '/v1/tokens', body: { name: 'short', expiresInDays: 1 } });
    expect(created.status).toBe(201);
    expect(created.body.token).toMatch(/^erg_/);
    expect((await call(created.body.token, { method: 'GET', url: '/v1/me' })).status).toBe(200);
    await expireApiToken(t.db, created.body.id);
    expect((await call(created.body.token, { method: 'GET', url: '/v1/me' })).status).toBe(401);

    const other = await call(tokens.maintainer, { method: 'POST', url: '/v1/tokens', body: { name: 'to-revoke' } });
    expect((await call(tokens.maintainer, { method: 'DELETE', url: `/v1/tokens/${other.body.id}` })).body.revokedAt).not.toBeNull();
    expect((await call(other.body.token, { method: 'GET', url: '/v1/me' })).status).toBe(401);
    // Someone else's token is not yours to see or revoke.
    expect((await call(tokens.viewer, { method: 'DELETE', url: `/v1/tokens/${created.body.id}` })).status).toBe(404);

    const narrow = await call(tokens.maintainer, { method: 'POST', url: '/v1/tokens', body: { name: 'ci', role: 'viewer' } });
    const me = await call(narrow.body.token, { method: 'GET', url: '/v1/me' });
    expect(me.body.projects).toEqual([{ name: 'alpha', role: 'viewer' }]);
    expect((await call(narrow.body.token, { method: 'POST', url: '/v1/campaigns', body: slurmCampaign(sides.own.cluster) })).status).toBe(403);
    const wider = await call(narrow.body.token, { method: 'POST', url: '/v1/tokens', body: { name: 'wider', role: 'maintainer' } });
    expect(wider.status).toBe(403);
    expect(wider.body.error.code).toBe('ERG_TOKEN_WIDER');
    expect((await call(narrow.body.token, { method: 'POST', url: '/v1/tokens', body: { name: 'same' } })).body.role).toBe('viewer');
    expect((await call(narrow.body.token, { method: 'POST', url: '/v1/tokens', body: { name: 'x', projects: ['beta'] } })).status).toBe(404);
    // An admin's narrowed token is not an admin token.
    const adminNarrow = await admin({ method: 'POST', url: '/v1/tokens', body: { name: 'narrow-admin', projects: ['alpha'], role: 'maintainer' } });
    expect((await call(adminNarrow.body.token, { method: 'GET', url: '/v1/users' })).status).toBe(403);
  });

  test('a run token writes its own run\'s telemetry and nothing else, and stops working after the run', async () => {
    const runToken = await issueRunToken(t.db, sides.own.importRunId);
    const batch = (seq: number) => ({ node: 'agent', seq, samples: [{ sensor: 'cpu0.power', t: [Date.now()], v: [90] }] });
    expect((await call(runToken, { method: 'POST', url: `/v1/runs/${sides.own.importRunId}/telemetry`, body: batch(1) })).status).toBe(200);
    expect((await call(runToken, { method: 'POST', url: `/v1/runs/${sides.own.runId}/telemetry`, body: batch(2) })).status).toBe(403);
    expect((await call(runToken, { method: 'GET', url: `/v1/runs/${sides.own.importRunId}` })).status).toBe(403);
    expect((await call(runToken, { method: 'GET', url: `/v1/runs/${sides.own.importRunId}/telemetry` })).status).toBe(403);
    expect((await call(runToken, { method: 'GET', url: '/v1/campaigns' })).status).toBe(403);
    // The run ended long ago: its agents' token no longer works.
    await backdateRunEnd(t.db, sides.own.importRunId, 60 * 60_000);
    expect((await call(runToken, { method: 'POST', url: `/v1/runs/${sides.own.importRunId}/telemetry`, body: batch(3) })).status).toBe(401);
  });

  test('no response shows a token\'s hash, and listing tokens shows prefixes only', async () => {
    const list = await call(tokens.maintainer, { method: 'GET', url: '/v1/tokens' });
    for (const item of list.body.items) {
      expect(item).not.toHaveProperty('token');
      expect(item).not.toHaveProperty('tokenHash');
      expect(item.prefix).toHaveLength(10);
    }
    expect(userIds.maintainer).toBeTruthy();
  });
});
