import { countRunMarks, listRunMarks } from '@erg/db';
import { OFFLOAD_ABOVE } from '../src/body-limits';
import { Offload } from '../src/offload';
import { startTestApi, type TestApi } from './helpers';

// Phase marks through the ingest route: stored with their batch, idempotent on (run, node,
// offset), and a bad mark a 400 naming it with nothing of the batch stored; a batch of many marks
// decoded in a worker thread (apps/api/dist/offload-worker.js: build first) however few its bytes. (The writer's own
// rules, and the spool pull that uses the same writer, are tested in packages/db/test/run-marks.)

const IMPORT_SPEC = { name: 'marks', execution: 'import', repetitions: 3, parameters: { clock: [1000] }, metrics: [] };

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

  test(`a batch of many marks is decoded in a worker though under ${OFFLOAD_ABOVE.telemetry} bytes; as many bytes of samples, or a few marks, on the event loop`, async () => {
    const run = runs[2]!.id;
    const decoded = jest.spyOn(Offload.prototype, 'run');
    try {
      const many = batch(0, Array.from({ length: 5000 }, (_, i) => mark(i)));
      const bytes = JSON.stringify(many).length;
      expect(bytes).toBeLessThan(OFFLOAD_ABOVE.telemetry / 2);
      expect(await post(run, many)).toEqual({ status: 200, body: { accepted: 1, duplicate: false } });
      expect(decoded.mock.calls.map(([job]) => job.kind)).toEqual(['telemetry']);
      expect(await countRunMarks(t.db, run)).toBe(5000);

      // The same bytes of samples, and a batch of a few marks: decoded inline.
      const n = Math.floor(bytes / 30);
      const samples = { node: 'n1', seq: 1, samples: [{ sensor: 'cpu0.power', t: Array.from({ length: n }, (_, i) => at + i / 1000), v: Array.from({ length: n }, (_, i) => 100 + (i % 1000) / 7) }] };
      expect(JSON.stringify(samples).length).toBeGreaterThan(bytes);
      expect((await post(run, samples)).status).toBe(200);
      expect((await post(run, batch(2, [mark(6000), mark(6001)]))).status).toBe(200);
      expect(decoded).toHaveBeenCalledTimes(1);
    } finally {
      decoded.mockRestore();
    }
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
