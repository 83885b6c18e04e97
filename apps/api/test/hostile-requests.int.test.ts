// Requests built to cost the API more than their size (issue 10 §2): each gets a 4xx that says
// why, never a 5xx, and nothing of it is stored. Timings are in bench/hostile-requests.js.
// Large bodies are validated in worker threads that run from apps/api/dist: build first.
import { gzipSync } from 'node:zlib';
import { countCampaigns, telemetrySummary } from '@erg/db';
import { MAX_BATCH_SERIES } from '@erg/spec';
import { startTestApi, type TestApi } from './helpers';

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const cube = { a: range(100), b: range(100), c: range(100) };
const importSpec = (extra: object) => ({ name: 'hostile', execution: 'import', ...extra });
const deepJson = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

describe('hostile requests (Postgres + Redis)', () => {
  let t: TestApi;
  let viewer: string;
  let runId: string;

  async function send(method: string, url: string, payload: string | Buffer, headers: Record<string, string> = {}, token = t.token) {
    const res = await t.app.inject({ method: method as 'POST', url, payload, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers } });
    return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : null, bytes: res.body.length };
  }
  const campaigns = () => countCampaigns(t.db);

  beforeAll(async () => {
    t = await startTestApi();
    expect((await send('POST', '/v1/users', JSON.stringify({ name: 'viewer' }))).status).toBe(201);
    expect((await send('PUT', '/v1/projects/default/members/viewer', JSON.stringify({ role: 'viewer' }))).status).toBe(200);
    viewer = (await send('POST', '/v1/tokens', JSON.stringify({ name: 'viewer', user: 'viewer' }))).body.token;
    const sink = await send('POST', '/v1/campaigns?project=default', JSON.stringify(importSpec({ name: 'sink' })));
    expect(sink.status).toBe(201);
    runId = sink.body.runs[0].id;
  });
  afterAll(async () => {
    await t.close();
  });

  describe('a campaign of a 100×100×100 grid with 1,000 excludes', () => {
    test('is refused when the excludes leave more than ERG_MAX_RUNS (999,000 configurations)', async () => {
      const exclude = range(1000).map((i) => ({ a: i % 100, b: Math.floor(i / 100), c: 7 }));
      const res = await send('POST', '/v1/campaigns?project=default', JSON.stringify(importSpec({ parameters: cube, exclude })));
      expect(res.status).toBe(400);
      expect(res.body.error.issues).toEqual([
        { path: '(root)', code: 'campaign_too_large', message: expect.stringMatching(/^the campaign has 999,000 runs \(999,000 configurations × 1 repetitions\), more than the limit of 100,000/) },
      ]);
    });

    test('is created when the excludes leave 9,002 configurations', async () => {
      const exclude = [{ a: range(100).slice(10) }, { b: range(100).slice(10) }, ...range(998).map((i) => ({ a: i < 100 ? 0 : 1 + (i % 9), b: 0, c: i % 100 }))];
      const res = await send('POST', '/v1/campaigns?project=default', JSON.stringify(importSpec({ parameters: cube, exclude })));
      expect(res.status).toBe(201);
      expect(res.body.totalRuns).toBe(9002);
      expect(res.body.configurations[0]).toEqual({ key: 'a=0;b=1;c=0', parameters: { a: 0, b: 1, c: 0 } });
      expect(res.body.configurations.every((c: { parameters: { a: number; b: number } }) => c.parameters.a < 10 && c.parameters.b < 10)).toBe(true);
    });

    test('from a viewer is refused with 403 before the body is even parsed', async () => {
      // The body would be a 400 (too deep) if it were parsed: a 403 shows it was not.
      const before = await campaigns();
      const res = await send('POST', '/v1/campaigns?project=default', `{"name":"x","description":${deepJson(5000)}}`, {}, viewer);
      expect(res.status).toBe(403);
      expect(res.body.error.message).toBe('this needs the researcher role in a project, and this token has it in none');
      expect(await send('POST', '/v1/suites', `{"name":"x","campaign":${deepJson(5000)}}`, {}, viewer)).toMatchObject({ status: 403 });
      expect(await send('PUT', '/v1/suites/nightly', `{"name":"nightly","campaign":${deepJson(5000)}}`, {}, viewer)).toMatchObject({ status: 403 });
      expect(await campaigns()).toBe(before);
    });
  });

  test('JSON nested 5,000 levels deep is a 400 on every route that takes a body, never a 5xx', async () => {
    const routes = t.app.accessRules.filter((r) => ['POST', 'PUT', 'DELETE'].includes(r.method));
    expect(routes.length).toBeGreaterThan(10);
    const answers: string[] = [];
    for (const r of routes) {
      const url = r.url.replace(':id', runId).replace(':name', 'nightly').replace(':user', 'viewer');
      const res = await send(r.method, url, `{"a":${deepJson(5000)}}`);
      answers.push(`${r.method} ${r.url} ${res.status} ${res.body?.error?.issues?.[0]?.code ?? res.body?.error?.code}`);
    }
    // Telemetry reads its body as bytes and decodes it after finding the run (same limit, its own depth).
    expect(answers.filter((a) => !/ 400 document_too_large$/.test(a))).toEqual([]);
  });

  test('YAML nested 5,000 levels deep is a 400 as often as it is sent (it overflowed the YAML parser, and could abort the process)', async () => {
    const yaml = `name: deep\nexecution: import\ndescription: ${'['.repeat(5000)}${']'.repeat(5000)}\n`;
    for (let i = 0; i < 3; i++) {
      const res = await send('POST', '/v1/campaigns?project=default', yaml, { 'content-type': 'application/yaml' });
      expect(res).toMatchObject({ status: 400, body: { error: { issues: [{ code: 'document_too_large', message: expect.stringContaining('nested more than 32 levels') }] } } });
    }
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });

  test('a YAML alias bomb (99 aliases of one 200 KB scalar) is refused and nothing is stored', async () => {
    const before = await campaigns();
    const yaml = ['name: bomb', 'execution: import', `description: &big ${'x'.repeat(200_000)}`, 'files:', ...range(99).map((i) => `  f${i}.txt: *big`)].join('\n');
    const res = await send('POST', '/v1/campaigns?project=default', yaml, { 'content-type': 'application/yaml' });
    expect(res.status).toBe(400);
    expect(res.body.error.issues).toEqual([{ path: '(root)', code: 'document_too_large', message: expect.stringContaining('YAML aliases expanded') }]);
    const suite = await send('POST', '/v1/suites', ['name: bomb', `description: &big ${'x'.repeat(200_000)}`, 'campaign:', '  name: bomb', '  files:', ...range(99).map((i) => `    f${i}.txt: *big`)].join('\n'), { 'content-type': 'application/yaml' });
    expect(suite).toMatchObject({ status: 400, body: { error: { issues: [{ code: 'document_too_large' }] } } });
    expect(await campaigns()).toBe(before);
  });

  test('oversized keys and strings are refused with a short answer', async () => {
    const parameters = Object.fromEntries(range(8).map((i) => [`${i}${'k'.repeat(60_000)}`, ['v'.repeat(40_000)]]));
    const res = await send('POST', '/v1/campaigns?project=default', JSON.stringify(importSpec({ parameters, description: 'd'.repeat(100_000) })));
    expect(res.status).toBe(400);
    // The body is 800 KB; the answer names each problem in a line, not the keys in full.
    expect(res.bytes).toBeLessThan(16_000);
    expect(res.body.error.issues.map((i: { path: string }) => i.path)).toContainEqual(expect.stringMatching(/^parameters\["0k{79}…"\]$/));
    expect(res.body.error.issues).toContainEqual(expect.objectContaining({ path: 'description', code: 'too_big' }));
  });

  test('a spec with 40,000 wrong exclude values answers with at most 100 short issues', async () => {
    const exclude = range(1000).map(() => ({ a: range(40).map((k) => 5000 + k) }));
    const res = await send('POST', '/v1/campaigns?project=default', JSON.stringify(importSpec({ parameters: { a: range(1000) }, exclude })));
    expect(res.status).toBe(400);
    expect(res.body.error.issues).toHaveLength(101);
    expect(res.bytes).toBeLessThan(64_000);
  });

  describe('telemetry', () => {
    const post = (payload: Buffer | string, headers: Record<string, string> = {}) => send('POST', `/v1/runs/${runId}/telemetry`, payload, headers);

    test('40,000 empty series in 5 KB of gzip are refused at once by their number (they took 5 s and were stored as nothing)', async () => {
      const body = gzipSync(JSON.stringify({ node: 'n1', seq: 1, samples: range(40_000).map(() => ({ sensor: 'gpu0.power', t: [], v: [] })) }));
      expect(body.length).toBeLessThan(6_000);
      const res = await post(body, { 'content-encoding': 'gzip' });
      expect(res.status).toBe(400);
      expect(res.body.error.issues).toEqual([{ path: 'samples', code: 'too_big', message: expect.stringContaining(`at most ${MAX_BATCH_SERIES}`) }]);
    });

    test('empty series under the cap are refused too, naming the entry', async () => {
      const res = await post(JSON.stringify({ node: 'n1', seq: 2, samples: range(5000).map((i) => ({ sensor: `gpu${i % 100}.power`, t: [], v: [] })) }));
      expect(res.status).toBe(400);
      expect(res.body.error.issues[0]).toEqual({ path: 'samples[0]', code: 'too_small', message: 'gpu0.power has an empty column; send at least one sample, or leave the sensor out' });
      expect(await telemetrySummary(t.db, runId)).toEqual([]);
    });

    test('the largest batch (200,000 samples, about 7 MiB, decoded in a worker) is stored whole', async () => {
      const start = Date.now() - 300_000;
      const ts = range(25_000).map((i) => start + i * 10.123456789);
      const body = JSON.stringify({ node: 'n1', seq: 3, samples: range(8).map((g) => ({ sensor: `gpu${g}.power`, t: ts, v: ts.map((_, i) => 250.123456789 + (i % 97)) })) });
      expect(body.length).toBeGreaterThan(6 * 1024 * 1024);
      expect(await post(body)).toMatchObject({ status: 200, body: { accepted: 200_000, duplicate: false } });
    });
  });
});
