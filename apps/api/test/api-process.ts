import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createApiToken, createDatabase, ensureDatabase, migrate } from '@erg/db';
import { closedPort, repoRoot, TEST_SECRET_KEY, waitFor } from '@erg/testkit';

/**
 * The built API (apps/api/dist/main.js) as a child process, for the tests that need a process
 * that can die (a crash is the defect they look for) or several processes on one database.
 */

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
 * admin token stored there: processes started on it afterwards all accept that token.
 */
export async function prepareDatabase(databaseUrl: string): Promise<string> {
  await ensureDatabase(databaseUrl);
  await migrate(databaseUrl);
  const db = createDatabase(databaseUrl, { max: 1 });
  try {
    return (await createApiToken(db, 'test')).token;
  } finally {
    await db.close();
  }
}

export interface SseEvent {
  id?: string;
  event: string;
  data: any;
}

export interface EventStream {
  readonly events: SseEvent[];
  /** True once the response ended or the stream was closed. */
  readonly ended: boolean;
  /** Waits (with a deadline) for an event that satisfies `pred`. */
  next(pred: (e: SseEvent) => boolean, what: string, timeoutMs?: number): Promise<SseEvent>;
  close(): Promise<void>;
}

/** GET /v1/events read with fetch (as the web app does), its events collected as they come; resolves after `hello`. */
export async function openEventStream(baseUrl: string, token: string, query = ''): Promise<EventStream> {
  const controller = new AbortController();
  const res = await fetch(`${baseUrl}/v1/events${query}`, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
  if (res.status !== 200) throw new Error(`GET /v1/events answered ${res.status}: ${await res.text()}`);
  const events: SseEvent[] = [];
  let ended = false;
  const reading = (async () => {
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let at: number;
        while ((at = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          const e: Partial<SseEvent> = {};
          for (const line of frame.split('\n')) {
            if (line.startsWith(':')) continue;
            const [field, ...rest] = line.split(': ');
            const v = rest.join(': ');
            if (field === 'id') e.id = v;
            if (field === 'event') e.event = v;
            if (field === 'data') e.data = JSON.parse(v);
          }
          if (e.event) events.push(e as SseEvent);
        }
      }
    } catch {
      // aborted, or the server went away: `ended` says so
    }
    ended = true;
  })();
  const stream: EventStream = {
    events,
    get ended() {
      return ended;
    },
    next: (pred, what, timeoutMs = 10_000) => waitFor(() => events.find(pred), { timeoutMs, intervalMs: 20, what }),
    async close() {
      controller.abort();
      await reading;
    },
  };
  await stream.next((e) => e.event === 'hello', 'the stream\'s hello');
  return stream;
}
