import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, realpathSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { repoRoot } from '@erg/testkit';
import { CLI_MAIN, spawnCli, tempDir } from './helpers';

// The CLI as one installs it: build-bundle.js makes ONE executable file (dist/erg, with the
// package's build) that runs with Node 20+ and nothing beside it; scripts/install-cli.sh links it
// onto the PATH (the quickstart runs it). The bundle is built afresh here, into a folder of its own
// outside the repository with no node_modules above it, as on a laptop or a login node.

const ROOT = repoRoot();
const CLI_DIR = path.join(ROOT, 'apps', 'cli');
const { version: VERSION } = JSON.parse(readFileSync(path.join(CLI_DIR, 'package.json'), 'utf8')) as { version: string };
/** Where the package's build writes the bundle (npm run build -w @erg/cli; turbo). */
const BUILT_BUNDLE = path.join(CLI_DIR, 'dist', 'erg');
/** PATH with node on it and nothing of the repository: what the bundle's `#!/usr/bin/env node` needs. */
const NODE_PATH = `${path.dirname(process.execPath)}:/usr/bin:/bin`;

let home: string;
let bundle: string;
beforeAll(() => {
  home = realpathSync(tempDir('erg-cli-bundle-'));
  bundle = path.join(home, 'erg');
  execFileSync(process.execPath, [path.join(CLI_DIR, 'build-bundle.js'), bundle], { stdio: 'pipe' });
  copyFileSync(path.join(ROOT, 'examples', 'quickstart.yaml'), path.join(home, 'quickstart.yaml'));
  writeFileSync(path.join(home, 'bad.yaml'), readFileSync(path.join(home, 'quickstart.yaml'), 'utf8').replace('repetitions: 5', 'repetitions: 0'));
}, 60_000);

/** Runs `script` (the bundle unless told) with node, in the bundle's folder, with a HOME and a config file of its own. */
const run = (args: string[], script = bundle) => spawnCli(args, { cwd: home, env: { HOME: home, ERG_CONFIG: path.join(home, 'config.json') }, script });

describe('the bundle, dist/erg', () => {
  test('is one executable file: the shebang, then a banner with the version of package.json', () => {
    expect(statSync(bundle).mode & 0o111).toBe(0o111);
    expect(readFileSync(bundle, 'utf8').split('\n').slice(0, 2)).toEqual(['#!/usr/bin/env node', `// erg ${VERSION} — erg's command-line tool, bundled (erg --help)`]);
  });

  test('is self-contained: it requires Node built-ins only', () => {
    const required = new Set([...readFileSync(bundle, 'utf8').matchAll(/\brequire\("([^"]+)"\)/g)].map((m) => m[1] ?? ''));
    expect(required.size).toBeGreaterThan(0);
    expect([...required].filter((name) => !builtinModules.includes(name.replace(/^node:/, '')))).toEqual([]);
  });

  test('--version prints the version of package.json (inlined: there is no package.json beside it)', async () => {
    expect(existsSync(path.join(home, 'package.json'))).toBe(false);
    expect(await run(['--version'])).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
  });

  test('--help prints the usage and exits 0, the same as dist/main.js and the built dist/erg', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: erg \[options\] \[command\]\n/);
    expect(help.stdout).toContain('erg submit examples/quickstart.yaml --watch');
    expect(help.stderr).toBe('');
    expect(await run(['--help'], CLI_MAIN)).toEqual(help);
    expect(await run(['--help'], BUILT_BUNDLE)).toEqual(help);
  });

  test('runs as a command of its own through its shebang', () => {
    const r = spawnSync(bundle, ['--version'], { cwd: home, env: { PATH: NODE_PATH, HOME: home }, encoding: 'utf8' });
    expect(r.error).toBeUndefined();
    expect([r.status, r.stdout, r.stderr]).toEqual([0, `${VERSION}\n`, '']);
  });

  test('erg validate works offline: a valid spec exits 0 and says what it runs', async () => {
    expect(await run(['validate', 'quickstart.yaml'])).toEqual({
      code: 0, stdout: 'quickstart.yaml: valid. 4 configurations × 5 repetitions = 20 runs on cluster local\n', stderr: '',
    });
  });

  test('erg validate: an invalid spec exits 1 naming the field, word for word as dist/main.js', async () => {
    const bad = await run(['validate', 'bad.yaml']);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toBe('erg: bad.yaml is not a valid campaign spec (1 problem):\n  repetitions: must be at least 1, got 0\nhint: see docs/campaign-spec.md for every field and rule\n');
    expect(await run(['validate', 'bad.yaml'], CLI_MAIN)).toEqual(bad);
  });
});

describe('scripts/install-cli.sh PREFIX', () => {
  /** A checkout as the script sees it: scripts/install-cli.sh and, when `built`, apps/cli/dist/erg (this bundle). */
  function checkout(built = true): { repo: string; target: string; script: string } {
    const repo = realpathSync(tempDir('erg-cli-checkout-'));
    mkdirSync(path.join(repo, 'scripts'));
    const script = path.join(repo, 'scripts', 'install-cli.sh');
    copyFileSync(path.join(ROOT, 'scripts', 'install-cli.sh'), script);
    const target = path.join(repo, 'apps', 'cli', 'dist', 'erg');
    if (built) {
      mkdirSync(path.dirname(target), { recursive: true });
      copyFileSync(bundle, target);
      chmodSync(target, 0o755);
    }
    return { repo, target, script };
  }
  const install = (script: string, prefix: string, pathVar = NODE_PATH) =>
    spawnSync('bash', [script, prefix], { env: { PATH: pathVar, HOME: home }, encoding: 'utf8' });

  test('links PREFIX/bin/erg to the built bundle, says where, and `erg` then runs from the PATH', () => {
    const { target, script } = checkout();
    const prefix = tempDir('erg-cli-prefix-');
    const link = path.join(prefix, 'bin', 'erg');
    const r = install(script, prefix);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`erg is ${link} -> ${target}\nnote: ${prefix}/bin is not on your PATH: add it (export PATH="${prefix}/bin:$PATH") or run ${link}\n`);
    expect(r.stderr).toBe('');
    expect(readlinkSync(link)).toBe(target);
    const erg = spawnSync('erg', ['--version'], { cwd: prefix, env: { PATH: `${prefix}/bin:${NODE_PATH}`, HOME: home }, encoding: 'utf8' });
    expect([erg.status, erg.stdout]).toEqual([0, `${VERSION}\n`]);
  });

  test('is safe to run again: the link stays, it says so, and no note when PREFIX/bin is on the PATH', () => {
    const { target, script } = checkout();
    const prefix = tempDir('erg-cli-prefix-');
    const link = path.join(prefix, 'bin', 'erg');
    expect(install(script, prefix).status).toBe(0);
    const again = install(script, prefix, `${prefix}/bin:${NODE_PATH}`);
    expect([again.status, again.stdout, again.stderr]).toEqual([0, `erg is ${link} -> ${target} (already)\n`, '']);
    expect(readlinkSync(link)).toBe(target);
  });

  test('a link to another checkout is pointed at this one', () => {
    const { target, script } = checkout();
    const prefix = tempDir('erg-cli-prefix-');
    const link = path.join(prefix, 'bin', 'erg');
    mkdirSync(path.dirname(link));
    symlinkSync(path.join(home, 'elsewhere', 'erg'), link);
    const r = install(script, prefix);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`erg is ${link} -> ${target}\n`);
    expect(readlinkSync(link)).toBe(target);
  });

  test('a file of its own at PREFIX/bin/erg is left as it is: exit 1, saying why', () => {
    const { script } = checkout();
    const prefix = tempDir('erg-cli-prefix-');
    const link = path.join(prefix, 'bin', 'erg');
    mkdirSync(path.dirname(link));
    writeFileSync(link, 'another erg\n');
    const r = install(script, prefix);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`install-cli: ${link} exists and is not a link; left as it is (remove it, or give another PREFIX)\n`);
    expect(lstatSync(link).isSymbolicLink()).toBe(false);
    expect(readFileSync(link, 'utf8')).toBe('another erg\n');
  });

  test('before the build: exit 1, saying how to build, and nothing made under PREFIX', () => {
    const { target, script } = checkout(false);
    const prefix = tempDir('erg-cli-prefix-');
    const r = install(script, prefix);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(`install-cli: ${target} is not built; run npm run build -w @erg/cli (or npx turbo run build) first\n`);
    expect(existsSync(path.join(prefix, 'bin'))).toBe(false);
  });
});
