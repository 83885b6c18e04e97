import * as fs from 'node:fs';
import * as path from 'node:path';

// The subpaths @erg/spec exports besides its index are for code that must not carry zod or yaml:
// the agent's bundle on the cluster (run-dir), the web app's bundle (errors, run-state), the
// scheduler's regex worker threads (user-regex, which needs its engine, re2js, and nothing else).
// A zod import creeping into one of them would silently ship zod to those places.
const root = path.resolve(__dirname, '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
const subpaths = Object.keys(pkg.exports).filter((k) => k !== '.' && k !== './package.json');
/** The one package a subpath is for, where it has one. */
const OWN_DEPENDENCY: Record<string, string[]> = { './user-regex': ['re2js'] };

/** Every module a source file reaches through relative imports, and the packages it imports. */
function reach(file: string, seen = new Set<string>(), packages = new Set<string>()): Set<string> {
  if (seen.has(file)) return packages;
  seen.add(file);
  const text = fs.readFileSync(file, 'utf8');
  for (const m of text.matchAll(/(?:import|export)\s[^'"]*?from\s+'([^']+)'|require\('([^']+)'\)/g)) {
    const spec = (m[1] ?? m[2])!;
    if (spec.startsWith('.')) reach(path.resolve(path.dirname(file), `${spec.replace(/\.js$/, '')}.ts`), seen, packages);
    else packages.add(spec);
  }
  return packages;
}

describe('@erg/spec subpath exports', () => {
  it('exports the dependency-free subpaths run-dir, errors and run-state', () => {
    expect(subpaths).toEqual(expect.arrayContaining(['./run-dir', './errors', './run-state']));
  });

  it.each(subpaths)('%s reaches only Node built-ins (and its own engine), never zod or yaml', (subpath) => {
    const file = path.join(root, 'src', `${subpath.slice(2)}.ts`);
    const packages = [...reach(file)].filter((p) => !p.startsWith('node:'));
    expect(packages).toEqual(OWN_DEPENDENCY[subpath] ?? []);
  });
});
