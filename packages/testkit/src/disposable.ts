import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import pg from 'pg';
import { closedPort } from './ports';
import { waitFor } from './wait-for';

/**
 * Postgres and Redis instances of a test's own, for the fault tests: they restart, wipe and stop
 * these, never the machine's pre-started services (:5432, :6379), which other tests share.
 * Postgres is a cluster made with Debian's pg_createcluster (a few seconds); Redis is a child
 * redis-server without persistence, so a restart loses its data as a crash of a cache would.
 */

const run = promisify(execFile);

/** Every cluster this module makes is named `ergt<pid>_…`, so leftovers of dead test processes can be found. */
const CLUSTER_PREFIX = 'ergt';

function pgVersion(): string {
  const versions = readdirSync('/etc/postgresql').filter((v) => /^\d+$/.test(v));
  if (versions.length === 0) throw new Error('no PostgreSQL server found under /etc/postgresql (install postgresql)');
  return versions.sort((a, b) => Number(b) - Number(a))[0]!;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** Drops clusters a killed test process left behind (their creator's pid no longer exists). */
async function dropLeftoverClusters(version: string): Promise<void> {
  for (const name of readdirSync(`/etc/postgresql/${version}`)) {
    const m = new RegExp(`^${CLUSTER_PREFIX}(\\d+)_`).exec(name);
    if (m && !processAlive(Number(m[1]))) await run('pg_dropcluster', ['--stop', version, name]).catch(() => undefined);
  }
}

export interface DisposablePostgres {
  readonly port: number;
  /** A URL of database `db` on this server (default `postgres`). */
  url(db?: string): string;
  /** `pg_ctlcluster restart`: `fast` ends sessions with 57P01 as an operator's restart does; `immediate` as a crash. */
  restart(mode?: 'fast' | 'immediate'): Promise<void>;
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /** Stops and deletes the cluster. */
  destroy(): Promise<void>;
}

/** A new Postgres cluster on a free port, trusting local TCP connections, started and accepting them. */
export async function startDisposablePostgres(): Promise<DisposablePostgres> {
  const version = pgVersion();
  await dropLeftoverClusters(version);
  const port = await closedPort();
  const name = `${CLUSTER_PREFIX}${process.pid}_${port}`;
  await run('pg_createcluster', [version, name, '-p', String(port), '--', '--auth-local=trust', '--auth-host=trust']);
  // pg_createcluster may keep its own defaults; tests connect over TCP as postgres without a password.
  writeFileSync(
    `/etc/postgresql/${version}/${name}/pg_hba.conf`,
    'local all all trust\nhost all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\n',
  );
  const url = (db = 'postgres') => `postgresql://postgres@127.0.0.1:${port}/${db}`;
  const ctl = async (action: string, mode?: string) => {
    await run('pg_ctlcluster', ['--skip-systemctl-redirect', version, name, action, ...(mode ? ['-m', mode] : [])]);
  };
  const accepting = () =>
    waitFor(
      async () => {
        const c = new pg.Client({ connectionString: url() });
        c.on('error', () => undefined);
        try {
          await c.connect();
          await c.query('SELECT 1');
          return true;
        } finally {
          await c.end().catch(() => undefined);
        }
      },
      { timeoutMs: 30_000, what: `Postgres cluster ${name} to accept connections` },
    );
  await ctl('start');
  await accepting();
  return {
    port,
    url,
    async restart(mode = 'fast') {
      await ctl('restart', mode);
      await accepting();
    },
    async stop(mode = 'fast') {
      await ctl('stop', mode);
    },
    async start() {
      await ctl('start');
      await accepting();
    },
    async destroy() {
      await run('pg_dropcluster', ['--stop', version, name]).catch(() => undefined);
    },
  };
}

export interface DisposableRedis {
  readonly port: number;
  readonly url: string;
  /** Kills the server (SIGKILL) and starts a new one on the same port: every key is gone. */
  restartEmpty(): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
}

/** A redis-server of this test's own on a free port, keeping nothing on disk. */
export async function startDisposableRedis(): Promise<DisposableRedis> {
  const port = await closedPort();
  let child: ChildProcess | null = null;
  const ping = () =>
    waitFor(
      async () => {
        const { stdout } = await run('redis-cli', ['-p', String(port), 'ping']);
        return stdout.trim() === 'PONG';
      },
      { timeoutMs: 15_000, what: `redis-server on port ${port} to answer` },
    );
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'], {
      stdio: 'ignore',
    });
    await ping();
  };
  const stop = async () => {
    const c = child;
    child = null;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((resolve) => c.once('exit', resolve));
    c.kill('SIGKILL');
    await exited;
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async restartEmpty() {
      await stop();
      await start();
    },
    stop,
    start,
  };
}
