// The test databases' template: created and migrated once however many test workers ask at the
// same time, never left half-migrated, and cloned into databases that are migrated already.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { dropDatabase, listMigrations, migrate } from '@erg/db';
import { cloneDatabase, ensureTemplateDatabase } from '@erg/db/testing';
import { testServerUrl, uniqueName } from '@erg/testkit';

function urlOf(name: string): string {
  const url = new URL(testServerUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

async function exists(name: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: testServerUrl() });
  await client.connect();
  try {
    return (await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
  } finally {
    await client.end();
  }
}

describe('template databases', () => {
  const created: string[] = [];
  const named = (prefix: string) => {
    const name = uniqueName(prefix).toLowerCase();
    created.push(name);
    return name;
  };

  afterAll(async () => {
    for (const name of created) await dropDatabase(urlOf(name));
  });

  test('concurrent callers make one migrated template, and its clones are migrated', async () => {
    const template = named('erg_tt');
    await Promise.all([ensureTemplateDatabase(urlOf(template)), ensureTemplateDatabase(urlOf(template)), ensureTemplateDatabase(urlOf(template))]);
    await ensureTemplateDatabase(urlOf(template));
    const clone = named('erg_tc');
    await cloneDatabase(urlOf(clone), template);
    expect(listMigrations().length).toBeGreaterThan(0);
    expect(await migrate(urlOf(clone))).toEqual([]);
  });

  test('a migration that fails leaves no template behind', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'erg-migrations-'));
    try {
      mkdirSync(path.join(dir, '0001_broken'));
      writeFileSync(path.join(dir, '0001_broken', 'migration.sql'), 'SELECT no_such_function();');
      const template = named('erg_tt');
      await expect(ensureTemplateDatabase(urlOf(template), dir)).rejects.toThrow(/migration 0001_broken failed/);
      expect(await exists(template)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a template name that cannot be written into a statement is refused', async () => {
    await expect(cloneDatabase(urlOf(named('erg_tc')), 'x" TEMPLATE "y')).rejects.toThrow(/unsupported database name/);
  });
});
