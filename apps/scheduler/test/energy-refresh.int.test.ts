// Late telemetry is recomputed by the scheduler (issue 15: not inside the API's request): a run
// finalized with telemetry its energy has not seen is recomputed by the next tick, and a
// `refresh-energy` job (what the API enqueues after a late batch, and after an import's finish)
// does it at once — in the scheduler's energy worker thread, not on its event loop (issue 27).
import pino from 'pino';
import { createCampaign, createDatabase, findProjectByName, findRunEnergy, finishImportedRun, TelemetryWriter, type Database } from '@erg/db';
import { createSchedulerQueue, enqueue } from '@erg/queue';
import { secretBoxFrom } from '@erg/secrets';
import { decodeTelemetryBatch } from '@erg/spec';
import { createTestDatabase, TEST_SECRET_KEY, uniqueName, waitFor, type TestDatabase } from '@erg/testkit';
import { Redis } from 'ioredis';
import type { Queue } from 'bullmq';
import { SchedulerConfig } from '../src/config';
import { createSchedulerContext } from '../src/context';
import { startScheduler, type SchedulerHandle } from '../src/worker';
import { testCampaignSpec } from '@erg/db/testing';

const REDIS_URL = 'redis://127.0.0.1:6379';

describe('the scheduler recomputes late telemetry (Postgres + Redis)', () => {
  let tdb: TestDatabase;
  let db: Database;
  let redis: Redis;
  let queue: Queue;
  let scheduler: SchedulerHandle;
  let close: () => Promise<void>;
  let ctx: ReturnType<typeof createSchedulerContext>;
  const start = Date.now() - 3_600_000;
  const writer = () => new TelemetryWriter(db);
  const batch = (node: string, seq: number, sensor: string, watts: number) => {
    const t = Array.from({ length: 121 }, (_, i) => start - 1000 + i * 100);
    const decoded = decodeTelemetryBatch(JSON.stringify({ node, seq, samples: [{ sensor, t, v: t.map(() => watts) }] }), { minT: 0, maxT: Date.now() + 60_000 });
    if (!decoded.ok) throw new Error(JSON.stringify(decoded.issues));
    return decoded.batch;
  };
  const energyOf = async (runId: string) => ((await findRunEnergy(db, runId))?.result as { energyJ: number } | undefined)?.energyJ;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDatabase(tdb.url);
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    const prefix = uniqueName('erg-energy-refresh');
    // A long poll interval: the job, not the tick, must do the second recompute.
    const config = SchedulerConfig.parse({ DATABASE_URL: tdb.url, REDIS_URL, ERG_QUEUE_PREFIX: prefix, ERG_POLL_INTERVAL_MS: '60000', LOG_LEVEL: 'silent', ERG_METRICS_PORT: '0', ERG_SECRET_KEY: TEST_SECRET_KEY });
    ctx = createSchedulerContext({ config, db, redis, secrets: secretBoxFrom(config), log: pino({ level: 'silent' }) });
    close = () => ctx.close();
    queue = createSchedulerQueue(REDIS_URL, prefix);
    // Before the scheduler starts: its first tick (at start) must find this run.
    const projectId = (await findProjectByName(db, 'default'))!.id;
    const created = await createCampaign(db, { name: 'late', execution: 'import', clusterId: null, spec: testCampaignSpec(), specText: null, projectId, configurations: [{ key: 'x=1', parameters: { x: 1 } }], repetitions: 1 });
    runId = created.runs[0]!.id;
    await writer().write(runId, batch('n1', 0, 'gpu0.power', 100));
    // Finalized without its energy computed: as if the process finalizing it had died right after.
    expect(await finishImportedRun(db, { runId, startedAt: new Date(start), endedAt: new Date(start + 10_000), exitCode: 0, metrics: {} })).toBe(true);
    expect(await energyOf(runId)).toBeUndefined();
    scheduler = await startScheduler(ctx);
  });
  let runId = '';

  afterAll(async () => {
    await scheduler?.close();
    await queue?.close();
    await close?.();
    redis?.disconnect();
    await db?.close();
    await tdb?.drop();
  });

  test('the first tick computes what was left; a refresh-energy job recomputes a late batch', async () => {
    await waitFor(async () => (await energyOf(runId)) !== undefined, { timeoutMs: 20_000, intervalMs: 100, what: 'the tick to compute the run\'s energy' });
    expect(await energyOf(runId)).toBeCloseTo(1000, 6);
    await writer().write(runId, batch('n1', 1, 'gpu1.power', 100));
    await enqueue(queue, 'refresh-energy', {});
    await waitFor(async () => Math.abs(((await energyOf(runId)) ?? 0) - 2000) < 1e-6, { timeoutMs: 20_000, intervalMs: 100, what: 'the job to recompute the late batch' });
    // Both computed in the worker thread (started once: an idle worker is kept, not replaced).
    expect(ctx.energy.workersStarted).toBe(1);
  });
});
