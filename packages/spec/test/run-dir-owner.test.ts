// The run directory has one owner, packages/spec/src/run-dir.ts: no other source file writes one
// of its names as a string of its own — they all go through the owner's exports, so a new file in
// the run directory, or a renamed one, is one change in one place.
import fs from 'node:fs';
import path from 'node:path';
import { appAndPackageSources } from '@erg/testkit';
import { NODE_FILE_SUFFIXES, RUN_DIR_FILES, TELEMETRY_DIR_FILES } from '../src';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const OWNER = path.join(ROOT, 'packages', 'spec', 'src', 'run-dir.ts');

/** Every TypeScript source of the apps and packages; not the web app, which never sees a run directory (its `erg.token` is a browser storage key). */
function sources(): string[] {
  return appAndPackageSources(ROOT, { match: /^(?!.*\.d\.ts$).*\.tsx?$/, except: ['web'] });
}

/** Names another file may spell out, and why. */
const EXCEPTIONS: Record<string, string[]> = {
  // Prose in an OpenAPI description (its owner may write `${RUN_DIR_FILES.stdout}`; the text stays the same).
  'packages/spec/src/api.ts': [RUN_DIR_FILES.stdout],
};

/** The quoted strings and template texts of a source (interpolations and comments left out; a rough lexer: enough for erg's sources). */
function literals(text: string): string[] {
  const code = text
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('//'))
    .map((line) => line.replace(/\s\/\/\s.*$/, ''))
    .join('\n');
  return [...code.matchAll(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g)].map((m) => m[0].slice(1, -1).replace(/\$\{[^}]*\}/g, ' '));
}

/** The run directory's names a literal spells out: file names as words, node files by suffix, paths into the telemetry folder. */
function runDirNamesIn(literal: string): string[] {
  const { telemetryDir, ...files } = RUN_DIR_FILES;
  const names = [...Object.values(files), ...Object.values(TELEMETRY_DIR_FILES)];
  const words = literal.split(/[^A-Za-z0-9._-]+/);
  const found = words.filter((w) => names.includes(w as (typeof names)[number]));
  for (const suffix of Object.values(NODE_FILE_SUFFIXES)) if (words.some((w) => w.endsWith(suffix))) found.push(suffix);
  if (literal.includes(`${telemetryDir}/`) || literal.includes(`RUN_DIR/${telemetryDir}`)) found.push(`${telemetryDir}/`);
  return found;
}

describe('the run directory has one owner', () => {
  test('no source but packages/spec/src/run-dir.ts spells out a name of the run directory', () => {
    const offenders: string[] = [];
    for (const file of sources()) {
      if (file === OWNER) continue;
      const relative = path.relative(ROOT, file);
      for (const literal of literals(fs.readFileSync(file, 'utf8'))) {
        for (const name of runDirNamesIn(literal)) {
          if (!EXCEPTIONS[relative]?.includes(name)) offenders.push(`${relative}: ${name} in ${JSON.stringify(literal.slice(0, 120))}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  test('the check sees a name in a quoted string, in a template and as a node file suffix', () => {
    expect(literals("read('stdout.log'); `${dir}/${node}.spool`; `${files.spool}`; \"$ERG_RUN_DIR/telemetry\" // 'job.sh'").flatMap(runDirNamesIn)).toEqual([
      'stdout.log', '.spool', 'telemetry/',
    ]);
  });

  test('the owner imports only marks and node-info, which import nothing, so the agent can bundle it alone', () => {
    const imports = [...fs.readFileSync(OWNER, 'utf8').matchAll(/^\s*import\s[^;]*?from\s+'([^']+)'|\brequire\('([^']+)'\)/gm)].map((m) => m[1] ?? m[2]);
    expect(imports).toEqual(['./marks', './node-info']);
    for (const leaf of ['node-info.ts', 'marks.ts']) {
      const text = fs.readFileSync(path.join(path.dirname(OWNER), leaf), 'utf8');
      expect(text).not.toMatch(/^\s*import\s|\brequire\(/m);
    }
  });
});
