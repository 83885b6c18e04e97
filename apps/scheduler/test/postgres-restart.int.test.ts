import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { createCampaign, createCluster, createDatabase, createProject, ensureDatabase, migrate } from '@erg/db';
import { secretBoxFrom } from '@erg/secrets';
import { validateCampaign } from '@erg/sweep';
import {
  allowLoopbackClusters, closedPort, repoRoot, startDisposablePostgres, startDisposableRedis, TEST_SECRET_KEY, uniqueName, waitFor, type DisposablePostgres, type DisposableRedis,
} from '@erg/testkit';

/**
 * The built scheduler against a Postgres of this test's own, which it restarts. Its cluster
 * cannot be reached (a closed port), so every cycle claims the pending runs (claimRunsForSubmission:
 * a transaction on a checked-out pooled client), fails to stage them, returns them to pending and
 * records the failure on the cluster. The cluster's project has a concurrency limit, so the claim
 * locks the project's row; the test holds that row, which keeps a claim waiting with its client
 * checked out while Postgres restarts: the moment a client without an 'error' listener ends the
 * process.
 */

const SPEC = {
  name: 'stranded', cluster: 'unreachable', repetitions: 1,
  parameters: { n: [1, 2] },
  resources: { nodes: 1, time: '00:01:00' },
  run: 'echo {{n}}',
};

/** How long cycles may take to resume once Postgres accepts connections (the poll interval is 500 ms). */
const RESUME_MS = 20_000;

describe('the scheduler across Postgres restarts (built process, disposable Postgres and Redis)', () => {
  let pgServer: DisposablePostgres;
  let redis: DisposableRedis;
  let scheduler: ChildProcess;
  let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  let output = '';
  let clusterId: string;
  let projectId: string;
  let opsPort: number;

  async function withClient<T>(work: (c: pg.Client) => Promise<T>): Promise<T> {
    const c = new pg.Client({ connectionString: pgServer.url('erg') });
    c.on('error', () => undefined); // the server restarts under it
    await c.connect();
    try {
      return await work(c);
    } finally {
      await c.end().catch(() => undefined);
    }
  }

  const lastError = () =>
    withClient(async (c) => (await c.query<{ last_error: string | null }>('SELECT last_error FROM clusters WHERE id = $1', [clusterId])).rows[0]!.last_error);

  /** Resolves 'recorded' once a cycle has written the cluster's failure, 'exited' if the scheduler died first. */
  const cycleRecorded = (what: string) =>
    waitFor(async () => (exit ? 'exited' : (await lastError()) !== null ? 'recorded' : undefined), { timeoutMs: RESUME_MS, intervalMs: 200, what });

  beforeAll(async () => {
    [pgServer, redis] = await Promise.all([startDisposablePostgres(), startDisposableRedis()]);
    const url = pgServer.url('erg');
    await ensureDatabase(url);
    await migrate(url);
    const db = createDatabase(url, { max: 1 });
    try {
      // Far above the two runs: the limit only makes the claim lock the project's row.
      projectId = (await createProject(db, { name: 'limited', maxConcurrentRuns: 100 })).id;
      // A closed port on loopback: the failure to record is "connection refused", not the address policy's.
      await allowLoopbackClusters(db, 'limited');
      const cluster = await createCluster(
        db,
        {
          name: 'unreachable', projectId, host: '127.0.0.1', port: await closedPort(), username: 'erg',
          // A key the SSH client can parse: the failure to record is the connection's, not the key's.
          privateKey: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
          hostKeySha256: `SHA256:${'A'.repeat(43)}`, workDir: '/tmp/erg-unreachable',
        },
        secretBoxFrom({ ERG_SECRET_KEY: TEST_SECRET_KEY }),
      );
      clusterId = cluster.id;
      const validated = validateCampaign(SPEC, { maxRuns: 10 });
      if (!validated.ok) throw new Error(`test spec refused: ${JSON.stringify(validated.issues)}`);
      await createCampaign(db, {
        name: SPEC.name, execution: 'slurm', clusterId, spec: validated.spec, specText: null, projectId,
        configurations: validated.configurations, repetitions: validated.spec.repetitions,
      });
    } finally {
      await db.close();
    }
    scheduler = spawn(process.execPath, [path.join(repoRoot(), 'apps', 'scheduler', 'dist', 'main.js')], {
      env: {
        ...process.env,
        DATABASE_URL: url,
        REDIS_URL: redis.url,
        ERG_QUEUE_PREFIX: uniqueName('ergpgr'),
        ERG_POLL_INTERVAL_MS: '500',
        ERG_METRICS_HOST: '127.0.0.1',
        ERG_METRICS_PORT: String((opsPort = await closedPort())),
        ERG_TELEMETRY: 'off',
        ERG_SECRET_KEY: TEST_SECRET_KEY,
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-64 * 1024);
    };
    scheduler.stdout!.on('data', keep);
    scheduler.stderr!.on('data', keep);
    scheduler.once('exit', (code, signal) => {
      exit = { code, signal };
    });
    expect({ first: await cycleRecorded('the first cycle to record that the cluster cannot be reached'), exit }).toEqual({ first: 'recorded', exit: null });
  }, 60_000);

  afterAll(async () => {
    if (scheduler && !exit) {
      const exited = new Promise((resolve) => scheduler.once('exit', resolve));
      scheduler.kill('SIGTERM');
      const killer = setTimeout(() => scheduler.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    }
    await redis?.stop();
    await pgServer?.destroy();
  });

  const readiness = async () => {
    const res = await fetch(`http://127.0.0.1:${opsPort}/readyz`);
    return { status: res.status, body: (await res.json()) as { ok: boolean; postgres: string; redis: string } };
  };

  test('readiness says Postgres or Redis is away while it is, and recovers by itself', async () => {
    expect(await readiness()).toEqual({ status: 200, body: { ok: true, postgres: 'ok', redis: 'ok' } });
    expect((await fetch(`http://127.0.0.1:${opsPort}/healthz`)).status).toBe(200);

    await pgServer.stop('fast');
    try {
      const away = await waitFor(async () => { const r = await readiness(); return r.status === 503 ? r : undefined; }, {
        timeoutMs: 10_000, intervalMs: 200, what: '/readyz to answer 503 while Postgres is stopped',
      });
      expect(away.body).toMatchObject({ ok: false, postgres: expect.stringMatching(/^error: /), redis: 'ok' });
    } finally {
      await pgServer.start();
    }
    await waitFor(async () => ((await readiness()).status === 200 ? true : undefined), { timeoutMs: RESUME_MS, intervalMs: 200, what: '/readyz to recover after Postgres is back' });

    await redis.stop();
    try {
      const away = await waitFor(async () => { const r = await readiness(); return r.status === 503 ? r : undefined; }, {
        timeoutMs: 10_000, intervalMs: 200, what: '/readyz to answer 503 while Redis is stopped',
      });
      expect(away.body).toMatchObject({ ok: false, postgres: 'ok', redis: expect.stringMatching(/^error: /) });
    } finally {
      await redis.start();
    }
    await waitFor(async () => ((await readiness()).status === 200 ? true : undefined), { timeoutMs: RESUME_MS, intervalMs: 200, what: '/readyz to recover after Redis is back' });
    expect(exit).toBeNull();
  }, 60_000);

  test.each(['fast', 'immediate'] as const)(
    'a %s restart while a cycle\'s claim holds a pooled client leaves the process up, and its cycles write to the database again',
    async (mode) => {
      const locker = new pg.Client({ connectionString: pgServer.url('erg') });
      locker.on('error', () => undefined); // the restart ends this session too
      await locker.connect();
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM projects WHERE id = $1 FOR UPDATE', [projectId]);
      await waitFor(
        () =>
          withClient(async (c) => {
            const waiting = await c.query(`SELECT 1 FROM pg_stat_activity WHERE datname = 'erg' AND wait_event_type = 'Lock' AND query ILIKE '%FROM projects%'`);
            return waiting.rowCount! > 0;
          }),
        { timeoutMs: 10_000, what: 'a claim of the scheduler waiting on the project row the test holds' },
      );

      await pgServer.restart(mode);
      await locker.end().catch(() => undefined);

      // What the scheduler recorded before is cleared: only a cycle that ran after the restart writes it again.
      await withClient((c) => c.query('UPDATE clusters SET last_error = NULL WHERE id = $1', [clusterId]));
      const outcome = await cycleRecorded(`a cycle after the ${mode} restart to record the cluster's failure again`);
      expect({ outcome, exit, output: exit ? output : '' }).toEqual({ outcome: 'recorded', exit: null, output: '' });
      expect(await lastError()).toMatch(/connection refused/);
    },
    40_000,
  );
});
