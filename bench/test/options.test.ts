// Every bench/*.js — found by listing the folder, so a new script is covered without a change
// here — declares its options with bench/lib/options.js and answers, before it loads anything that
// could connect somewhere: --help with a usage text that names every declared option and argument
// with its default and gives an example (exit 0); an unknown option with one line on stderr naming
// it (exit 2); a value that is not what an option takes with one line naming the option (exit 2).
// Each script runs under a preload that ends it (exit 99) on a socket connect or a child process,
// and says so if any module outside bench/ was loaded by the time it exits.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const benchDir = path.resolve(__dirname, '..');
const scripts = fs.readdirSync(benchDir).filter((f) => f.endsWith('.js')).sort();

interface Spec {
  type: 'boolean' | 'string' | 'number' | 'integer' | 'json';
  required?: boolean;
}
interface Declaration {
  script: string;
  options: Record<string, Spec>;
  positionals: (Spec & { name: string })[];
}
interface Answer {
  code: number | null;
  stdout: string;
  stderr: string;
}

const GUARD = String.raw`
'use strict';
const net = require('node:net');
const cp = require('node:child_process');
const path = require('node:path');
const stop = (what) => {
  process.stderr.write('GUARD: ' + what + ' before the options were parsed\n');
  process.exit(99);
};
net.Socket.prototype.connect = function connect() { stop('a socket connect'); };
for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) cp[name] = () => stop('child_process.' + name);
process.on('exit', () => {
  const bench = process.env.GUARD_BENCH_DIR + path.sep;
  const outside = Object.keys(require.cache).filter((f) => f !== __filename && !(f.startsWith(bench) && !f.includes(path.sep + 'node_modules' + path.sep)));
  if (outside.length) process.stderr.write('GUARD: loaded ' + outside.join(', ') + '\n');
});
`;
let guard: string;
let guardDir: string;

beforeAll(() => {
  guardDir = fs.mkdtempSync(path.join(os.tmpdir(), 'erg-bench-options-'));
  guard = path.join(guardDir, 'guard.js');
  fs.writeFileSync(guard, GUARD);
});
afterAll(() => fs.rmSync(guardDir, { recursive: true, force: true }));

function run(script: string, args: string[], env: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--require', guard, path.join(benchDir, script), ...args],
      { cwd: path.dirname(benchDir), timeout: 30_000, env: { ...process.env, ERG_BENCH_OPTIONS: '', GUARD_BENCH_DIR: benchDir, ...env } },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
    );
  });
}

const declarations = new Map<string, Promise<Declaration>>();
/** What the script declares (ERG_BENCH_OPTIONS=json), or a failure that says it uses no shared parser. */
function declaration(script: string): Promise<Declaration> {
  if (!declarations.has(script)) {
    declarations.set(script, run(script, ['--help'], { ERG_BENCH_OPTIONS: 'json' }).then((a) => {
      try {
        return JSON.parse(a.stdout) as Declaration;
      } catch {
        throw new Error(`bench/${script} does not declare its options with bench/lib/options.js (exit ${a.code}):\n${a.stderr.slice(0, 2000)}`);
      }
    }));
  }
  return declarations.get(script)!;
}

/** The answer to a mistake: nothing on stdout, one line on stderr, no stack trace, exit 2. */
function expectOneLine(answer: Answer, script: string): string {
  expect({ code: answer.code, stdout: answer.stdout }).toEqual({ code: 2, stdout: '' });
  expect(answer.stderr).not.toMatch(/^\s+at /m);
  expect(answer.stderr).toMatch(/^[^\n]+\n$/);
  expect(answer.stderr.startsWith(`bench/${script}: `)).toBe(true);
  return answer.stderr.trim();
}

test('the folder holds the benchmarks', () => {
  expect(scripts.length).toBeGreaterThanOrEqual(20);
});

describe.each(scripts)('bench/%s', (script) => {
  test.concurrent('--help: the usage text names every option and argument with its default, and an example; exit 0', async () => {
    const decl = await declaration(script);
    const answer = await run(script, ['--help']);
    expect({ code: answer.code, stderr: answer.stderr }).toEqual({ code: 0, stderr: '' });
    const usage = answer.stdout;
    expect(usage).toContain(`Usage: node bench/${script}`);
    expect(usage).toMatch(new RegExp(`Examples?:\\n  node bench/${script.replace('.', '\\.')}`));
    // What it measures: a summary before the usage line.
    expect(usage.slice(0, usage.indexOf('Usage:')).length).toBeGreaterThan(80);
    // A row per option: "  --name VALUE   description (default: …)", the help's own row aside.
    const rows = usage.split(/\n(?=  \S)/);
    for (const [name, spec] of Object.entries(decl.options)) {
      const row = rows.find((r) => new RegExp(`^  (-\\w, )?--${name}(\\s|$)`).test(r));
      expect({ option: name, row }).toEqual({ option: name, row: expect.stringMatching(name === 'help' ? /print this text/ : /\(default:\s/) });
      if (spec.type !== 'boolean') expect(row).toMatch(new RegExp(`--${name} \\S`));
    }
    for (const p of decl.positionals) {
      expect(usage).toContain(p.required ? `<${p.name}>` : `[${p.name}]`);
      expect(rows.find((r) => r.startsWith(`  ${p.name} `))).toMatch(/\((default: .*|required)\)/s);
    }
    expect(await run(script, ['-h'])).toEqual(answer);
  });

  test.concurrent('an unknown option: one line naming it, exit 2', async () => {
    await declaration(script);
    const line = expectOneLine(await run(script, ['--bogus-option']), script);
    expect(line).toBe(`bench/${script}: unknown option --bogus-option (see --help)`);
  });

  test.concurrent('a wrong value or argument: one line naming it, exit 2', async () => {
    const decl = await declaration(script);
    const numeric = (s: Spec) => s.type === 'number' || s.type === 'integer';
    const option = Object.entries(decl.options).find(([, s]) => numeric(s))?.[0];
    const first = decl.positionals[0];
    if (option) {
      expect(expectOneLine(await run(script, [`--${option}`, 'abc']), script)).toContain(`--${option} takes a`);
      expect(expectOneLine(await run(script, [`--${option}`]), script)).toContain(`--${option} needs a value`);
    } else if (first && numeric(first)) {
      expect(expectOneLine(await run(script, ['abc']), script)).toContain(`${first.name} takes a`);
    } else if (first?.required) {
      expect(expectOneLine(await run(script, []), script)).toContain(`missing argument <${first.name}>`);
    } else {
      expect(expectOneLine(await run(script, ['stray']), script)).toContain('unexpected argument stray');
    }
  });
});
