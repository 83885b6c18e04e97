// Campaigns of many runs from short specs: validated in the worker thread when they expand to
// many configurations, and answered (POST, GET results) as a stream of slices when the answer is
// large — with the same content the schema-checked answer has. The worker runs
// apps/api/dist/offload-worker.js: build first (npx turbo run build).
import { z } from 'zod';
import { listCampaignRuns } from '@erg/db';
import { campaignResultsView } from '@erg/results';
import { CampaignCreated, CampaignResults } from '@erg/spec';
import { Offload } from '../src/offload';
import { JSON_SLICE_ITEMS } from '../src/json-stream';
import { OFFLOAD_ABOVE_CONFIGURATIONS } from '../src/services/campaigns';
import { computeDueEnergy, startTestApi, type TestApi } from './helpers';

const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe('large campaigns from short specs', () => {
  let t: TestApi;

  async function send(method: 'GET' | 'POST', url: string, body?: unknown) {
    return t.app.inject({ method, url, headers: { authorization: `Bearer ${t.token}` }, ...(body === undefined ? {} : { payload: body as object }) });
  }

  beforeAll(async () => {
    t = await startTestApi();
  });
  afterAll(async () => {
    await t.close();
  });
  afterEach(() => jest.restoreAllMocks());

  test(`a spec of a few hundred bytes that expands to more than ${OFFLOAD_ABOVE_CONFIGURATIONS} configurations is validated in the worker; a small one inline`, async () => {
    const run = jest.spyOn(Offload.prototype, 'run');
    const small = await send('POST', '/v1/campaigns?project=default', { name: 'small', execution: 'import', parameters: { a: range(10) } });
    expect(small.statusCode).toBe(201);
    expect(run).not.toHaveBeenCalled();
    const spec = { name: 'wide', execution: 'import', parameters: { a: range(1000), b: range(OFFLOAD_ABOVE_CONFIGURATIONS / 1000 + 1) } };
    expect(JSON.stringify(spec).length).toBeLessThan(16 * 1024);
    const wide = await send('POST', '/v1/campaigns?project=default', spec);
    expect(wide.statusCode).toBe(201);
    expect(run).toHaveBeenCalledTimes(1);
    expect(run.mock.calls[0]![0]).toMatchObject({ kind: 'campaign', yaml: false });
    expect(wide.json().totalRuns).toBe(OFFLOAD_ABOVE_CONFIGURATIONS + 1000);
  });

  test('so is such a spec sent as YAML', async () => {
    const run = jest.spyOn(Offload.prototype, 'run');
    const yaml = `name: wide-yaml\nexecution: import\nparameters:\n  a: [${range(1000).join(', ')}]\n  b: [${range(OFFLOAD_ABOVE_CONFIGURATIONS / 1000 + 1).join(', ')}]\n`;
    const res = await t.app.inject({ method: 'POST', url: '/v1/campaigns?project=default', headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/yaml' }, payload: yaml });
    expect(res.statusCode).toBe(201);
    expect(run).toHaveBeenCalledTimes(1);
  });

  test(`an answer of more than ${JSON_SLICE_ITEMS} runs is streamed, with every configuration and run as the schema says`, async () => {
    const res = await send('POST', '/v1/campaigns?project=default', { name: 'streamed', execution: 'import', repetitions: 3, parameters: { a: range(1000), s: ['gh200.x'] } });
    expect(res.statusCode).toBe(201);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = CampaignCreated.parse(res.json());
    expect(body).toMatchObject({ name: 'streamed', state: 'pending', totalRuns: 3000, runCounts: { pending: 3000 } });
    expect(body.configurations).toHaveLength(1000);
    expect(body.configurations[999]).toEqual({ key: 'a=1000;s=gh200.x', parameters: { a: 1000, s: 'gh200.x' } });
    const stored = await listCampaignRuns(t.db, body.id);
    expect(body.runs).toEqual(stored.items.map((r) => ({ id: r.id, configurationKey: r.configurationKey, repetition: r.repetition })));
  });

  test('results of more than one slice of configurations are streamed with what the schema-checked answer holds', async () => {
    const campaign = (await send('POST', '/v1/campaigns?project=default', { name: 'results', execution: 'import', parameters: { a: range(300) } })).json();
    const start = Date.now() - 3_600_000;
    // Three runs with figures, one finished without telemetry (left out), the rest not finished (excluded).
    for (const [i, run] of campaign.runs.slice(0, 4).entries()) {
      const tt = Array.from({ length: 71 }, (_, k) => start + i * 10_000 - 1000 + k * 100);
      if (i < 3) expect((await send('POST', `/v1/runs/${run.id}/telemetry`, { node: 'n1', seq: 0, samples: [{ sensor: 'cpu0.power', t: tt, v: tt.map(() => 100 + i) }] })).statusCode).toBe(200);
      const finished = await send('POST', `/v1/runs/${run.id}/finish`, { startedAt: new Date(start + i * 10_000).toISOString(), endedAt: new Date(start + i * 10_000 + 5000).toISOString() });
      expect(finished.statusCode).toBe(202);
    }
    await computeDueEnergy(t.db);
    const res = await send('GET', `/v1/campaigns/${campaign.id}/results`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const expected = JSON.parse(JSON.stringify(z.encode(CampaignResults, { campaignId: campaign.id, ...(await campaignResultsView(t.db, campaign.id)) })));
    expect(res.json()).toEqual(expected);
    expect(expected.configurations).toHaveLength(300);
    expect(expected.runsLeftOut).toHaveLength(1);
    expect(expected.excluded).toHaveLength(297);
  });
});
