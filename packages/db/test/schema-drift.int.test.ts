// Model bodies are read up to the closing brace at the start of a line, so defaults like @default("{}") do not end them.
// Guards against drift between prisma/schema.prisma and the SQL migrations we apply ourselves:
// every model field must exist as a column of the right type and nullability, every unique
// constraint as a unique index, and the database must hold nothing the schema does not name.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { createTestDatabase, repoRoot, type TestDatabase } from '@erg/testkit';
import { migrate } from '@erg/db';

interface Field { column: string; type: string; optional: boolean; list: boolean; isRelation: boolean; db?: string }
interface Model { table: string; fields: Field[]; uniques: string[][]; primaryKey: string[] }

function parseSchema(text: string): { models: Model[]; enums: Map<string, string> } {
  const enums = new Map<string, string>();
  for (const m of text.matchAll(/^enum (\w+) \{([\s\S]*?)^\}/gm)) {
    const mapped = /@@map\("([^"]+)"\)/.exec(m[2]!)?.[1] ?? m[1]!;
    enums.set(m[1]!, mapped);
  }
  const modelNames = new Set([...text.matchAll(/^model (\w+) \{/gm)].map((m) => m[1]!));
  const models: Model[] = [];
  for (const m of text.matchAll(/^model (\w+) \{([\s\S]*?)^\}/gm)) {
    const body = m[2]!;
    const fields: Field[] = [];
    const uniques: string[][] = [];
    let primaryKey: string[] = [];
    const columnOf = new Map<string, string>();
    for (const line of body.split('\n').map((l) => l.trim())) {
      if (!line || line.startsWith('//') ) continue;
      if (line.startsWith('@@id')) {
        primaryKey = /\[([^\]]+)\]/.exec(line)![1]!.split(',').map((f) => f.trim());
        continue;
      }
      if (line.startsWith('@@unique')) {
        uniques.push(/\[([^\]]+)\]/.exec(line)![1]!.split(',').map((s) => s.trim()));
        continue;
      }
      if (line.startsWith('@@')) continue;
      const fm = /^(\w+)\s+(\w+)(\[\])?(\?)?(.*)$/.exec(line);
      if (!fm) continue;
      const [, name, type, list, optional, rest] = fm;
      const column = /@map\("([^"]+)"\)/.exec(rest!)?.[1] ?? name!;
      columnOf.set(name!, column);
      if (/@unique\b/.test(rest!)) uniques.push([name!]);
      if (/@id\b/.test(rest!)) primaryKey = [name!];
      fields.push({
        column, type: type!, optional: !!optional, list: !!list, isRelation: modelNames.has(type!),
        db: /@db\.(\w+)/.exec(rest!)?.[1],
      });
    }
    const table = /@@map\("([^"]+)"\)/.exec(body)?.[1] ?? m[1]!;
    models.push({
      table, fields, uniques: uniques.map((u) => u.map((f) => columnOf.get(f) ?? f)), primaryKey: primaryKey.map((f) => columnOf.get(f) ?? f),
    });
  }
  return { models, enums };
}

function expectedSqlType(f: Field, enums: Map<string, string>): string {
  if (enums.has(f.type)) return `enum:${enums.get(f.type)}`;
  if (f.db === 'Uuid') return 'uuid';
  switch (f.type) {
    case 'String': return 'text';
    case 'Int': return 'integer';
    case 'BigInt': return 'bigint';
    case 'Float': return 'double precision';
    case 'Boolean': return 'boolean';
    case 'DateTime': return 'timestamp with time zone';
    case 'Json': return 'jsonb';
    case 'Bytes': return 'bytea';
    default: throw new Error(`no SQL type known for ${f.type}`);
  }
}

describe('prisma/schema.prisma and prisma/migrations agree', () => {
  let db: TestDatabase;
  let client: pg.Client;
  const { models, enums } = parseSchema(readFileSync(path.join(repoRoot(), 'prisma', 'schema.prisma'), 'utf8'));

  beforeAll(async () => {
    db = await createTestDatabase();
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
  });
  afterAll(async () => {
    await client.end();
    await db.drop();
  });

  test('every model field is a column with the same type and nullability', async () => {
    const cols = await client.query<{ table_name: string; column_name: string; data_type: string; udt_name: string; is_nullable: string }>(
      `SELECT table_name, column_name, data_type, udt_name, is_nullable FROM information_schema.columns WHERE table_schema = 'public'`,
    );
    const byKey = new Map(cols.rows.map((c) => [`${c.table_name}.${c.column_name}`, c]));
    const problems: string[] = [];
    const expectedKeys = new Set<string>();
    for (const model of models) {
      // Scalar lists (String[]) are Postgres arrays, kept NOT NULL (empty by default); relation lists have no column.
      for (const f of model.fields.filter((x) => !x.isRelation)) {
        const key = `${model.table}.${f.column}`;
        expectedKeys.add(key);
        const col = byKey.get(key);
        if (!col) { problems.push(`${key}: missing column`); continue; }
        const arrayOf: Record<string, string> = { _text: 'text', _uuid: 'uuid' };
        const actual = col.data_type === 'USER-DEFINED' ? `enum:${col.udt_name}` : col.data_type === 'ARRAY' ? `${arrayOf[col.udt_name] ?? col.udt_name}[]` : col.data_type;
        const expected = f.list ? `${expectedSqlType(f, enums)}[]` : expectedSqlType(f, enums);
        if (actual !== expected) problems.push(`${key}: type ${actual}, schema says ${expected}`);
        if ((col.is_nullable === 'YES') !== f.optional) problems.push(`${key}: nullable=${col.is_nullable}, schema optional=${f.optional}`);
      }
    }
    for (const key of byKey.keys()) {
      if (!key.startsWith('_prisma_migrations.') && !expectedKeys.has(key)) problems.push(`${key}: column not in schema.prisma`);
    }
    expect(problems).toEqual([]);
  });

  test('every @unique / @@unique has a unique index', async () => {
    const idx = await client.query<{ tablename: string; indexdef: string }>(`SELECT tablename, indexdef FROM pg_indexes WHERE schemaname = 'public'`);
    const uniqueSets = idx.rows
      .filter((r) => r.indexdef.startsWith('CREATE UNIQUE INDEX'))
      .map((r) => `${r.tablename}(${/\(([^)]*)\)/.exec(r.indexdef)![1]!.replace(/"/g, '').split(', ').sort().join(',')})`);
    const missing: string[] = [];
    for (const model of models) {
      for (const u of model.uniques) {
        const key = `${model.table}(${[...u].sort().join(',')})`;
        if (!uniqueSets.includes(key)) missing.push(key);
      }
    }
    expect(missing).toEqual([]);
  });

  test('every model has the primary key its @id / @@id names', async () => {
    const pks = await client.query<{ table_name: string; columns: string[] }>(
      `SELECT tc.table_name, array_agg(kcu.column_name::text ORDER BY kcu.ordinal_position) AS columns
       FROM information_schema.table_constraints tc
       JOIN information_schema.key_column_usage kcu ON kcu.constraint_name = tc.constraint_name AND kcu.table_schema = tc.table_schema
       WHERE tc.table_schema = 'public' AND tc.constraint_type = 'PRIMARY KEY' GROUP BY tc.table_name`,
    );
    const actual = Object.fromEntries(pks.rows.map((r) => [r.table_name, r.columns]));
    expect(Object.fromEntries(models.map((m) => [m.table, actual[m.table]]))).toEqual(Object.fromEntries(models.map((m) => [m.table, m.primaryKey])));
  });

  test('migrating again is a no-op', async () => {
    await expect(migrate(db.url)).resolves.toEqual([]);
  });
});
