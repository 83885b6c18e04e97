// PUT /v1/clusters/{name}/node-report: a node's `erg-agent doctor --json` report, stored with its
// cluster by whoever manages it and shown by GET /v1/clusters/{name}. The report is the agent
// test's own output against the fake NVML (R535 profile) and the GH200 hwmon fixture
// (packages/spec/test/fixtures/node-doctor-report.json): a fixture, not a real node's.
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startTestApi, type TestApi } from './helpers';

const REPORT = JSON.parse(readFileSync(path.join(__dirname, '../../../packages/spec/test/fixtures/node-doctor-report.json'), 'utf8')) as Record<string, unknown>;
const PRIVATE_KEY = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const CLUSTER = { name: 'gh', host: 'login.example.org', port: 22, user: 'erg', privateKey: PRIVATE_KEY, hostKeySha256: 'SHA256:' + 'A'.repeat(43), workDir: '/scratch/erg' };

describe('a node report stored with its cluster (Postgres + Redis)', () => {
  let t: TestApi;
  let viewer: string;
  async function call(token: string, method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) {
    const res = await t.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.json() };
  }

  beforeAll(async () => {
    t = await startTestApi();
    expect((await call(t.token, 'POST', '/v1/projects', { name: 'hpc' })).status).toBe(201);
    expect((await call(t.token, 'POST', '/v1/clusters?project=hpc', CLUSTER)).status).toBe(201);
    expect((await call(t.token, 'POST', '/v1/users', { name: 'vera' })).status).toBe(201);
    expect((await call(t.token, 'PUT', '/v1/projects/hpc/members/vera', { role: 'viewer' })).status).toBe(200);
    viewer = (await call(t.token, 'POST', '/v1/tokens', { name: 'vera-token', user: 'vera' })).body.token;
  });
  afterAll(async () => {
    await t.close();
  });

  test('stored with the node and when it was taken, shown by GET; a viewer sees it but may not replace it', async () => {
    expect((await call(t.token, 'GET', '/v1/clusters/gh')).body.nodeReport).toBeNull();
    const put = await call(t.token, 'PUT', '/v1/clusters/gh/node-report', REPORT);
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ node: 'gh-1', takenAt: REPORT.time, report: { kind: 'erg-node-doctor', problems: REPORT.problems } });
    expect(Date.now() - Date.parse(put.body.storedAt)).toBeLessThan(60_000);
    const shown = await call(viewer, 'GET', '/v1/clusters/gh');
    expect(shown.body.nodeReport).toEqual(put.body);
    expect(shown.body.nodeReport.report.floors).toEqual(REPORT.floors);

    const refused = await call(viewer, 'PUT', '/v1/clusters/gh/node-report', { ...REPORT, node: 'gh-2' });
    expect(refused.status).toBe(403);
    expect((await call(t.token, 'GET', '/v1/clusters/gh')).body.nodeReport.node).toBe('gh-1');
  });

  test('a malformed report is a 400 naming each field at fault, and nothing is stored', async () => {
    const before = (await call(t.token, 'GET', '/v1/clusters/gh')).body.nodeReport;
    const floors = (REPORT.floors as object[]).map((f, i) => (i === 1 ? { ...f, verdict: 'fine' } : f));
    const bad = await call(t.token, 'PUT', '/v1/clusters/gh/node-report', { ...REPORT, kind: 'something-else', floors, stack: { driverVersion: 550 } });
    expect(bad.status).toBe(400);
    const paths = (bad.body.error.issues as { path: string }[]).map((i) => i.path);
    expect(paths).toEqual(['kind', 'stack.driverVersion', 'stack.nvmlVersion', 'stack.cudaVersion', 'stack.dcgmVersion', 'floors[1].verdict']);
    expect((await call(t.token, 'GET', '/v1/clusters/gh')).body.nodeReport).toEqual(before);
    // Another cluster's name answers as any unknown cluster does.
    expect((await call(t.token, 'PUT', '/v1/clusters/nope/node-report', REPORT)).status).toBe(404);
  });
});
