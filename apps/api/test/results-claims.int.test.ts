import { computeDueEnergy, startTestApi, type TestApi } from './helpers';

/** What an agent says of its node in its first batch (it links the run to the node: run_nodes). */
function fingerprint(node: string) {
  return {
    node, hostname: node, kernel: '6.1.0', arch: 'x86_64', cpuModel: null, cpuCount: 8, gpus: [], driverVersion: null, cudaVersion: null, nvmlVersion: null,
    slurmVersion: null, container: null, modules: [], workload: null, agentVersion: '0.1.0',
  };
}

describe('GET /v1/campaigns/:id/results: claims at the spec confidence, and node effects', () => {
  let t: TestApi;

  async function call(method: string, url: string, body?: unknown) {
    const res = await t.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${t.token}` }, ...(body === undefined ? {} : { payload: body as object }) });
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json();
  }

  beforeAll(async () => {
    t = await startTestApi();
  });
  afterAll(async () => {
    await t.close();
  });

  test("the claims are at design.confidence; each run's node is the one its agent reported from", async () => {
    const campaign = await call('POST', '/v1/campaigns', { name: 'claims', execution: 'import', repetitions: 3, parameters: { n: [1, 2] }, design: { confidence: 0.9 } });
    const start = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
    // Every run lasts 10 s; n=2 draws twice the power of n=1. n=1 ran on n1, n2, n1; n=2 only on n2.
    const plan: Record<string, { node: string; watts: number }[]> = {
      'n=1': [{ node: 'n1', watts: 100 }, { node: 'n2', watts: 102 }, { node: 'n1', watts: 98 }],
      'n=2': [{ node: 'n2', watts: 200 }, { node: 'n2', watts: 204 }, { node: 'n2', watts: 196 }],
    };
    for (const run of campaign.runs as { id: string; configurationKey: string; repetition: number }[]) {
      const { node, watts } = plan[run.configurationKey]![run.repetition - 1]!;
      const ts = Array.from({ length: 101 }, (_, k) => start + k * 100);
      await call('POST', `/v1/runs/${run.id}/telemetry`, { node, seq: 0, fingerprint: fingerprint(node), samples: [{ sensor: 'gpu0.power', t: ts, v: ts.map(() => watts) }] });
      await call('POST', `/v1/runs/${run.id}/finish`, { startedAt: new Date(start).toISOString(), endedAt: new Date(start + 10_000).toISOString() });
    }
    await computeDueEnergy(t.db);
    const results = await call('GET', `/v1/campaigns/${campaign.id}/results`);

    expect(results.claims.confidence).toBe(0.9);
    // Equal times cannot be told apart; twice the energy can.
    expect(results.claims.ranks.find((r: { objective: string }) => r.objective === 'time')).toMatchObject({ best: 'n=1', tiedWith: ['n=2'], distinguishable: false });
    expect(results.claims.ranks.find((r: { objective: string }) => r.objective === 'energy')).toMatchObject({ best: 'n=1', tiedWith: [], distinguishable: true });
    expect(results.claims.comparisons.find((c: { id: string }) => c.id === 'energy:n=1|n=2')).toMatchObject({ reference: 'n=1', other: 'n=2', distinguishable: true, n: [3, 3] });
    expect(results.claims.summary).toMatch(/^at 90 % \(Holm over \d+ comparisons\): fastest n=1, tied with n=2; least energy n=1; /);

    expect(results.nodes.nodes).toBe(2);
    expect(results.nodes.effects.map((e: { node: string; runs: number }) => [e.node, e.runs])).toEqual([['n2', 4], ['n1', 2]]);
    expect(results.nodes.confounded).toEqual([{ key: 'n=2', node: 'n2', runs: 3 }]);
    expect(results.nodes.note).toContain('at 90 %');
  });

  test('one node: no node effects; one configuration: no claims', async () => {
    const campaign = await call('POST', '/v1/campaigns', { name: 'single', execution: 'import', repetitions: 2, parameters: { n: [1] } });
    const start = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
    for (const run of campaign.runs as { id: string }[]) {
      const ts = Array.from({ length: 101 }, (_, k) => start + k * 100);
      await call('POST', `/v1/runs/${run.id}/telemetry`, { node: 'n1', seq: 0, fingerprint: fingerprint('n1'), samples: [{ sensor: 'gpu0.power', t: ts, v: ts.map(() => 100) }] });
      await call('POST', `/v1/runs/${run.id}/finish`, { startedAt: new Date(start).toISOString(), endedAt: new Date(start + 10_000).toISOString() });
    }
    await computeDueEnergy(t.db);
    const results = await call('GET', `/v1/campaigns/${campaign.id}/results`);
    expect(results.claims).toBeNull();
    expect(results.nodes).toBeNull();
  });
});
