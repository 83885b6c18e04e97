import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { defaultMigrationsDir, listMigrations, migrate } from '@erg/db';
import { uniqueName } from './unique-name';

/** The server tests create their databases on; CI and this machine have a trusting local Postgres. */
export function testServerUrl(): string {
  return process.env.ERG_TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
}

function withDatabase(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Migrations change rarely: migrate one template per migration set and clone it per test file. */
async function ensureTemplate(admin: pg.Client): Promise<string> {
  const dir = defaultMigrationsDir();
  const hash = createHash('sha256');
  for (const name of listMigrations(dir)) hash.update(name).update(readFileSync(path.join(dir, name, 'migration.sql')));
  const template = `erg_template_${hash.digest('hex').slice(0, 12)}`;
  await admin.query('SELECT pg_advisory_lock(72700002)');
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
    if (exists.rowCount === 0) {
      await admin.query(`CREATE DATABASE "${template}"`);
      try {
        await migrate(withDatabase(testServerUrl(), template), dir);
      } catch (err) {
        await admin.query(`DROP DATABASE IF EXISTS "${template}"`);
        throw err;
      }
    }
  } finally {
    await admin.query('SELECT pg_advisory_unlock(72700002)');
  }
  return template;
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A fresh, migrated database of its own for one test file; `drop()` removes it. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const admin = new pg.Client({ connectionString: testServerUrl() });
  await admin.connect();
  try {
    const template = await ensureTemplate(admin);
    const name = uniqueName('erg_t').toLowerCase();
    await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
    return {
      name,
      url: withDatabase(testServerUrl(), name),
      async drop() {
        const client = new pg.Client({ connectionString: testServerUrl() });
        await client.connect();
        try {
          await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        } finally {
          await client.end();
        }
      },
    };
  } finally {
    await admin.end();
  }
}
