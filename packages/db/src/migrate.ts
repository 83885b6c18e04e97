import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';

/**
 * Applies prisma/migrations/<name>/migration.sql in name order, each in its own transaction,
 * recording them in Prisma's own `_prisma_migrations` table (same columns, same sha256
 * checksum) so that `prisma migrate deploy` stays valid where Prisma's schema engine exists.
 * We cannot use the Prisma CLI for this here: it needs a binary that cannot be downloaded.
 */
export async function migrate(databaseUrl: string, migrationsDir = defaultMigrationsDir()): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  // A Postgres restart during start-up must fail the awaited query (a clean "failed to start"), not emit an unhandled 'error'.
  client.on('error', () => undefined);
  await client.connect();
  try {
    // Two processes starting at once (api and scheduler) must not apply the same migration twice.
    await client.query('SELECT pg_advisory_lock(72700001)');
    await client.query(`
      CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
        "id" VARCHAR(36) PRIMARY KEY NOT NULL,
        "checksum" VARCHAR(64) NOT NULL,
        "finished_at" TIMESTAMPTZ,
        "migration_name" VARCHAR(255) NOT NULL,
        "logs" TEXT,
        "rolled_back_at" TIMESTAMPTZ,
        "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
        "applied_steps_count" INTEGER NOT NULL DEFAULT 0
      )`);
    const done = await client.query<{ migration_name: string; checksum: string }>(
      `SELECT migration_name, checksum FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    );
    const applied = new Map(done.rows.map((r) => [r.migration_name, r.checksum]));
    const newlyApplied: string[] = [];
    for (const name of listMigrations(migrationsDir)) {
      const sql = readFileSync(path.join(migrationsDir, name, 'migration.sql'), 'utf8');
      const checksum = createHash('sha256').update(sql).digest('hex');
      const previous = applied.get(name);
      if (previous !== undefined) {
        if (previous !== checksum) {
          throw new Error(`migration ${name} was edited after it was applied (checksum differs); add a new migration instead`);
        }
        continue;
      }
      await client.query('BEGIN');
      try {
        await client.query(sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count)
           VALUES ($1, $2, now(), $3, 1)`,
          [randomUUID(), checksum, name],
        );
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${name} failed: ${(err as Error).message}`);
      }
      newlyApplied.push(name);
    }
    return newlyApplied;
  } finally {
    await client.query('SELECT pg_advisory_unlock(72700001)').catch(() => undefined);
    await client.end();
  }
}

export function listMigrations(migrationsDir = defaultMigrationsDir()): string[] {
  return readdirSync(migrationsDir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(migrationsDir, d.name, 'migration.sql')))
    .map((d) => d.name)
    .sort();
}

/** prisma/migrations at the repository root, found from this file in src/ or dist/. */
export function defaultMigrationsDir(): string {
  let dir = __dirname;
  for (;;) {
    const candidate = path.join(dir, 'prisma', 'migrations');
    if (existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`prisma/migrations not found above ${__dirname}`);
    dir = parent;
  }
}

/** A database name that is safe to write, quoted, into a statement (names cannot be bound). */
function checkedDatabaseName(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_-]{0,62}$/.test(name)) throw new Error(`unsupported database name "${name}"`);
  return name;
}

/**
 * Runs `work` on a connection to the `postgres` database of the server in `databaseUrl`, with the
 * database name the URL names (checked: it is written into a statement, not bound).
 */
async function onMaintenanceDatabase(databaseUrl: string, work: (client: pg.Client, name: string) => Promise<void>): Promise<void> {
  const url = new URL(databaseUrl);
  const name = checkedDatabaseName(decodeURIComponent(url.pathname.replace(/^\//, '')));
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await work(client, name);
  } finally {
    await client.end();
  }
}

/** Creates the database named in the URL when it does not exist yet (connecting to `postgres`). */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  await onMaintenanceDatabase(databaseUrl, async (client, name) => {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE "${name}"`).catch((err: { code?: string }) => {
        if (err.code !== '42P04') throw err; // created by someone else meanwhile
      });
    }
  });
}

/** Drops the database named in the URL, ending its sessions (connecting to `postgres`); a missing one is fine. */
export async function dropDatabase(databaseUrl: string): Promise<void> {
  await onMaintenanceDatabase(databaseUrl, async (client, name) => {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });
}

/**
 * Creates the database named in the URL and applies every migration to it, unless it exists: the
 * template the tests clone (cloneDatabase). All of it happens under one lock on the server, so
 * that a concurrent caller waits instead of cloning a template still being migrated; a failed
 * migration drops the database again, so an existing one is always complete and is taken as it is.
 */
export async function ensureTemplateDatabase(databaseUrl: string, migrationsDir = defaultMigrationsDir()): Promise<void> {
  await onMaintenanceDatabase(databaseUrl, async (client, name) => {
    await client.query('SELECT pg_advisory_lock(72700002)');
    try {
      const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (exists.rowCount === 0) {
        await client.query(`CREATE DATABASE "${name}"`);
        try {
          await migrate(databaseUrl, migrationsDir);
        } catch (err) {
          await client.query(`DROP DATABASE IF EXISTS "${name}"`);
          throw err;
        }
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock(72700002)');
    }
  });
}

/** Creates the database named in the URL as a copy of `template`, a database on the same server (Postgres copies it only while nobody is connected to it). */
export async function cloneDatabase(databaseUrl: string, template: string): Promise<void> {
  const source = checkedDatabaseName(template);
  await onMaintenanceDatabase(databaseUrl, async (client, name) => {
    await client.query(`CREATE DATABASE "${name}" TEMPLATE "${source}"`);
  });
}
