import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { defaultMigrationsDir, dropDatabase, listMigrations } from '@erg/db';
import { cloneDatabase, ensureTemplateDatabase } from '@erg/db/testing';
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
async function ensureTemplate(): Promise<string> {
  const dir = defaultMigrationsDir();
  const hash = createHash('sha256');
  for (const name of listMigrations(dir)) hash.update(name).update(readFileSync(path.join(dir, name, 'migration.sql')));
  const template = `erg_template_${hash.digest('hex').slice(0, 12)}`;
  await ensureTemplateDatabase(withDatabase(testServerUrl(), template), dir);
  return template;
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A fresh, migrated database of its own for one test file; `drop()` removes it. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const template = await ensureTemplate();
  const name = uniqueName('erg_t').toLowerCase();
  const url = withDatabase(testServerUrl(), name);
  await cloneDatabase(url, template);
  return {
    name,
    url,
    async drop() {
      await dropDatabase(url);
    },
  };
}
