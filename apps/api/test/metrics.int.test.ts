import { generateKeyPairSync } from 'node:crypto';
import pino from 'pino';
import { parsePrometheusText, sampleValue, waitFor } from '@erg/testkit';
import { startTestApi, type TestApi } from './helpers';

const CLUSTER = {
  host: '127.0.0.1', port: 2222, user: 'root',
  privateKey: generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  hostKeySha256: 'SHA256:' + 'A'.repeat(43), workDir: '/var/lib/erg-test',
};
/** 2 configurations × 3 repetitions = 6 pending runs; nothing submits them (no scheduler here). */
const SPEC = { name: 'metrics', cluster: 'metrics-a', repetitions: 3, parameters: { n: [1, 2] }, run: 'echo {{n}}' };
const IMPORT_SPEC = { name: 'imported', execution: 'import', parameters: { n: [1] } };

async function call(t: TestApi, method: string, url: string, body?: unknown) {
  const res = await t.app.inject({
    method: method as 'GET', url, headers: { authorization: `Bearer ${t.token}` },
    ...(body === undefined ? {} : { payload: body as object }),
  });
  return { status: res.statusCode, body: res.json() };
}

async function scrape(t: TestApi, headers: Record<string, string> = {}) {
  const res = await t.app.inject({ url: '/metrics', headers });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(res.body);
}

describe('GET /metrics (Postgres + Redis)', () => {
  let t: TestApi;
  /** An open /metrics labels runs by cluster id (names only behind ERG_METRICS_TOKEN; see below). */
  let clusterA: string;

  beforeAll(async () => {
    t = await startTestApi();
    const put = await call(t, 'PUT', '/v1/clusters/metrics-a', CLUSTER);
    expect(put.status).toBe(200);
    clusterA = put.body.id;
  });
  afterAll(async () => {
    await t.close();
  });

  test('runs by cluster and state come from Postgres, cached for a few seconds', async () => {
    expect((await call(t, 'POST', '/v1/campaigns', SPEC)).status).toBe(201);
    expect((await call(t, 'POST', '/v1/campaigns', IMPORT_SPEC)).status).toBe(201);
    const first = await scrape(t);
    expect(sampleValue(first, 'erg_runs', { cluster: clusterA, state: 'pending' })).toBe(6);
    // Runs of import campaigns have no cluster.
    expect(sampleValue(first, 'erg_runs', { cluster: '(none)', state: 'pending' })).toBe(1);
    // Every state is present, at zero, so a state that empties does not leave a gap.
    expect(sampleValue(first, 'erg_runs', { cluster: clusterA, state: 'completed' })).toBe(0);
    // The campaign asked the scheduler for a cycle: the queue gauge sees BullMQ's counts.
    expect(sampleValue(first, 'erg_queue_jobs', { state: 'waiting' })).toBeGreaterThanOrEqual(1);
    expect(first.some((s) => s.name === 'erg_api_process_cpu_user_seconds_total')).toBe(true);

    expect((await call(t, 'POST', '/v1/campaigns', SPEC)).status).toBe(201);
    // Within the cache window the count is the one just computed, not a fresh GROUP BY ...
    expect(sampleValue(await scrape(t), 'erg_runs', { cluster: clusterA, state: 'pending' })).toBe(6);
    // ... and once it expires, the new campaign's runs are counted.
    await waitFor(async () => sampleValue(await scrape(t), 'erg_runs', { cluster: clusterA, state: 'pending' }) === 12, {
      timeoutMs: 15_000, intervalMs: 500, what: 'erg_runs to count the second campaign',
    });
  }, 30_000);

  test('a telemetry batch adds its sample count; a duplicate and an invalid batch are counted by outcome', async () => {
    const created = await call(t, 'POST', '/v1/campaigns', IMPORT_SPEC);
    expect(created.status).toBe(201);
    const runId = created.body.runs[0].id as string;
    const before = await scrape(t);
    const samplesBefore = sampleValue(before, 'erg_telemetry_samples_total') ?? 0;
    const storedBefore = sampleValue(before, 'erg_telemetry_batches_total', { outcome: 'stored' }) ?? 0;
    const ingestBefore = sampleValue(before, 'erg_telemetry_ingest_seconds_count') ?? 0;

    const now = Date.now() - 5000;
    const batch = { node: 'n1', seq: 0, samples: [{ sensor: 'cpu0.power', t: [now, now + 100, now + 200, now + 300, now + 400], v: [90, 91, 92, 93, 94] }] };
    expect((await call(t, 'POST', `/v1/runs/${runId}/telemetry`, batch)).body).toEqual({ accepted: 5, duplicate: false });
    expect((await call(t, 'POST', `/v1/runs/${runId}/telemetry`, batch)).body).toEqual({ accepted: 0, duplicate: true });
    const invalid = { node: 'n1', seq: 1, samples: [{ sensor: 'cpu0.power', t: [now], v: [-1] }] };
    expect((await call(t, 'POST', `/v1/runs/${runId}/telemetry`, invalid)).status).toBe(400);

    const after = await scrape(t);
    expect(sampleValue(after, 'erg_telemetry_samples_total')).toBe(samplesBefore + 5);
    expect(sampleValue(after, 'erg_telemetry_batches_total', { outcome: 'stored' })).toBe(storedBefore + 1);
    expect(sampleValue(after, 'erg_telemetry_batches_total', { outcome: 'duplicate' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(after, 'erg_telemetry_batches_total', { outcome: 'rejected' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(after, 'erg_telemetry_ingest_seconds_count')).toBe(ingestBefore + 2);
  });

  test('request latency is recorded under the route pattern, never the URL', async () => {
    const created = await call(t, 'POST', '/v1/campaigns', IMPORT_SPEC);
    const runId = created.body.runs[0].id as string;
    expect((await call(t, 'GET', `/v1/runs/${runId}`)).status).toBe(200);
    const samples = await scrape(t);
    const labels = { method: 'GET', route: '/v1/runs/:id', status_code: '200' };
    expect(sampleValue(samples, 'erg_http_request_duration_seconds_count', labels)).toBeGreaterThanOrEqual(1);
    expect(sampleValue(samples, 'erg_http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBeGreaterThanOrEqual(1);
    expect(samples.filter((s) => s.labels.route?.includes(runId))).toEqual([]);
  });
});

describe('GET /metrics with ERG_METRICS_TOKEN', () => {
  const METRICS_TOKEN = 'scrape-secret-0123456789';
  let t: TestApi;

  beforeAll(async () => {
    t = await startTestApi({ ERG_METRICS_TOKEN: METRICS_TOKEN });
  });
  afterAll(async () => {
    await t.close();
  });

  test('needs that token: none, a wrong one or an API token is 401', async () => {
    for (const authorization of [undefined, 'Bearer wrong-secret-0123456789', `Bearer ${t.token}`]) {
      const res = await t.app.inject({ url: '/metrics', headers: authorization ? { authorization } : {} });
      expect(res.statusCode).toBe(401);
      expect(res.json().error.code).toBe('ERG_UNAUTHORIZED');
    }
    const samples = await scrape(t, { authorization: `Bearer ${METRICS_TOKEN}` });
    expect(samples.some((s) => s.name === 'erg_http_request_duration_seconds_count')).toBe(true);
  });

  test('behind the token, runs are labelled by cluster name', async () => {
    expect((await call(t, 'PUT', '/v1/clusters/metrics-b', CLUSTER)).status).toBe(200);
    expect((await call(t, 'POST', '/v1/campaigns', { ...SPEC, cluster: 'metrics-b' })).status).toBe(201);
    // The run counts are cached for 5 s: the earlier scrape's may still be served.
    await waitFor(async () => sampleValue(await scrape(t, { authorization: `Bearer ${METRICS_TOKEN}` }), 'erg_runs', { cluster: 'metrics-b', state: 'pending' }) === 6, {
      timeoutMs: 15_000, intervalMs: 500, what: 'erg_runs to count metrics-b by name',
    });
  }, 30_000);
});

describe('request logs carry campaign and run ids', () => {
  test('a request to /v1/runs/:id logs that runId; /v1/campaigns/:id/runs logs the campaignId', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const t = await startTestApi({}, { logger });
    const { app, token } = t;
    try {
      const headers = { authorization: `Bearer ${token}` };
      const created = await app.inject({ method: 'POST', url: '/v1/campaigns', headers, payload: IMPORT_SPEC });
      const campaignId = created.json().id as string;
      const runId = created.json().runs[0].id as string;
      expect((await app.inject({ url: `/v1/runs/${runId}`, headers })).statusCode).toBe(200);
      expect((await app.inject({ url: `/v1/campaigns/${campaignId}/runs`, headers })).statusCode).toBe(200);

      const completed = lines.filter((l) => l.msg === 'request completed');
      expect(completed.find((l) => l.runId === runId)).toMatchObject({ runId, res: { statusCode: 200 } });
      expect(completed.find((l) => l.campaignId === campaignId)).toMatchObject({ campaignId, res: { statusCode: 200 } });
      // The POST that created them had no id in its route, and the bearer token is never logged.
      expect(lines.map((l) => JSON.stringify(l)).filter((l) => l.includes(token))).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
