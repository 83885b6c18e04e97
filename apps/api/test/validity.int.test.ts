// Validity gates through the API (issue 26 §3): import runs whose telemetry is pushed as an agent
// pushes it, with its clock in x-erg-sent-at. The API stores each node's offset from the header;
// a run whose agent's clock is 5 s ahead fails clock_offset, one with a 4 s hole fails
// longest_gap; the campaign says it is not publishable, and ?valid=only (or the spec's
// validity.excludeInvalid, which verdicts follow too) leaves those runs out and counts them.
import { SENT_AT_HEADER } from '@erg/spec';
import { apiRequests, computeDueEnergy, startTestApi, type TestApi } from './helpers';

interface CreatedRun {
  id: string;
  repetition: number;
}

describe('validity gates (Postgres + Redis)', () => {
  let t: TestApi;
  const { call, ok } = apiRequests(() => t);

  /** Pushes one batch the way an agent does: its clock (or any header text) in x-erg-sent-at; null: no header. */
  async function push(runId: string, batch: unknown, sentAt: string | null) {
    const res = await t.app.inject({
      method: 'POST', url: `/v1/runs/${runId}/telemetry`, payload: batch as object,
      headers: { authorization: `Bearer ${t.token}`, ...(sentAt === null ? {} : { [SENT_AT_HEADER]: sentAt }) },
    });
    return { status: res.statusCode, body: res.json() };
  }

  /**
   * One import run: 100 W on node n over a 10 s window, sampled every 100 ms from a second before
   * it to a second after, pushed in two batches; `hole` leaves out the samples of (3 s, 7 s);
   * `skewMs` moves the agent's clock in the header (null: no header, a string: that header).
   */
  async function measure(runId: string, startMs: number, options: { hole?: boolean; skewMs?: number | null | string } = {}) {
    const all = Array.from({ length: 121 }, (_, i) => startMs - 1000 + i * 100);
    const ts = options.hole ? all.filter((x) => x <= startMs + 3000 || x >= startMs + 7000) : all;
    const half = Math.ceil(ts.length / 2);
    const skew = options.skewMs === undefined ? 0 : options.skewMs;
    for (const [seq, part] of [ts.slice(0, half), ts.slice(half)].entries()) {
      const sentAt = skew === null ? null : typeof skew === 'string' ? skew : String(Date.now() + skew);
      const answer = await push(runId, { node: 'n', seq, samples: [{ sensor: 'module0.power', t: part, v: part.map(() => 100) }] }, sentAt);
      expect(answer).toMatchObject({ status: 200, body: { duplicate: false } });
    }
    await ok('POST', `/v1/runs/${runId}/finish`, { startedAt: new Date(startMs).toISOString(), endedAt: new Date(startMs + 10_000).toISOString() });
    // The scheduler computes the finished run's energy (called here as its job would).
    await computeDueEnergy(t.db);
  }

  /** An import campaign of 4 runs of a=1 sampled every 100 ms: run 2 with a 4 s hole, run 3 with its agent 5 s ahead, run 4 without a clock. */
  async function campaign(validity: Record<string, unknown> = {}): Promise<{ id: string; runs: CreatedRun[] }> {
    const created = await ok('POST', '/v1/campaigns', { name: 'gates', execution: 'import', repetitions: 4, parameters: { a: [1] }, telemetry: { intervalMs: 100 }, validity });
    const start = Date.now() - 3_600_000;
    const run = (rep: number) => (created.runs as CreatedRun[]).find((r) => r.repetition === rep)!.id;
    await measure(run(1), start);
    await measure(run(2), start + 20_000, { hole: true });
    await measure(run(3), start + 40_000, { skewMs: 5_000 });
    await measure(run(4), start + 60_000, { skewMs: null });
    return created;
  }
  const runOf = (c: { runs: CreatedRun[] }, rep: number) => c.runs.find((r) => r.repetition === rep)!.id;
  const check = (energy: { validity: { checks: { check: string }[] } }, name: string) => energy.validity.checks.find((c) => c.check === name) as Record<string, unknown> & { value: number };

  beforeAll(async () => {
    t = await startTestApi();
  });
  afterAll(async () => {
    await t.close();
  });

  test("each node's clock offset comes from its pushes' x-erg-sent-at; an agent 5 s ahead fails clock_offset", async () => {
    const c = await campaign();
    const healthy = await ok('GET', `/v1/runs/${runOf(c, 1)}/energy`);
    expect(healthy.validity).toMatchObject({ valid: true, reasons: [], excluded: false });
    expect(check(healthy, 'clock_offset')).toMatchObject({ status: 'pass', limit: 1000, where: 'n (2 pushes)' });
    expect(healthy.flags).not.toContain('invalid');

    const skewed = await ok('GET', `/v1/runs/${runOf(c, 3)}/energy`);
    expect(skewed.validity.valid).toBe(false);
    // sentAt − receivedAt: 5 s less the request's latency, never more.
    expect(check(skewed, 'clock_offset')).toMatchObject({ status: 'fail', where: 'n (2 pushes)' });
    expect(check(skewed, 'clock_offset').value).toBeGreaterThan(4_000);
    expect(check(skewed, 'clock_offset').value).toBeLessThanOrEqual(5_001);
    expect(skewed.validity.reasons).toEqual([expect.stringMatching(/^agent clock \+[45],\d{3} ms from erg's server > 1,000 ms at n \(2 pushes\)$/)]);
    expect(skewed.flags).toContain('invalid');
    expect(skewed.warnings).toEqual(expect.arrayContaining([expect.stringMatching(/^invalid measurement: agent clock \+/)]));

    const holed = await ok('GET', `/v1/runs/${runOf(c, 2)}/energy`);
    expect(check(holed, 'longest_gap')).toMatchObject({ status: 'fail', value: 4, where: 'n module0.power' });

    // Telemetry without the header (an older agent, a spool pulled by the scheduler): not measured, not invalid.
    const unclocked = await ok('GET', `/v1/runs/${runOf(c, 4)}/energy`);
    expect(unclocked.validity.valid).toBe(true);
    expect(check(unclocked, 'clock_offset')).toMatchObject({ status: 'not_measured', value: null });
  });

  test('a malformed or far-off header is ignored and never costs the batch', async () => {
    const created = await ok('POST', '/v1/campaigns', { name: 'bad-clock', execution: 'import', repetitions: 3, parameters: { a: [1] }, telemetry: { intervalMs: 100 } });
    const start = Date.now() - 7_200_000;
    await measure(runOf(created, 1), start, { skewMs: 'yesterday' });
    await measure(runOf(created, 2), start + 20_000, { skewMs: String(Math.round(Date.now() / 1000)) });
    await measure(runOf(created, 3), start + 40_000, { skewMs: '-5' });
    for (const rep of [1, 2, 3]) {
      const energy = await ok('GET', `/v1/runs/${runOf(created, rep)}/energy`);
      expect(check(energy, 'clock_offset')).toMatchObject({ status: 'not_measured' });
      expect(energy.energyJ).toBeCloseTo(1000, 6);
    }
  });

  test('the campaign is not publishable while invalid runs count; ?valid=only leaves them out, lists them and counts them', async () => {
    const c = await campaign();
    const all = await ok('GET', `/v1/campaigns/${c.id}/results`);
    expect(all.validity).toMatchObject({ publishable: false, runs: 4, valid: 2, invalid: 2, unchecked: 0, excluded: 0 });
    // The hole costs 4 s of 10 s: the share of intervals kept fails with it.
    expect(all.validity.failures).toEqual({ sample_share: 1, longest_gap: 1, clock_offset: 1 });
    expect(all.validity.note).toMatch(
      /^2 of 4 runs invalid: 61\.0 % of the sample intervals expected every 100 ms kept < 95\.0 % at n module0\.power; longest gap 4 s > 3 s at n module0\.power; agent clock \+[45],\d{3} ms .*; they count, flagged invalid: leave them out with validity\.excludeInvalid or \?valid=only$/,
    );
    expect(all.configurations[0].n).toBe(4);
    expect(all.configurations[0].flaggedRuns).toEqual({ invalid: 2 });
    expect(all.runsLeftOut).toEqual([]);

    const validOnly = await ok('GET', `/v1/campaigns/${c.id}/results?valid=only`);
    expect(validOnly.validity).toMatchObject({ publishable: true, runs: 4, valid: 2, invalid: 2, excluded: 2 });
    expect(validOnly.configurations[0].timeS.n).toBe(2);
    expect(validOnly.configurations[0].energyJ.n).toBe(2);
    expect(validOnly.runsLeftOut).toEqual([
      {
        runId: runOf(c, 2), key: 'a=1', repetition: 2, leftOut: 'run',
        why: 'invalid measurement (valid runs only): 61.0 % of the sample intervals expected every 100 ms kept < 95.0 % at n module0.power; longest gap 4 s > 3 s at n module0.power',
      },
      { runId: runOf(c, 3), key: 'a=1', repetition: 3, leftOut: 'run', why: expect.stringMatching(/^invalid measurement \(valid runs only\): agent clock \+/) },
    ]);

    const bad = await call('GET', `/v1/campaigns/${c.id}/results?valid=some`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.issues).toEqual([expect.objectContaining({ path: 'valid' })]);
  });

  test("the spec's validity.excludeInvalid leaves invalid runs out of the results and of regression verdicts alike", async () => {
    const baseline = await campaign();
    const strict = await campaign({ excludeInvalid: true });
    const invalid = await ok('GET', `/v1/runs/${runOf(strict, 2)}/energy`);
    expect(invalid.validity).toMatchObject({ valid: false, excluded: true });
    const results = await ok('GET', `/v1/campaigns/${strict.id}/results`);
    expect(results.validity).toMatchObject({ publishable: true, invalid: 2, excluded: 2 });
    expect(results.configurations[0].timeS.n).toBe(2);
    expect(results.runsLeftOut.map((r: { repetition: number; why: string }) => [r.repetition, r.why.split(':')[0]])).toEqual([
      [2, 'invalid measurement (validity.excludeInvalid)'], [3, 'invalid measurement (validity.excludeInvalid)'],
    ]);
    const verdict = await ok('GET', `/v1/campaigns/${strict.id}/verdict?baseline=${baseline.id}`);
    expect(verdict.configurations[0].verdicts).toEqual([
      expect.objectContaining({ metric: 'time', nCandidate: 2, nBaseline: 4 }), expect.objectContaining({ metric: 'energy', nCandidate: 2, nBaseline: 4 }),
    ]);
  });
});
