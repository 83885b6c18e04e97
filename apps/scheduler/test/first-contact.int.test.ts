// A new cluster's first cycle (issue 27 §4), in process against a real database: a cluster the
// scheduler cannot reach says why from its first cycle — its first probe's failure is recorded,
// not swallowed into a fresh contact that makes it look healthy — and an address its project's
// cluster policy does not allow is refused at connect time, whatever was stored.
import { generateKeyPairSync } from 'node:crypto';
import { Redis } from 'ioredis';
import pino from 'pino';
import { createCluster, createDatabase, createProject, findClusterById, findProjectByName, type Database } from '@erg/db';
import { secretBoxFrom } from '@erg/secrets';
import { allowLoopbackClusters, closedPort, createTestDatabase, TEST_SECRET_KEY, uniqueName, type TestDatabase } from '@erg/testkit';
import { SchedulerConfig } from '../src/config';
import { createSchedulerContext, type SchedulerContext } from '../src/context';
import { runCycle } from '../src/cycle';

describe('the first cycle of a new cluster with no runs (Postgres)', () => {
  let tdb: TestDatabase;
  let db: Database;
  let redis: Redis;
  let ctx: SchedulerContext & { close(): Promise<void> };
  const secrets = secretBoxFrom({ ERG_SECRET_KEY: TEST_SECRET_KEY });
  // A key the SSH client can parse: what is recorded is the connection's failure, not the key's.
  const privateKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();

  /** A cluster on loopback at a port nobody listens on, in `projectId`, as registration stores it. */
  const unreachable = async (name: string, projectId: string) =>
    createCluster(db, { name, projectId, host: '127.0.0.1', port: await closedPort(), username: 'erg', privateKey, hostKeySha256: `SHA256:${'A'.repeat(43)}`, workDir: '/tmp/erg-away' }, secrets);

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDatabase(tdb.url);
    redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true });
    const config = SchedulerConfig.parse({ DATABASE_URL: tdb.url, ERG_QUEUE_PREFIX: uniqueName('ergfc'), ERG_SECRET_KEY: TEST_SECRET_KEY, ERG_TELEMETRY: 'off' });
    ctx = createSchedulerContext({ config, db, redis, secrets, log: pino({ level: 'silent' }) });
  });
  afterAll(async () => {
    await ctx.close();
    redis.disconnect();
    await db.close();
    await tdb.drop();
  });

  test('one it cannot reach: lastError says why, and no contact is recorded', async () => {
    await allowLoopbackClusters(db);
    const cluster = await unreachable('away', (await findProjectByName(db, 'default'))!.id);
    await runCycle(ctx, cluster.id);
    expect(await findClusterById(db, cluster.id)).toMatchObject({
      lastError: expect.stringMatching(/^cannot reach 127\.0\.0\.1:\d+: connection refused/),
      lastContactAt: null,
      capabilities: null,
    });
  });

  test('one on an address its project does not allow: not connected to, and the refusal is its lastError', async () => {
    const project = await createProject(db, { name: 'locked' });
    const cluster = await unreachable('inside', project.id);
    await runCycle(ctx, cluster.id);
    const after = (await findClusterById(db, cluster.id))!;
    expect(after.lastContactAt).toBeNull();
    expect(after.lastError).toMatch(/^not connecting to 127\.0\.0\.1:\d+: 127\.0\.0\.1 is a loopback address, inside erg's own network; an admin allows it/);
  });
});
