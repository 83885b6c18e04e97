import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createApiToken, createDatabase, ensureDatabase, migrate } from '@erg/db';
import { allowLoopbackClusters, closedPort, repoRoot, TEST_SECRET_KEY, waitFor } from '@erg/testkit';
import { readEventStream, type EventStream } from './event-stream';

export type { EventStream, SseEvent } from './event-stream';

/**
 * The built API (apps/api/dist/main.js) as a child process, for the tests that need a process
 * that can die (a crash is the defect they look for) or several processes on one database.
 */

/**
 * The timeout an afterAll that stops API processes needs: stop() may take 10 s by contract
 * (SIGTERM, then SIGKILL), and the hook also stops Redis and drops a database. Jest's default
 * hook timeout (5 s) failed a run on a loaded 2-core CI machine.
 */
export const STOP_HOOK_MS = 30_000;

/** How much of the child's output is kept for failure messages. */
const OUTPUT_KEPT = 64 * 1024;

export interface ApiProcessOptions {
  databaseUrl: string;
  redisUrl: string;
  /** ERG_QUEUE_PREFIX; processes that share one must be replicas of one erg. */
  queuePrefix: string;
  /** The bearer token `call` and `openEventStream` use. */
  token: string;
  /** More environment (LOG_LEVEL defaults to warn). */
  env?: Record<string, string>;
}

export interface ApiProcess {
  readonly url: string;
  readonly child: ChildProcess;
  /** Null while the process runs; how it ended once it has. */
  readonly exit: { code: number | null; signal: NodeJS.Signals | null } | null;
  /** The tail of what it wrote on stdout and stderr. */
  output(): string;
  call<T = any>(method: string, url: string, body?: unknown): Promise<{ status: number; body: T; headers: Headers }>;
  /** SIGTERM (its graceful shutdown), SIGKILL if it has not ended within 10 s. */
  stop(): Promise<void>;
}

/** Starts the built API and resolves once GET /healthz answers; rejects with its output if it exits first. */
export async function startApiProcess(options: ApiProcessOptions): Promise<ApiProcess> {
  const port = await closedPort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [path.join(repoRoot(), 'apps', 'api', 'dist', 'main.js')], {
    env: {
      ...process.env,
      DATABASE_URL: options.databaseUrl,
      REDIS_URL: options.redisUrl,
      ERG_QUEUE_PREFIX: options.queuePrefix,
      ERG_API_HOST: '127.0.0.1',
      ERG_API_PORT: String(port),
      ERG_SECRET_KEY: TEST_SECRET_KEY,
      LOG_LEVEL: 'warn',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_KEPT);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let exit: ApiProcess['exit'] = null;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      resolve();
    }),
  );

  const call: ApiProcess['call'] = async (method, route, body) => {
    const res = await fetch(url + route, {
      method,
      headers: { authorization: `Bearer ${options.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
  };

  const proc: ApiProcess = {
    url,
    child,
    get exit() {
      return exit;
    },
    output: () => output,
    call,
    async stop() {
      if (exit) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
  try {
    await waitFor(
      async () => {
        if (exit) throw new Error(`the API exited (${JSON.stringify(exit)}) while starting:\n${output}`);
        return (await fetch(`${url}/healthz`)).status === 200;
      },
      { timeoutMs: 30_000, intervalMs: 100, what: `the API process on port ${port} to answer /healthz` },
    );
  } catch (err) {
    await proc.stop();
    throw new Error(`${(err as Error).message}\n--- its output ---\n${output}`);
  }
  return proc;
}

/**
 * Creates and migrates the database at `databaseUrl` as the API does at start-up, and returns an
 * admin token stored there: processes started on it afterwards all accept that token. The default
 * project allows clusters on loopback, as in startTestApi (helpers.ts).
 */
export async function prepareDatabase(databaseUrl: string): Promise<string> {
  await ensureDatabase(databaseUrl);
  await migrate(databaseUrl);
  const db = createDatabase(databaseUrl, { max: 1 });
  try {
    await allowLoopbackClusters(db);
    return (await createApiToken(db, 'test')).token;
  } finally {
    await db.close();
  }
}

/** GET /v1/events read with fetch (as the web app does), its events collected as they come; resolves after `hello`. */
export async function openEventStream(baseUrl: string, token: string, query = ''): Promise<EventStream> {
  const stream = await readEventStream(`${baseUrl}/v1/events${query}`, token);
  if (stream.res.status !== 200) {
    await stream.close();
    throw new Error(`GET /v1/events answered ${stream.res.status}`);
  }
  await stream.next((e) => e.event === 'hello', 'the stream\'s hello');
  return stream;
}
