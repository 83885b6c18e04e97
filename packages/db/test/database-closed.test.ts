// @erg/db is closed: every read and write is a named function of packages/db, so no source outside
// it reaches Prisma or the pg pool. This scans apps/, packages/ and bench/ (packages/db, generated
// code, builds and dependencies excepted) and names every file:line that does.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { NON_SOURCE_DIRS, repoRoot, sourceFiles } from '@erg/testkit';

const SCANNED = ['apps', 'packages', 'bench'];
const SOURCE = /\.(ts|tsx|js|cjs|mjs)$/;

/** What reaching past the named functions looks like: the handle's fields and Prisma's raw escapes. */
const FORBIDDEN: { what: string; pattern: RegExp }[] = [
  { what: 'prisma', pattern: /\bprisma\s*\.|\.prisma\b/ },
  { what: 'pool.query', pattern: /\bpool\s*\.\s*(query|connect)\b/ },
  // A property `.pool` (db.pool, this.pool); not a spread (`...pool`) or a plain variable.
  { what: '.pool', pattern: /[\w$)\]]\.pool\b/ },
  { what: 'raw Prisma SQL', pattern: /\$(queryRaw|executeRaw)(Unsafe)?\b/ },
];

/**
 * Lines owned by another engineer that still reach past the named functions, each with what
 * replaces it. An entry that no longer matches fails the test too, so it is removed once fixed.
 */
const NOT_YET_MIGRATED: Record<string, string> = {};

function scannedFiles(dir: string, root: string): string[] {
  return sourceFiles(dir, {
    match: SOURCE,
    skipDir: (name, full) => NON_SOURCE_DIRS.has(name) || path.relative(root, full).split(path.sep).join('/') === 'packages/db',
  });
}

function offendingLines(root: string): string[] {
  const found: string[] = [];
  for (const top of SCANNED) {
    for (const file of scannedFiles(path.join(root, top), root)) {
      const rel = path.relative(root, file).split(path.sep).join('/');
      readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
        const hit = FORBIDDEN.find((f) => f.pattern.test(line));
        if (hit) found.push(`${rel}:${i + 1}: ${hit.what}: ${line.trim()}`);
      });
    }
  }
  return found;
}

describe('@erg/db is closed', () => {
  const root = repoRoot();
  const found = offendingLines(root);

  test('no source outside packages/db uses prisma or the pg pool (each offence as file:line)', () => {
    const offences = found.filter((line) => !(line.split(':')[0]! in NOT_YET_MIGRATED));
    expect(offences).toEqual([]);
  });

  test('every line still waiting for its owner is still there (remove the entry once it is migrated)', () => {
    const files = new Set(found.map((line) => line.split(':')[0]!));
    expect(Object.keys(NOT_YET_MIGRATED).filter((file) => !files.has(file))).toEqual([]);
  });

  test('the scan finds what it looks for', () => {
    const sample = ['db.prisma.run.findMany()', 'await t.db.pool.query(sql)', 'this.pool.end()', 'db.$queryRaw`x`', 'const { prisma } = db; prisma.user'];
    expect(sample.filter((line) => FORBIDDEN.some((f) => f.pattern.test(line)))).toEqual(sample);
    const innocent = ['fc.constantFrom(...pool)', 'const pool = new Offload()', 'prisma/migrations', '// a pooled connection', 'this.connections.get()'];
    expect(innocent.filter((line) => FORBIDDEN.some((f) => f.pattern.test(line)))).toEqual([]);
  });
});
