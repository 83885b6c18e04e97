import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import { buildApp, ApiConfig, ClusterFiles } from '@erg/api';
import { createApiToken, createDatabase, listActiveSlurmJobIds, type Database } from '@erg/db';
import { createSchedulerQueue, redisConnection } from '@erg/queue';
import { arraySubmissionFromJobName, ClusterConnection, SlurmClient, slurmJobKey, type SlurmJob } from '@erg/slurm';
import { LOG_REDACTION, secretBoxFrom, type SecretBox } from '@erg/secrets';
import type { RunOrder } from '@erg/spec';
import {
  allowLoopbackClusters, createTestDatabase, loadLocalCluster, LOOPBACK_ALLOW_HOSTS, repoRoot, TEST_SECRET_KEY, uniqueName, waitFor, type LocalCluster, type TestDatabase,
} from '@erg/testkit';
import { createSchedulerContext, type SchedulerContext } from '../src/context';
import { SchedulerConfig } from '../src/config';
import type { SchedulerMetrics } from '../src/metrics';
import { startScheduler, type SchedulerHandle } from '../src/worker';

/**
 * A whole erg on its own database and queue prefix, talking to the real local Slurm cluster:
 * the API listening on a free port, and a scheduler either in this process or as a child process
 * (for the crash tests, which need a process that can die).
 */
export class Harness {
  /** The Redis of the API and schedulers: the machine's, or one of the test's own (set before start()) that it restarts. */
  redisUrl = 'redis://127.0.0.1:6379';

  readonly local: LocalCluster = loadLocalCluster();
  /**
   * Where the API listens: loopback, or on the multi-node cluster the machine's address on the
   * nodes' bridge — each node has a loopback of its own, and its agent must reach the API.
   */
  private readonly apiHost = this.local.nodeHostAddress ?? '127.0.0.1';
  readonly prefix = uniqueName('erge2e');
  /** Every run of this harness lives under its own folder of the cluster's work dir. */
  readonly workDir = `${this.local.workDir}/${this.prefix}`;
  /**
   * Where erg stages its agent runtime for every harness's clusters: the cluster's own work dir's
   * default (as the quickstart's cluster has it), shared, so that the test files of a cluster
   * whose nodes have no Node.js (24.11) stage it once, not once per file. Content-addressed: never removed.
   */
  readonly runtimeDir = `${this.local.workDir}/.erg/runtime`;
  tdb!: TestDatabase;
  db!: Database;
  api!: FastifyInstance;
  url!: string;
  token!: string;
  private redis!: Redis;
  /** The one key of this erg (API and schedulers alike), as ERG_SECRET_KEY gives it. */
  readonly secrets: SecretBox = secretBoxFrom({ ERG_SECRET_KEY: TEST_SECRET_KEY });
  private clusterFiles = new ClusterFiles(this.secrets);
  /**
   * Where the API's and the in-process scheduler's log lines go (pino destinations), when a test
   * wants to read them; set before start() / startInProcessScheduler(). Null: API silent, scheduler to stdout at warn.
   */
  logSink: { write(line: string): void } | null = null;
  /** The in-process scheduler's metrics (a fresh registry per start). */
  schedulerMetrics: SchedulerMetrics | null = null;
  private scheduler: SchedulerHandle | null = null;
  private schedulerContext: (SchedulerContext & { close(): Promise<void> }) | null = null;
  private slurmConnection: ClusterConnection | null = null;
  private apiQueue!: ReturnType<typeof createSchedulerQueue>;
  private apiConfig!: ApiConfig;

  async start(): Promise<void> {
    this.tdb = await createTestDatabase();
    this.db = createDatabase(this.tdb.url);
    // The local cluster listens on loopback: its project allows that, as the quickstart's admin does.
    await allowLoopbackClusters(this.db);
    this.redis = new Redis(redisConnection(this.redisUrl) as object);
    this.redis.on('error', () => undefined); // a fault test's Redis goes away on purpose
    const config = ApiConfig.parse({ DATABASE_URL: this.tdb.url, REDIS_URL: this.redisUrl, ERG_QUEUE_PREFIX: this.prefix, LOG_LEVEL: 'silent', ERG_SECRET_KEY: TEST_SECRET_KEY });
    this.apiConfig = config;
    this.apiQueue = createSchedulerQueue(config.REDIS_URL, this.prefix);
    this.api = await buildApp({ config, db: this.db, queue: this.apiQueue, redis: this.redis, clusterFiles: this.clusterFiles, secrets: this.secrets, ...this.apiLogger() });
    await this.api.listen({ host: this.apiHost, port: 0 });
    const address = this.api.server.address() as net.AddressInfo;
    this.url = `http://${this.apiHost}:${address.port}`;
    this.token = (await createApiToken(this.db, 'e2e')).token;
  }

  /**
   * Stops the API and starts a new one on the same port, as a deploy or a crash-restart does to
   * clients: open event streams end, and new connections are refused until it is back.
   */
  async restartApi(): Promise<void> {
    const { port } = this.api.server.address() as net.AddressInfo;
    await this.api.close();
    this.api = await buildApp({ config: this.apiConfig, db: this.db, queue: this.apiQueue, redis: this.redis, clusterFiles: this.clusterFiles, secrets: this.secrets, ...this.apiLogger() });
    await this.api.listen({ host: this.apiHost, port });
  }

  /** The API's logger: the apps' own redaction, into logSink, at info (silent when there is no sink). */
  private apiLogger(): { logger?: pino.Logger } {
    return this.logSink ? { logger: pino({ level: 'info', redact: LOG_REDACTION }, this.logSink) } : {};
  }

  schedulerEnv(extra: Record<string, string> = {}): Record<string, string> {
    return {
      DATABASE_URL: this.tdb.url,
      REDIS_URL: this.redisUrl,
      ERG_QUEUE_PREFIX: this.prefix,
      ERG_POLL_INTERVAL_MS: '500',
      LOG_LEVEL: 'warn',
      // Child schedulers must not fight over (or with a running quickstart for) the default port.
      ERG_METRICS_PORT: '0',
      ERG_SECRET_KEY: TEST_SECRET_KEY,
      ...extra,
    };
  }

  /** `extra`: scheduler settings of this test (e.g. a shorter regex budget). */
  async startInProcessScheduler(extra: Record<string, string> = {}): Promise<void> {
    const config = SchedulerConfig.parse(this.schedulerEnv(extra));
    const log = this.logSink ? pino({ level: 'info', redact: LOG_REDACTION }, this.logSink) : pino({ level: 'warn', redact: LOG_REDACTION });
    this.schedulerContext = createSchedulerContext({ config, db: this.db, redis: this.redis, secrets: this.secrets, log });
    this.schedulerMetrics = this.schedulerContext.metrics;
    this.scheduler = await startScheduler(this.schedulerContext);
  }

  /** The built scheduler (apps/scheduler/dist) as a child process; its output goes to test-artifacts/. */
  spawnScheduler(name: string, extra: Record<string, string> = {}): ChildProcess & { exited: Promise<number | null> } {
    const logDir = path.join(repoRoot(), 'test-artifacts');
    mkdirSync(logDir, { recursive: true });
    const log = createWriteStream(path.join(logDir, `${this.prefix}-${name}.log`));
    const child = spawn(process.execPath, [path.join(repoRoot(), 'apps', 'scheduler', 'dist', 'main.js')], {
      env: { ...process.env, ...this.schedulerEnv(extra) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    return Object.assign(child, { exited });
  }

  async call<T = any>(method: string, url: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; body: T }> {
    const res = await fetch(this.url + url, {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': contentType }) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    this.responseLog?.push(text);
    return { status: res.status, body: JSON.parse(text) as T };
  }

  /** Every response body `call` got, as text, while not null (the secrets scan reads them). */
  responseLog: string[] | null = null;

  /** Registers the local cluster under `name`, optionally through another port or with another fingerprint. */
  async registerCluster(
    name: string,
    overrides: {
      port?: number; hostKeySha256?: string | null; hostKeyPolicy?: 'pinned' | 'trust-on-first-use'; agentApiUrl?: string | null; maxConcurrentRuns?: number | null;
      maxQueuedJobs?: number | null;
      powerHelper?: string; agentCommand?: string; agentRuntime?: 'auto' | 'command' | 'staged'; runtimeDir?: string;
    } = {},
  ): Promise<void> {
    const res = await this.call('PUT', `/v1/clusters/${name}`, {
      host: this.local.host,
      port: overrides.port ?? this.local.port,
      user: this.local.user,
      privateKey: this.local.privateKey,
      // null: no fingerprint at all (trust on first use).
      hostKeySha256: overrides.hostKeySha256 === null ? undefined : (overrides.hostKeySha256 ?? this.local.hostKeySha256),
      ...(overrides.hostKeyPolicy ? { hostKeyPolicy: overrides.hostKeyPolicy } : {}),
      defaultPartition: this.local.partition,
      workDir: this.workDir,
      // Agents on the local cluster's node push to this harness's API.
      agentApiUrl: overrides.agentApiUrl === undefined ? this.url : overrides.agentApiUrl,
      ...(overrides.maxConcurrentRuns === undefined ? {} : { maxConcurrentRuns: overrides.maxConcurrentRuns }),
      ...(overrides.maxQueuedJobs === undefined ? {} : { maxQueuedJobs: overrides.maxQueuedJobs }),
      ...(overrides.powerHelper === undefined ? {} : { powerHelper: overrides.powerHelper }),
      ...(overrides.agentCommand === undefined ? {} : { agentCommand: overrides.agentCommand }),
      ...(overrides.agentRuntime === undefined ? {} : { agentRuntime: overrides.agentRuntime }),
      runtimeDir: overrides.runtimeDir ?? this.runtimeDir,
    });
    if (res.status !== 200) throw new Error(`registering ${name} failed: ${JSON.stringify(res.body)}`);
  }

  /**
   * Submits a campaign. Runs share the one local node unless the spec says otherwise: these tests
   * are about erg's mechanics (many small jobs side by side), not about whose energy a node
   * measured, and whole nodes — erg's default — would queue every job behind the one before.
   */
  async submit(spec: object): Promise<{ id: string; runs: { id: string; configurationKey: string; repetition: number }[]; design: { order: RunOrder; seed: number | null } }> {
    const given = spec as { resources?: { exclusive?: boolean } };
    const body = given.resources?.exclusive === undefined ? { ...spec, resources: { ...given.resources, exclusive: false } } : spec;
    const res = await this.call('POST', '/v1/campaigns', body);
    if (res.status !== 201) throw new Error(`campaign refused: ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /** Waits until the campaign has no unfinished run; returns every run in full. */
  async waitForCampaignEnd(id: string, timeoutMs = 120_000): Promise<any[]> {
    await waitFor(
      async () => {
        const c = await this.call('GET', `/v1/campaigns/${id}`);
        return !['pending', 'running', 'cancelling'].includes(c.body.state);
      },
      { timeoutMs, intervalMs: 500, what: `campaign ${id} to end` },
    );
    // A run is finished before its figures are (the scheduler's energy worker computes them right
    // after, and the API answers 409 "being computed" meanwhile): a campaign has ended for a test
    // once none of its ended runs still owes them.
    await waitFor(
      async () =>
        (await this.sql(
          'SELECT 1 FROM run_energy_dirty d JOIN runs r ON r.id = d.run_id WHERE r.campaign_id = $1 AND r.finalized_at IS NOT NULL LIMIT 1', [id],
        )).rowCount === 0,
      { timeoutMs: 60_000, intervalMs: 250, what: `the energy of campaign ${id}'s runs` },
    );
    return this.runsOf(id);
  }

  async runsOf(id: string): Promise<any[]> {
    const { body } = await this.call('GET', `/v1/campaigns/${id}/runs?limit=10000`);
    return Promise.all(body.items.map(async (r: { id: string }) => (await this.call('GET', `/v1/runs/${r.id}`)).body));
  }

  /** Every Slurm job whose name carries one of these run ids, straight from sacct and squeue. */
  /** One SQL statement on the test's database, for what no @erg/db function reads or writes (a test's own setup). */
  async sql<R extends pg.QueryResultRow = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<pg.QueryResult<R>> {
    const client = new pg.Client({ connectionString: this.tdb.url });
    await client.connect();
    try {
      return await client.query<R>(text, params);
    } finally {
      await client.end();
    }
  }

  /**
   * Every Slurm job (or array task) carrying each run: jobs named `erg-<runId>`, and the tasks of
   * arrays named after the submission the run was staged into (`erg-a-<submission>`) at the run's
   * index — of every such array, so that an array submitted twice shows as two tasks of the run.
   */
  async slurmJobsFor(runIds: string[]): Promise<Map<string, SlurmJob[]>> {
    const { slurm } = this.slurmLink();
    const wanted = new Set(runIds);
    const staged = await this.sql<{ id: string; array_submission: string | null; array_index: number | null }>(
      'SELECT id, array_submission, array_index FROM runs WHERE id = ANY($1::uuid[]) AND array_submission IS NOT NULL',
      [runIds],
    );
    const byTask = new Map(staged.rows.map((r) => [`${r.array_submission}#${r.array_index}`, r.id]));
    const byJob = new Map<string, { runId: string; job: SlurmJob }>();
    for (const job of [...(await slurm.sacct(new Date(Date.now() - 3600_000))), ...(await slurm.squeue())]) {
      const submission = arraySubmissionFromJobName(job.name);
      const runId = submission !== null ? byTask.get(`${submission}#${job.arrayTaskId}`) : job.runId;
      if (runId && wanted.has(runId)) byJob.set(slurmJobKey(job), { runId, job });
    }
    const byRun = new Map<string, SlurmJob[]>(runIds.map((id) => [id, []]));
    for (const { runId, job } of byJob.values()) byRun.get(runId)!.push(job);
    return byRun;
  }

  /** Waits until Slurm holds a job for any of these runs (through the slow door: the loop is then in the next run's wait). */
  async waitForFirstJob(runIds: string[]): Promise<void> {
    await waitFor(async () => [...(await this.slurmJobsFor(runIds)).values()].some((jobs) => jobs.length > 0), {
      timeoutMs: 60_000, intervalMs: 100, what: "the first run's job to appear",
    });
  }

  /**
   * Slurm holds exactly one job per run, the one erg recorded. Counted only once no sbatch of the
   * slow door is left on the cluster: a stray loop, if there were one, would have had every chance
   * to submit its remaining runs by then.
   */
  async expectOneJobPerRun(runs: ReadonlyArray<{ id: string; slurmJobId: string | null }>): Promise<void> {
    await waitFor(
      async () => (await this.slurmLink().connection.exec("pgrep -f 'slow-bi[n]/sbatch' || true")).stdout.trim() === '',
      { timeoutMs: 60_000, intervalMs: 500, what: 'every slow sbatch on the cluster to end' },
    );
    const runIds = runs.map((r) => r.id);
    const jobs = await waitFor(
      async () => {
        const found = await this.slurmJobsFor(runIds);
        return [...found.values()].every((j) => j.length >= 1) ? found : undefined;
      },
      { timeoutMs: 30_000, what: 'sacct to list every job' },
    );
    for (const run of runs) expect({ run: run.id, jobs: jobs.get(run.id)!.map(slurmJobKey) }).toEqual({ run: run.id, jobs: [run.slurmJobId] });
  }

  /** The test's own connection to the cluster, to check what Slurm really holds. */
  slurmLink(): { connection: ClusterConnection; slurm: SlurmClient } {
    this.slurmConnection ??= new ClusterConnection({
      host: this.local.host, port: this.local.port, username: this.local.user, privateKey: this.local.privateKey,
      hostKeySha256: this.local.hostKeySha256, maxSessions: 2, allowHosts: LOOPBACK_ALLOW_HOSTS,
    });
    return { connection: this.slurmConnection, slurm: new SlurmClient(this.slurmConnection) };
  }

  async stopInProcessScheduler(): Promise<void> {
    await this.scheduler?.close();
    await this.schedulerContext?.close();
    this.scheduler = null;
    this.schedulerContext = null;
  }

  async stop(): Promise<void> {
    await this.stopInProcessScheduler();
    // Leave nothing of ours running on the shared cluster.
    const open = await listActiveSlurmJobIds(this.db);
    const link = this.slurmLink();
    if (open.length > 0) await link.slurm.scancel(open).catch(() => undefined);
    await link.connection.exec(`rm -rf '${this.workDir}'`).catch(() => undefined);
    await link.connection.close();
    await this.api.close();
    await this.clusterFiles.close();
    await this.apiQueue.obliterate({ force: true }).catch(() => undefined);
    await this.apiQueue.close();
    this.redis.disconnect();
    await this.db.close();
    await this.tdb.drop();
  }
}

/**
 * The set-up most end-to-end files share: a Harness on the local Slurm cluster with a scheduler
 * in this process, started before the file's tests and stopped after them.
 */
export function localClusterHarness(): Harness {
  const h = new Harness();
  beforeAll(async () => {
    await h.start();
    await h.registerCluster('local');
    await h.startInProcessScheduler();
  });
  afterAll(async () => {
    await h.stop();
  });
  return h;
}

/** A TCP relay to the cluster's sshd that a test can cut and restore, to play an unreachable cluster. */
export class Relay {
  private server: net.Server | null = null;
  private sockets = new Set<net.Socket>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async open(): Promise<void> {
    this.server = net.createServer((client) => {
      const upstream = net.connect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  async cut(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = null;
  }
}
