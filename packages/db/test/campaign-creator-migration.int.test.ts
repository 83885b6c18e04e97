// Migration 20261210040000_access_ends on rows written before it: campaigns then named their
// creator by the token's name alone (`created_by`), which a token named `suite:<x>` could make look
// like a suite's. The migration tells the suite, the token and the user apart where the rows say
// so, and guesses no user where tokens of two users share the name.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { defaultMigrationsDir, dropDatabase, ensureDatabase, listMigrations, migrate } from '@erg/db';
import { testServerUrl, uniqueName } from '@erg/testkit';

const MIGRATION = '20261210040000_access_ends';

describe(`migration ${MIGRATION}: who started a campaign, from rows written before it`, () => {
  let url: string;
  let dir: string;
  let client: pg.Client;

  beforeAll(async () => {
    const u = new URL(testServerUrl());
    u.pathname = `/${uniqueName('erg_mig').toLowerCase()}`;
    url = u.toString();
    // The migrations before this one, in a folder of their own.
    dir = mkdtempSync(path.join(tmpdir(), 'erg-migrations-'));
    for (const name of listMigrations().filter((n) => n < MIGRATION)) cpSync(path.join(defaultMigrationsDir(), name), path.join(dir, name), { recursive: true });
    await ensureDatabase(url);
    await migrate(url, dir);
    client = new pg.Client({ connectionString: url });
    await client.connect();
  }, 120_000);

  afterAll(async () => {
    await client?.end();
    await dropDatabase(url);
    rmSync(dir, { recursive: true, force: true });
  });

  test('suites, tokens and users are told apart; an ambiguous user is not guessed', async () => {
    const one = async <T = Record<string, string>>(sql: string, params: unknown[] = []) => (await client.query(sql, params)).rows[0] as T;
    const project = (await one<{ id: string }>(`SELECT id FROM projects WHERE name = 'default'`)).id;
    const admin = (await one<{ id: string }>(`SELECT id FROM users WHERE name = 'admin'`)).id;
    const user = async (name: string) => (await one<{ id: string }>(`INSERT INTO users (id, name) VALUES (gen_random_uuid(), $1) RETURNING id`, [name])).id;
    const [alice, bob] = [await user('alice'), await user('bob')];
    const token = async (userId: string, name: string, at: string) =>
      (await one<{ id: string }>(
        `INSERT INTO api_tokens (id, name, prefix, token_hash, user_id, created_at) VALUES (gen_random_uuid(), $1, 'erg_x', gen_random_uuid()::text, $2, $3) RETURNING id`,
        [name, userId, at],
      )).id;
    const aliceLaptop = await token(alice, 'laptop', '2026-12-01T00:00:00Z');
    const bobLaptop = await token(bob, 'laptop', '2026-12-02T00:00:00Z');
    const adminSuiteLike = await token(admin, 'suite:nightly', '2026-12-01T00:00:00Z');
    const adminCi = await token(admin, 'ci', '2026-12-01T00:00:00Z');
    const campaign = async (createdBy: string, userId: string | null) =>
      (await one<{ id: string }>(
        `INSERT INTO campaigns (id, name, project_id, spec, design_order, created_by, created_by_user_id, created_at)
         VALUES (gen_random_uuid(), 'c', $1, '{}', 'configuration-major', $2, $3, '2026-12-05T00:00:00Z') RETURNING id`,
        [project, createdBy, userId],
      )).id;
    const byAlice = await campaign('laptop', alice);
    const bySomeLaptop = await campaign('laptop', null);
    const bySuite = await campaign('suite:nightly', null);
    const byDeletedSuite = await campaign('suite:gone', null);
    const byAdminToken = await campaign('suite:nightly', admin);
    const byCi = await campaign('ci', null);
    const suite = (await one<{ id: string }>(`INSERT INTO suites (id, name, project_id, template, policy) VALUES (gen_random_uuid(), 'nightly', $1, '{}', '{}') RETURNING id`, [project])).id;
    await client.query(`INSERT INTO suite_runs (id, suite_id, campaign_id, "trigger") VALUES (gen_random_uuid(), $1, $2, 'schedule')`, [suite, bySuite]);

    await migrate(url);

    const rows = new Map(
      (await client.query<{ id: string; created_by: string | null; created_by_user_id: string | null; created_by_token_id: string | null; created_by_suite: string | null }>(
        'SELECT id, created_by, created_by_user_id, created_by_token_id, created_by_suite FROM campaigns',
      )).rows.map((r) => [r.id, r]),
    );
    const creator = (id: string) => {
      const r = rows.get(id)!;
      return { tokenName: r.created_by, userId: r.created_by_user_id, tokenId: r.created_by_token_id, suite: r.created_by_suite };
    };
    expect(creator(byAlice)).toEqual({ tokenName: 'laptop', userId: alice, tokenId: aliceLaptop, suite: null });
    // Two users have a "laptop": the newest token is named, the user is left unknown.
    expect(creator(bySomeLaptop)).toEqual({ tokenName: 'laptop', userId: null, tokenId: bobLaptop, suite: null });
    expect(creator(bySuite)).toEqual({ tokenName: null, userId: null, tokenId: null, suite: 'nightly' });
    expect(creator(byDeletedSuite)).toEqual({ tokenName: null, userId: null, tokenId: null, suite: 'gone' });
    // A token that was named like a suite stays a token.
    expect(creator(byAdminToken)).toEqual({ tokenName: 'suite:nightly', userId: admin, tokenId: adminSuiteLike, suite: null });
    expect(creator(byCi)).toEqual({ tokenName: 'ci', userId: admin, tokenId: adminCi, suite: null });
    // users.disabled_at is deactivated_at now.
    expect((await one<{ n: string }>(`SELECT count(*) AS n FROM information_schema.columns WHERE table_name = 'users' AND column_name = 'deactivated_at'`)).n).toBe('1');
  });
});
