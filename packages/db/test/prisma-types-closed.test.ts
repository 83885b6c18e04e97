// Prisma's generated types stay inside @erg/db: callers get the package's own record types
// (ClusterRecord, SuiteRecord, …), whose fields are what they use, so a column added to the schema
// does not become part of every caller's contract. This scans apps/, packages/ and bench/
// (packages/db, generated code, builds and dependencies excepted) for a Prisma model type taken
// from @erg/db, and packages/db/src for a re-export of the generated client.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { NON_SOURCE_DIRS, repoRoot, sourceFiles } from '@erg/testkit';

const SCANNED = ['apps', 'packages', 'bench'];
const SOURCE = /\.(ts|tsx|js|cjs|mjs)$/;
const FROM_DB = String.raw`['"]@erg/db(?:/[\w-]+)?['"]`;

/** Every model of prisma/schema.prisma (the generated client names its row type after it), and the client itself. */
function prismaTypeNames(root: string): Set<string> {
  const schema = readFileSync(path.join(root, 'prisma/schema.prisma'), 'utf8');
  return new Set([...[...schema.matchAll(/^model\s+(\w+)\s*\{/gm)].map((m) => m[1]!), 'Prisma', 'PrismaClient']);
}

/** The names a list of import or destructuring specifiers takes from the module (`X as Y` and `X: Y` take X). */
function specifierNames(list: string): string[] {
  return list
    .split(',')
    .map((s) => s.trim().replace(/^type\s+/, '').split(/\s+as\s+|\s*:\s*/)[0]!.trim())
    .filter((name) => name !== '');
}

/** The names a source takes from @erg/db or one of its subpaths, however it takes them. */
function namesTakenFromDb(text: string): string[] {
  const names: string[] = [];
  const lists = [
    new RegExp(String.raw`\bimport\s+(?:type\s+)?(?:[\w$]+\s*,\s*)?\{([^}]*)\}\s*from\s*${FROM_DB}`, 'g'),
    new RegExp(String.raw`\bexport\s+(?:type\s+)?\{([^}]*)\}\s*from\s*${FROM_DB}`, 'g'),
    new RegExp(String.raw`\{([^}]*)\}\s*=\s*require\(\s*${FROM_DB}\s*\)`, 'g'),
  ];
  for (const pattern of lists) for (const m of text.matchAll(pattern)) names.push(...specifierNames(m[1]!));
  for (const m of text.matchAll(new RegExp(String.raw`\b(?:import|require)\(\s*${FROM_DB}\s*\)\s*\.\s*([\w$]+)`, 'g'))) names.push(m[1]!);
  for (const ns of text.matchAll(new RegExp(String.raw`\bimport\s+(?:type\s+)?\*\s+as\s+([\w$]+)\s+from\s*${FROM_DB}`, 'g'))) {
    for (const m of text.matchAll(new RegExp(String.raw`(?<![\w$.])${ns[1]!}\s*\.\s*([\w$]+)`, 'g'))) names.push(m[1]!);
  }
  return names;
}

/**
 * What in a packages/db source hands the generated client on: an export from './generated…', or an
 * export of a name the file imported from there.
 */
function generatedReexports(text: string): string[] {
  const found = [...text.matchAll(/\bexport\s+(?:type\s+)?(?:\*|\{[^}]*\})\s*(?:as\s+[\w$]+\s+)?from\s*['"]\.\/generated[^'"]*['"]/g)].map((m) => m[0]);
  const imported = new Set(
    [...text.matchAll(/\bimport\s+(?:type\s+)?\{([^}]*)\}\s*from\s*['"]\.\/generated[^'"]*['"]/g)].flatMap((m) =>
      m[1]!.split(',').map((s) => s.trim().replace(/^type\s+/, '').split(/\s+as\s+/).at(-1)!.trim()),
    ),
  );
  for (const m of text.matchAll(/\bexport\s+(?:type\s+)?\{([^}]*)\}(?!\s*from)/g)) {
    const local = specifierNames(m[1]!).filter((name) => imported.has(name));
    if (local.length > 0) found.push(`export { ${local.join(', ')} } (imported from ./generated)`);
  }
  return found;
}

function scannedFiles(dir: string, root: string): string[] {
  return sourceFiles(dir, {
    match: SOURCE,
    skipDir: (name, full) => NON_SOURCE_DIRS.has(name) || path.relative(root, full).split(path.sep).join('/') === 'packages/db',
  });
}

describe("Prisma's generated types stay inside @erg/db", () => {
  const root = repoRoot();
  const prismaTypes = prismaTypeNames(root);

  test('the schema has the models the scan looks for', () => {
    for (const model of ['Cluster', 'Suite', 'SuiteRun', 'Campaign', 'Project', 'User', 'Membership', 'ApiToken', 'Run']) expect(prismaTypes).toContain(model);
  });

  test('no source outside packages/db takes a Prisma model type from @erg/db (each as file: name)', () => {
    const offences: string[] = [];
    for (const top of SCANNED) {
      for (const file of scannedFiles(path.join(root, top), root)) {
        const rel = path.relative(root, file).split(path.sep).join('/');
        for (const name of namesTakenFromDb(readFileSync(file, 'utf8'))) if (prismaTypes.has(name)) offences.push(`${rel}: ${name}`);
      }
    }
    expect(offences).toEqual([]);
  });

  test('packages/db/src exports nothing of the generated client, in index.ts or in a file it re-exports', () => {
    const dbSrc = path.join(root, 'packages/db/src');
    const offences = sourceFiles(dbSrc, { match: /\.ts$/ }).flatMap((file) =>
      generatedReexports(readFileSync(file, 'utf8')).map((what) => `${path.relative(root, file)}: ${what}`),
    );
    expect(offences).toEqual([]);
  });

  test('the scans find what they look for', () => {
    const taking = [
      "import { findClusterById, type Cluster } from '@erg/db';",
      "import type {\n  Database,\n  Suite as S,\n} from '@erg/db';",
      "const { findClusterByName, Campaign } = require('@erg/db');",
      "let x: import('@erg/db').ApiToken;",
      "import * as db from '@erg/db'; let p: db.Project;",
      "export type { User } from '@erg/db/testing';",
    ];
    expect(taking.map((text) => namesTakenFromDb(text).filter((n) => prismaTypes.has(n)))).toEqual([['Cluster'], ['Suite'], ['Campaign'], ['ApiToken'], ['Project'], ['User']]);
    expect(namesTakenFromDb("import { type ClusterRecord, type Database } from '@erg/db'; import type { Cluster } from './cluster';").filter((n) => prismaTypes.has(n))).toEqual([]);

    const leaking = [
      "export type { Campaign, ApiToken } from './generated/client';",
      "export * from './generated/client';",
      "import type { Cluster } from './generated/client';\nexport type { Cluster };",
    ];
    expect(leaking.map((text) => generatedReexports(text).length > 0)).toEqual([true, true, true]);
    expect(generatedReexports("import { PrismaClient } from './generated/client';\nexport { createDatabase };")).toEqual([]);
  });
});
