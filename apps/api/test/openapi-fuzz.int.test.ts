// Property-based fuzzing of the API from its own OpenAPI document (what schemathesis does, in JS):
// for every operation the API serves at /openapi.json, requests are generated from the
// document's schemas — valid ones, near misses (one part replaced by any JSON value) and plain
// junk — with path parameters drawn from real and made-up ids, sent over HTTP with tokens of
// every kind. Every response must be below 500, match the schema documented for its status, and
// carry the error envelope when it is a 4xx; meanwhile /healthz, polled from the same process,
// must keep answering (nothing a request does may stall the event loop).
//   ERG_FUZZ_RUNS=500 npx jest --selectProjects integration --runTestsByPath apps/api/test/openapi-fuzz.int.test.ts
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { closedPort, repoRoot } from '@erg/testkit';
import { arbitraryFor, type JsonSchema } from './openapi-arbitrary';
import { openApiValidator, type OpenApiValidator } from './openapi-validate';
import { computeDueEnergy, startTestApi, type TestApi } from './helpers';

const RUNS = Number(process.env['ERG_FUZZ_RUNS'] ?? 25);
/** A key the cluster routes accept (they parse it), for bodies meant to reach the handlers. */
const CLUSTER_KEY = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

interface Parameter { name: string; in: 'path' | 'query' | 'header'; required?: boolean; schema: JsonSchema }
interface Operation {
  method: string;
  path: string;
  parameters: Parameter[];
  body: JsonSchema | null;
  responses: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>;
}

interface Request {
  token: string | null;
  url: string;
  headers: Record<string, string>;
  body: { type: string; text: string } | null;
}

/** What the seeded world holds, by kind: path and query parameters are drawn from these (and from made-up values). */
interface World {
  campaigns: string[];
  runs: string[];
  importRuns: string[];
  tokens: string[];
  suiteRuns: string[];
  suites: string[];
  clusters: string[];
  projects: string[];
  users: string[];
}

/** The pool a parameter's real values come from, by where it appears. */
function poolFor(op: Operation, name: string, world: World): string[] {
  if (name === 'user' || name === 'owner' || name === 'actor') return world.users;
  if (name === 'runId') return world.suiteRuns;
  if (name === 'project') return world.projects;
  if (name === 'cluster') return world.clusters;
  if (name === 'baseline' || name === 'campaign') return world.campaigns;
  if (name === 'run') return world.runs;
  const collection = /^\/v1\/(\w+)/.exec(op.path)?.[1];
  switch (collection) {
    case 'campaigns': return world.campaigns;
    case 'runs': return world.runs.concat(world.importRuns);
    case 'tokens': return world.tokens;
    case 'suites': return world.suites;
    case 'clusters': return world.clusters;
    case 'projects': return world.projects;
    case 'users': return world.users;
    default: return [];
  }
}

function operationsOf(document: JsonSchema): Operation[] {
  const ops: Operation[] = [];
  for (const [p, methods] of Object.entries(document['paths'] as Record<string, Record<string, Record<string, unknown>>>)) {
    for (const [method, op] of Object.entries(methods)) {
      const content = (op['requestBody'] as { content?: Record<string, { schema?: JsonSchema }> } | undefined)?.content;
      ops.push({
        method: method.toUpperCase(),
        path: p,
        parameters: (op['parameters'] ?? []) as Parameter[],
        body: content?.['application/json']?.schema ?? null,
        responses: (op['responses'] ?? {}) as Operation['responses'],
      });
    }
  }
  return ops;
}

const JUNK_SEGMENT = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom('..', '%2e%2e', 'a'.repeat(300), '00000000-0000-0000-0000-000000000000', 'ZZZZZZZZ-0000-0000-0000-000000000000', '%00', '${IFS}', '__proto__'),
);

function pathParameter(op: Operation, p: Parameter, world: World, document: JsonSchema): fc.Arbitrary<string> {
  const known = poolFor(op, p.name, world);
  return fc.oneof(
    { arbitrary: known.length > 0 ? fc.constantFrom(...known) : JUNK_SEGMENT, weight: 6 },
    { arbitrary: arbitraryFor(p.schema, { document }).map(String), weight: 1 },
    { arbitrary: JUNK_SEGMENT, weight: 1 },
  );
}

function queryValue(op: Operation, p: Parameter, world: World, document: JsonSchema): fc.Arbitrary<string | undefined> {
  const known = p.in === 'query' ? poolFor({ ...op, path: '' }, p.name, world) : [];
  return fc.oneof(
    { arbitrary: fc.constant(undefined), weight: p.required ? 0 : 2 },
    { arbitrary: known.length > 0 ? fc.constantFrom(...known) : fc.constant(undefined), weight: known.length > 0 ? 3 : 0 },
    { arbitrary: arbitraryFor(p.schema, { document }).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))), weight: 3 },
    { arbitrary: fc.string({ maxLength: 30 }), weight: 1 },
  );
}

/** Valid-in-context bodies (they name the seeded cluster, a real role…), so requests also reach the handlers' happy paths. */
function exampleBodies(op: Operation, world: World): fc.Arbitrary<unknown> | null {
  const values = fc.uniqueArray(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 3 });
  const campaign = fc.record({ name: fc.string({ minLength: 1, maxLength: 20, unit: 'grapheme-ascii' }), n: values, reps: fc.integer({ min: 1, max: 3 }) })
    .map(({ name, n, reps }) => ({ name, cluster: world.clusters[0], repetitions: reps, parameters: { n }, run: 'echo {{n}}' }));
  const suiteName = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/);
  const clusterBody = fc.record({ port: fc.integer({ min: 1, max: 65535 }), workDir: fc.constantFrom('/tmp/erg-fuzz', '/scratch/erg') })
    .map(({ port, workDir }) => ({ host: '127.0.0.1', port, user: 'erg', privateKey: CLUSTER_KEY, hostKeySha256: `SHA256:${'A'.repeat(43)}`, workDir }));
  switch (`${op.method} ${op.path}`) {
    case 'POST /v1/clusters':
      return fc.tuple(clusterBody, fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/)).map(([body, name]) => ({ ...body, name }));
    case 'PUT /v1/clusters/{name}':
      return clusterBody;
    case 'POST /v1/campaigns':
      return fc.oneof(campaign, fc.record({ name: fc.constant('imp'), execution: fc.constant('import'), repetitions: fc.integer({ min: 1, max: 3 }) }));
    case 'POST /v1/suites':
      return fc.record({ name: suiteName, campaign });
    case 'PUT /v1/suites/{name}':
      return fc.record({ name: fc.constant(world.suites[0]), campaign });
    case 'POST /v1/runs/{id}/finish':
      return fc.integer({ min: 1, max: 3600 }).map((s) => ({ startedAt: new Date(Date.now() - s * 1000).toISOString(), endedAt: new Date().toISOString() }));
    case 'PUT /v1/projects/{name}/members/{user}':
      return fc.record({ role: fc.constantFrom('viewer', 'researcher', 'maintainer') });
    case 'PUT /v1/projects/{name}/cluster-policy':
      // Loopback stays allowed (the seeded clusters are there), with some other entries of each kind.
      return fc.subarray(['ci.internal', '*.cluster.internal', '10.20.0.0/16', 'fd00:1::/64']).map((more) => ({ allowHosts: ['127.0.0.1', ...more] }));
    case 'POST /v1/runs/{id}/telemetry':
      return fc.record({
        node: fc.constantFrom('n1', 'n2'),
        seq: fc.integer({ min: 0, max: 1000 }),
        samples: fc.constant([{ sensor: 'cpu0.power', t: [Date.now() - 1000, Date.now()], v: [100, 120] }]),
      });
    default:
      return null;
  }
}

function bodyOf(op: Operation, world: World, document: JsonSchema): fc.Arbitrary<Request['body']> {
  const json = (v: unknown) => ({ type: 'application/json', text: JSON.stringify(v) ?? 'null' });
  const options: Array<{ arbitrary: fc.Arbitrary<Request['body']>; weight: number }> = [
    { arbitrary: fc.jsonValue({ maxDepth: 4 }).map(json), weight: 1 },
    { arbitrary: fc.string({ maxLength: 200 }).map((text) => ({ type: 'application/json', text })), weight: 1 },
  ];
  if (op.body) {
    options.push({ arbitrary: arbitraryFor(op.body, { document }).map(json), weight: 4 });
    options.push({ arbitrary: arbitraryFor(op.body, { document, junk: 0.03 }).map(json), weight: 4 });
    const example = exampleBodies(op, world);
    if (example) options.push({ arbitrary: example.map(json), weight: 6 });
  }
  // Shapes that cost the server if it is careless: deep nesting, very many keys, one huge string.
  options.push({
    arbitrary: fc.constantFrom(
      '['.repeat(5000) + ']'.repeat(5000),
      JSON.stringify(Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, i]))),
      JSON.stringify({ name: 'x'.repeat(300_000) }),
    ).map((text) => ({ type: 'application/json', text })),
    weight: 1,
  });
  if (op.method === 'POST' || op.method === 'PUT') {
    // The spec routes also take YAML; any text must be a 4xx at worst.
    options.push({ arbitrary: fc.string({ maxLength: 300 }).map((text) => ({ type: 'application/yaml', text })), weight: 1 });
  }
  if (op.method === 'GET' || op.method === 'DELETE') return fc.constant(null);
  return fc.oneof(...options);
}

function requestFor(op: Operation, world: World, document: JsonSchema, tokens: string[]): fc.Arbitrary<Request> {
  const pathParams = op.parameters.filter((p) => p.in === 'path');
  const queryParams = op.parameters.filter((p) => p.in === 'query');
  const headerParams = op.parameters.filter((p) => p.in === 'header');
  return fc.record({
    token: fc.constantFrom<string | null>(...tokens, null, 'erg_not-a-token-at-all-xxxxxxxxxxxxxxxx'),
    segments: fc.tuple(...pathParams.map((p) => pathParameter(op, p, world, document))),
    query: fc.tuple(...queryParams.map((p) => queryValue(op, p, world, document))),
    headers: fc.tuple(...headerParams.map((p) => queryValue(op, p, world, document))),
    body: bodyOf(op, world, document),
  }).map(({ token, segments, query, headers, body }) => {
    let url = op.path;
    pathParams.forEach((p, i) => (url = url.replace(`{${p.name}}`, encodeURIComponent(segments[i]!))));
    const search = new URLSearchParams();
    queryParams.forEach((p, i) => query[i] !== undefined && search.append(p.name, query[i]!));
    const h: Record<string, string> = {};
    headerParams.forEach((p, i) => headers[i] !== undefined && (h[p.name] = headers[i]!.replace(/[^\x20-\x7e]/g, '')));
    return { token, url: search.size > 0 ? `${url}?${search}` : url, headers: h, body };
  });
}

/** Polls /healthz every 20 ms and keeps each answer's latency. */
function pollHealth(base: string): { stop(): Promise<number[]> } {
  const latencies: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const start = performance.now();
      await fetch(`${base}/healthz`).then((r) => r.arrayBuffer()).catch(() => undefined);
      latencies.push(performance.now() - start);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return latencies;
    },
  };
}

describe('the API from its own OpenAPI document, fuzzed (Postgres + Redis)', () => {
  let t: TestApi;
  let base: string;
  let document: JsonSchema;
  let validator: OpenApiValidator;
  let operations: Operation[];
  const world: World = { campaigns: [], runs: [], importRuns: [], tokens: [], suiteRuns: [], suites: [], clusters: [], projects: [], users: [] };
  const tokens: string[] = [];
  let health: ReturnType<typeof pollHealth>;
  /** Each operation's generated requests (fixed seed), made before /healthz is polled. */
  const samples = new Map<Operation, Request[]>();

  beforeAll(async () => {
    // Limits high enough that the fuzzer exercises routes rather than the rate limiter.
    t = await startTestApi({ ERG_RATE_LIMIT_MUTATIONS: '1000000', ERG_RATE_LIMIT_TELEMETRY: '1000000', ERG_RATE_LIMIT_EXPENSIVE_READS: '1000000' });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const address = t.app.server.address() as { port: number };
    base = `http://127.0.0.1:${address.port}`;
    document = (await (await fetch(`${base}/openapi.json`)).json()) as JsonSchema;
    validator = openApiValidator(document);
    // Creations first, deletions last, so that what one operation removes does not starve the
    // others; deactivations with them, and reactivations after (a deactivated project refuses most changes).
    const order = (o: Operation) =>
      o.path.endsWith('/reactivate') ? 4 : o.path.endsWith('/cancel') || o.path.endsWith('/deactivate') ? 3 : (({ POST: 0, PUT: 1, GET: 2, DELETE: 3 })[o.method] ?? 2);
    operations = operationsOf(document).sort((a, b) => order(a) - order(b));

    const admin = async (method: string, url: string, body?: unknown) => {
      const res = await t.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${t.token}` }, ...(body === undefined ? {} : { payload: body as object }) });
      if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
      return res.json();
    };
    await admin('POST', '/v1/projects', { name: 'fz' });
    // Its cluster is on loopback: the admin allows that, as for the quickstart.
    await admin('PUT', '/v1/projects/fz/cluster-policy', { allowHosts: ['127.0.0.1'] });
    await admin('POST', '/v1/clusters?project=fz', {
      name: 'fz-cluster', host: '127.0.0.1', port: await closedPort(), user: 'erg', privateKey: CLUSTER_KEY, hostKeySha256: `SHA256:${'A'.repeat(43)}`, workDir: '/tmp/erg-fuzz',
    });
    const slurm = await admin('POST', '/v1/campaigns', { name: 'fz', cluster: 'fz-cluster', parameters: { n: [1, 2] }, run: 'echo {{n}}', metrics: [{ name: 'x', regex: 'x=([0-9]+)' }] });
    const imported = await admin('POST', '/v1/campaigns?project=fz', { name: 'fz-import', execution: 'import', repetitions: 2 });
    const suite = await admin('POST', '/v1/suites', { name: 'fz-suite', campaign: { name: 'fz', cluster: 'fz-cluster', run: 'true' } });
    for (const role of ['viewer', 'researcher', 'maintainer'] as const) {
      await admin('POST', '/v1/users', { name: `fz-${role}` });
      await admin('PUT', `/v1/projects/fz/members/fz-${role}`, { role });
      const created = await admin('POST', '/v1/tokens', { name: `fz-${role}`, user: `fz-${role}` });
      tokens.push(created.token);
      world.tokens.push(created.id);
    }
    tokens.push(t.token);
    const suiteRun = await admin('POST', `/v1/suites/${suite.name}/trigger`);
    world.campaigns.push(slurm.id, imported.id, suiteRun.campaignId);
    world.runs.push(...slurm.runs.map((r: { id: string }) => r.id));
    world.importRuns.push(...imported.runs.map((r: { id: string }) => r.id));
    world.suiteRuns.push(suiteRun.id);
    world.suites.push(suite.name, 'no-such-suite');
    world.clusters.push('fz-cluster', 'no-such-cluster');
    world.projects.push('fz', 'default', 'no-such-project');
    world.users.push('fz-viewer', 'fz-researcher', 'fz-maintainer', 'admin', 'nobody');
    // The fuzzer's own synchronous work — generating the requests, compiling each response schema
    // (with the components it refers to: a second or more on a loaded machine) — is done before
    // /healthz is polled: it runs on the API's event loop, and the /healthz bound is about the API.
    for (const op of operations) {
      samples.set(op, fc.sample(requestFor(op, world, document, tokens), { numRuns: RUNS, seed: 20261130 }));
      for (const response of Object.values(op.responses)) {
        const schema = response.content?.['application/json']?.schema;
        if (schema) validator.compile(schema);
      }
    }
    health = pollHealth(base);
  }, 120_000);

  afterAll(async () => {
    await health?.stop(); // idempotent: the last test stops it first
    await t?.close();
  });

  test('the document lists the routes the app serves (the fuzzer covers every /v1 route)', () => {
    const documented = new Set(operations.map((o) => `${o.method} ${o.path.replace(/\{(\w+)\}/g, ':$1')}`));
    const served = t.app.accessRules.map((r) => `${r.method} ${r.url}`);
    expect(served.filter((r) => !documented.has(r))).toEqual([]);
  });

  /** Operations that answered 2xx at least once: the fuzzer reached their handlers, not only validation. */
  const reached = new Set<string>();

  /** What is wrong with one response, or null. */
  async function judge(op: Operation, req: Request): Promise<string | null> {
    const headers: Record<string, string> = { ...req.headers };
    if (req.token) headers['authorization'] = `Bearer ${req.token}`;
    if (req.body) headers['content-type'] = req.body.type;
    const controller = new AbortController();
    const res = await fetch(`${base}${req.url}`, { method: op.method, headers, body: req.body?.text, signal: controller.signal });
    const type = res.headers.get('content-type') ?? '';
    if (res.status < 300) reached.add(`${op.method} ${op.path}`);
    if (type.startsWith('text/event-stream')) {
      controller.abort(); // a live stream never ends; its status is the answer
      return res.status >= 500 ? `${res.status} on an event stream` : null;
    }
    const text = await res.text();
    // A run finished (or sent a late batch) owes its energy to the scheduler: computed here as it
    // would, so that the energy and phases routes have figures to answer with.
    if (res.status < 300 && op.method === 'POST' && /^\/v1\/runs\/\{id\}\/(finish|telemetry)$/.test(op.path)) await computeDueEnergy(t.db);
    const where = `${op.method} ${req.url} → ${res.status}`;
    if (res.status >= 500) return `${where}: ${text.slice(0, 300)}`;
    if (!type.includes('json') || text === '') return null;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return `${where}: content-type ${type} but the body is not JSON: ${text.slice(0, 100)}`;
    }
    if (res.status >= 400) {
      const error = (body as { error?: { code?: unknown; message?: unknown } }).error;
      if (typeof error?.code !== 'string' || typeof error.message !== 'string') return `${where}: a 4xx without { error: { code, message } }: ${text.slice(0, 200)}`;
    }
    const schema = op.responses[String(res.status)]?.content?.['application/json']?.schema;
    if (!schema) return null;
    const check = validator.compile(schema);
    return check(body) ? null : `${where}: the body does not match the documented schema: ${validator.errorsText(check)}`;
  }

  test('what the router refuses before any route (an over-long or malformed path) answers with the error envelope too', async () => {
    for (const url of [`/v1/runs/${'a'.repeat(500)}`, '/v1/campaigns/%E0%A4%A']) {
      const res = await fetch(`${base}${url}`, { headers: { authorization: `Bearer ${t.token}` } });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      const body = (await res.json()) as { error?: { code?: string; message?: string } };
      expect(body.error).toEqual({ code: expect.stringMatching(/^ERG_/), message: expect.any(String) });
      expect(body.error!.message.length).toBeLessThan(200); // the path is not echoed back whole
    }
  });

  test('every operation: no 5xx, documented response schemas, the error envelope on 4xx', async () => {
    const problems = new Map<string, string>();
    for (const op of operations) {
      for (const req of samples.get(op)!) {
        const problem = await judge(op, req);
        // One example per operation and status is enough to act on.
        if (problem) problems.set(`${op.method} ${op.path} ${/→ (\d+)/.exec(problem)?.[1] ?? ''}`, problem.slice(0, 600));
      }
    }
    expect([...problems.values()]).toEqual([]);
    // Generated requests must get past validation and access checks for most operations, or
    // the fuzzer only ever tests the 400 path.
    const missed = operations.map((o) => `${o.method} ${o.path}`).filter((o) => !reached.has(o));
    if (missed.length > 0) console.log(`operations that never answered 2xx: ${missed.join(', ')}`);
    expect(missed.length).toBeLessThanOrEqual(3);
  }, 600_000);

  test('/healthz kept answering while the fuzzer ran (nothing stalled the event loop)', async () => {
    const latencies = await health.stop();
    const sorted = [...latencies].sort((a, b) => a - b);
    const figures = { requestsPerOperation: RUNS, polls: sorted.length, medianMs: sorted[Math.floor(sorted.length / 2)], worstMs: sorted[sorted.length - 1] };
    const out = path.join(repoRoot(), 'test-artifacts');
    mkdirSync(out, { recursive: true });
    writeFileSync(path.join(out, 'openapi-fuzz-healthz.json'), `${JSON.stringify(figures)}\n`);
    expect(latencies.length).toBeGreaterThan(10);
    // A correctness bound (a stalled loop takes seconds), not a speed target: the figures are in test-artifacts.
    expect(Math.max(...latencies)).toBeLessThan(2000);
  });
});
