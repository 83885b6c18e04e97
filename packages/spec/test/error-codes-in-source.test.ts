import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { appAndPackageSources, sourceFiles } from '@erg/testkit';
import { ERROR_CATALOG } from '../src';

const ROOT = join(__dirname, '../../..');
const SCAN = { match: /\.(ts|tsx|mts|js)$/ };

/** Every apps/<app>/src and packages/<package>/src file. */
const allSources = () => appAndPackageSources(ROOT, SCAN);

/**
 * The `ERG_*` names a text spells out in quotes ('ERG_X', "ERG_X", `ERG_X`), and the fixed heads
 * of codes it makes in a template (`ERG_HTTP_${status}` → ERG_HTTP; not `env[\`ERG_AGENT_${…}\`]`).
 */
function quotedNames(text: string): string[] {
  return [
    ...[...text.matchAll(/(['"`])(ERG_[A-Z0-9_]*[A-Z0-9])\1/g)].map((m) => m[2]!),
    ...[...text.matchAll(/(?<!env\[)`(ERG_[A-Z0-9_]*[A-Z0-9])_\$\{/g)].map((m) => m[1]!),
  ];
}

/** Each name, with the files that spell it out. */
function namesInFiles(files: readonly string[]): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of files) {
    for (const name of quotedNames(readFileSync(file, 'utf8'))) found.set(name, [...(found.get(name) ?? []), relative(ROOT, file)]);
  }
  return found;
}

/**
 * The `ERG_*` names that are environment variables, not error codes: those read from an
 * environment (`env.ERG_X`, `env['ERG_X']`), keys of a configuration schema (an app's config.ts,
 * @erg/config), and those in the first cell of a table row of docs/ (the configuration tables).
 */
function environmentVariables(sources: readonly string[]): Set<string> {
  const names = new Set<string>();
  const scripts = [join(ROOT, 'deploy'), join(ROOT, 'scripts')].filter(existsSync).flatMap((dir) => sourceFiles(dir, SCAN));
  for (const file of [...sources, ...scripts]) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/env(?:\.|\[['"`])(ERG_[A-Z0-9_]+)/g)) names.add(m[1]!);
    if (/\/(config\.ts|packages\/config\/src\/.*)$/.test(file)) for (const m of text.matchAll(/^\s*(ERG_[A-Z0-9_]+)\??:/gm)) names.add(m[1]!);
  }
  for (const doc of readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md'))) {
    for (const row of readFileSync(join(ROOT, 'docs', doc), 'utf8').matchAll(/^\| ([^|]*`ERG_[^|]*)\|/gm)) {
      for (const m of row[1]!.matchAll(/`(ERG_[A-Z0-9_]+)`/g)) names.add(m[1]!);
    }
  }
  return names;
}

describe('error codes in the sources', () => {
  const files = allSources();
  const names = namesInFiles(files);

  it('finds the sources and their codes', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(names.get('ERG_SSH_TIMEOUT')).toBeDefined();
    expect(names.get('ERG_HTTP')).toBeDefined();
  });

  it('are all in the catalog (packages/spec/src/errors.ts), but environment variables', () => {
    const environment = environmentVariables(files);
    const missing = [...names]
      .filter(([name]) => !Object.hasOwn(ERROR_CATALOG, name) && !environment.has(name))
      .map(([name, where]) => `${name} (${[...new Set(where)].join(', ')})`);
    expect(missing).toEqual([]);
  });

  it('tell environment variables from codes', () => {
    const environment = environmentVariables(files);
    for (const name of ['ERG_API_URL', 'ERG_TOKEN', 'ERG_TOKEN_FILE', 'ERG_SECRET_KEY_PREVIOUS', 'ERG_OFFLOAD_QUEUE', 'ERG_METRIC_REGEX_BUDGET_MS']) {
      expect(environment.has(name)).toBe(true);
    }
    expect(Object.keys(ERROR_CATALOG).filter((code) => environment.has(code))).toEqual([]);
  });

  it('reads codes in every kind of quote and in templates, not inside longer text', () => {
    const text = "code: 'ERG_A'; \"ERG_B_2\"; `ERG_C`; `ERG_D_${status}`; env[`ERG_E_${name}`]; 'send Bearer <ERG_METRICS_TOKEN>'; 'ERG_SSH_'";
    expect(quotedNames(text).sort()).toEqual(['ERG_A', 'ERG_B_2', 'ERG_C', 'ERG_D']);
  });
});
