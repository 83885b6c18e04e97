// The worker threads that validate large bodies: same answers as inline, a job out of time ends
// its worker (and the next job gets a fresh one), a full queue is refused at once.
// The workers run apps/api/dist/offload-worker.js: build first (npx turbo run build).
import pino from 'pino';
import { decodeTelemetryBatch } from '@erg/spec';
import { validateCampaignText } from '@erg/sweep';
import { Offload, OffloadBusy, OffloadTooCostly } from '../src/offload';

const log = pino({ level: 'silent' });
const limits = { maxRuns: 10_000 };
const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const spec = 'name: s\nexecution: import\nparameters:\n  a: [1, 2, 3]\n  b: [x, y]\nexclude:\n  - { a: 1, b: x }\n';
/** About 1 MiB of flow YAML: a second or so to parse. */
const slowSpec = ['name: big', 'execution: import', 'parameters:', ...range(64).map((p) => `  p${p}: [${range(700).map((v) => `value-${p}-${v}-xxxxxx`).join(', ')}]`)].join('\n');

describe('Offload', () => {
  let pool: Offload;
  afterEach(async () => {
    await pool.close();
  });

  test('gives the answers the inline code gives, telemetry columns included', async () => {
    pool = new Offload({ workers: 1, timeoutMs: 10_000, maxQueue: 4, maxHeapMb: 128 }, log);
    expect(pool.available).toBe(true);
    expect(await pool.run({ kind: 'campaign', body: spec, yaml: true, limits })).toEqual(validateCampaignText(spec, 'yaml', limits));
    const now = Date.now();
    const text = JSON.stringify({ node: 'n', seq: 1, samples: [{ sensor: 'gpu0.power', t: [now, now + 10], v: [1, 2] }] });
    const bounds = { minT: now - 1000, maxT: now + 1000 };
    const decoded = await pool.run({ kind: 'telemetry', body: new Uint8Array(Buffer.from(text)), bounds });
    expect(decoded).toEqual(decodeTelemetryBatch(text, bounds));
    // Transferred, not copied: typed arrays (from the worker's realm, hence the tag, not instanceof).
    expect(Object.prototype.toString.call(decoded.ok && decoded.batch.series[0]!.t)).toBe('[object Float64Array]');
  });

  test('ends a job that runs out of time, and runs the next one in a fresh worker', async () => {
    pool = new Offload({ workers: 1, timeoutMs: 100, maxQueue: 4, maxHeapMb: 128 }, log);
    const slow = pool.run({ kind: 'campaign', body: slowSpec, yaml: true, limits });
    const next = pool.run({ kind: 'campaign', body: spec, yaml: true, limits });
    await expect(slow).rejects.toEqual(new OffloadTooCostly('took longer than 0.1 s to validate'));
    await expect(next.catch((e: Error) => e.message)).resolves.toMatchObject({ ok: true });
  });

  test('refuses at once when every worker is busy and the queue is full', async () => {
    pool = new Offload({ workers: 1, timeoutMs: 10_000, maxQueue: 1, maxHeapMb: 128 }, log);
    const running = pool.run({ kind: 'campaign', body: slowSpec, yaml: true, limits });
    const waiting = pool.run({ kind: 'campaign', body: spec, yaml: true, limits });
    await expect(pool.run({ kind: 'campaign', body: spec, yaml: true, limits })).rejects.toBeInstanceOf(OffloadBusy);
    await expect(running).resolves.toMatchObject({ ok: false });
    await expect(waiting).resolves.toMatchObject({ ok: true });
  });

  test('starts its workers on first need, or all at once when warmed', async () => {
    pool = new Offload({ workers: 2, timeoutMs: 10_000, maxQueue: 4, maxHeapMb: 128 }, log);
    expect(pool.started).toBe(0);
    pool.warm();
    expect(pool.started).toBe(2);
    await expect(pool.run({ kind: 'campaign', body: spec, yaml: true, limits })).resolves.toMatchObject({ ok: true });
    expect(pool.started).toBe(2); // the job used a warm worker, no third one
  });

  test('with 0 workers it is not available (callers validate inline)', () => {
    pool = new Offload({ workers: 0, timeoutMs: 1000, maxQueue: 1, maxHeapMb: 128 }, log);
    expect(pool.available).toBe(false);
  });
});
