// Issue 27 §1: a run's distinct phase names are capped (ERG_MAX_PHASE_NAMES). Beyond the cap a
// batch is still accepted — its samples are the measurement, and a workload's bug must not cost
// them — but the marks of names past the first ERG_MAX_PHASE_NAMES are not stored, and the run
// says so, once, in its warnings. Marks of names already admitted keep being stored.
import { listRunMarks } from '@erg/db';
import { DEFAULT_MAX_PHASE_NAMES } from '@erg/spec';
import { ApiConfig } from '../src/config';
import { apiRequests, startTestApi, type TestApi } from './helpers';

const CAP = 8;

describe('distinct phase names per run (ERG_MAX_PHASE_NAMES)', () => {
  let t: TestApi;
  const { call, ok } = apiRequests(() => t);
  const at = Date.now() - 60_000;
  /** begin/end marks of these names, one pair each, offsets from `offset0`. */
  const pairs = (names: string[], offset0: number) =>
    names.flatMap((name, i) => [
      { offset: offset0 + 2 * i, kind: 'begin', name, t: at + 2 * i, clock: 'wall', writer: 'py' },
      { offset: offset0 + 2 * i + 1, kind: 'end', name, t: at + 2 * i + 1, clock: 'wall', writer: 'py' },
    ]);
  const batch = (node: string, seq: number, marks: unknown[]) => ({ node, seq, samples: [{ sensor: 'cpu0.power', t: [at + seq], v: [100] }], marks });
  const names = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `p${from + i}`);

  beforeAll(async () => {
    t = await startTestApi({ ERG_MAX_PHASE_NAMES: String(CAP) });
  });
  afterAll(async () => {
    await t?.close();
  });

  test("the default is erg's (256, the one the mark writers know), parsed with the rest of the configuration", () => {
    expect(DEFAULT_MAX_PHASE_NAMES).toBe(256);
    expect(ApiConfig.parse({}).ERG_MAX_PHASE_NAMES).toBe(DEFAULT_MAX_PHASE_NAMES);
    expect(ApiConfig.safeParse({ ERG_MAX_PHASE_NAMES: '0' }).success).toBe(false);
  });

  test('names past the cap are not stored, the batch is, and the run warns once naming the setting', async () => {
    const created = await ok('POST', '/v1/campaigns', { name: 'many-names', execution: 'import', repetitions: 1, parameters: {}, metrics: [] });
    const runId: string = created.runs[0].id;
    // Node n1 brings 6 names, node n2 two of those and 6 more: only 2 of them fit.
    expect(await call('POST', `/v1/runs/${runId}/telemetry`, batch('n1', 0, pairs(names(0, 6), 0)))).toMatchObject({ status: 200, body: { accepted: 1 } });
    expect(await call('POST', `/v1/runs/${runId}/telemetry`, batch('n2', 0, pairs(names(4, 12), 0)))).toMatchObject({ status: 200, body: { accepted: 1 } });
    // Later: names admitted before keep being stored, new ones still are not, and no second warning.
    expect(await call('POST', `/v1/runs/${runId}/telemetry`, batch('n1', 1, pairs(['p0', 'p7', 'p20', 'p21'], 100)))).toMatchObject({ status: 200, body: { accepted: 1 } });

    const marks = await listRunMarks(t.db, runId);
    expect([...new Set(marks.map((m) => m.name))].sort()).toEqual(names(0, CAP).sort());
    // Every mark of an admitted name is there: 6 + 4 pairs of the first two batches, p0 and p7 again.
    expect(marks.filter((m) => m.node === 'n1')).toHaveLength(2 * 6 + 2 * 2);
    expect(marks.filter((m) => m.node === 'n2')).toHaveLength(2 * 4);

    const run = await ok('GET', `/v1/runs/${runId}`);
    const warnings = (run.warnings as string[]).filter((w) => w.includes('ERG_MAX_PHASE_NAMES'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`${CAP} distinct phase names`);
    expect(warnings[0]).toContain('"p8"');
  });
});
