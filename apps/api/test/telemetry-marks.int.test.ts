import { countRunMarks, listRunMarks } from '@erg/db';
import { startTestApi, type TestApi } from './helpers';

// Phase marks through the ingest route: stored with their batch, idempotent on (run, node,
// offset), and a bad mark a 400 naming it with nothing of the batch stored. (The writer's own
// rules, and the spool pull that uses the same writer, are tested in packages/db/test/run-marks.)

const IMPORT_SPEC = { name: 'marks', execution: 'import', repetitions: 2, parameters: { clock: [1000] }, metrics: [] };

describe('POST /v1/runs/{id}/telemetry with marks', () => {
  let t: TestApi;
  let runs: { id: string }[];

  async function post(runId: string, body: unknown) {
    const res = await t.app.inject({ method: 'POST', url: `/v1/runs/${runId}/telemetry`, headers: { authorization: `Bearer ${t.token}` }, payload: body as string });
    return { status: res.statusCode, body: res.json() };
  }
  const at = Date.now() - 60_000;
  const batch = (seq: number, marks: unknown[]) => ({ node: 'n1', seq, samples: [{ sensor: 'cpu0.power', t: [at + seq], v: [100] }], marks });
  const mark = (offset: number, extra: Record<string, unknown> = {}) => ({ offset, kind: 'step', name: 'step', t: at + offset, clock: 'mono', writer: 'py', ...extra });

  beforeAll(async () => {
    t = await startTestApi();
    const created = await t.app.inject({ method: 'POST', url: '/v1/campaigns', headers: { authorization: `Bearer ${t.token}` }, payload: IMPORT_SPEC });
    expect(created.statusCode).toBe(201);
    runs = created.json().runs;
  });
  afterAll(async () => {
    await t.close();
  });

  test('a batch\'s marks are stored; the batch again, or its marks in a later batch, add nothing', async () => {
    const run = runs[0]!.id;
    expect(await post(run, batch(0, [mark(0, { kind: 'begin', name: 'train' }), mark(30)]))).toEqual({ status: 200, body: { accepted: 1, duplicate: false } });
    expect(await post(run, batch(0, [mark(0, { kind: 'begin', name: 'train' }), mark(30)]))).toEqual({ status: 200, body: { accepted: 0, duplicate: true } });
    expect((await post(run, batch(1, [mark(30), mark(60, { kind: 'end', name: 'train' })]))).status).toBe(200);
    expect((await listRunMarks(t.db, run)).map((m) => [m.offset, m.kind, m.name, m.t - at])).toEqual([[0, 'begin', 'train', 0], [30, 'step', 'step', 30], [60, 'end', 'train', 60]]);
  });

  test('a bad mark is a 400 that names it, and nothing of its batch is stored', async () => {
    const run = runs[1]!.id;
    const res = await post(run, batch(0, [mark(0), mark(10), mark(20), mark(30, { name: 'two words' }), mark(40, { t: at + 86_400_000 })]));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('ERG_VALIDATION');
    expect(res.body.error.issues.map((i: { path: string }) => i.path)).toEqual(['marks[3].name']);
    expect(res.body.error.issues[0].message).toMatch(/phase name/);
    const late = await post(run, batch(0, [mark(40, { t: at + 86_400_000 })]));
    expect(late.status).toBe(400);
    expect(late.body.error.issues.map((i: { path: string }) => i.path)).toEqual(['marks[0].t']);
    expect(await countRunMarks(t.db, run)).toBe(0);
  });
});
