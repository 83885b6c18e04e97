// The phase-mark writers a workload calls, run for real: apps/agent/marks/erg-mark under bash and
// apps/agent/marks/erg.py under python3, each appending to $ERG_MARKS_DIR/<hostname>.marks lines
// that @erg/spec/marks parses.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_MAX_PHASE_NAMES, MARKS_DIR_ENV, MAX_PHASE_NAMES_ENV, marksFileName, parseMarkLine, type MarkLine } from '@erg/spec/marks';
import { MARK_TOOL_FILES } from '../src/index';
import { AGENT_DIR, cleanupTempDirs, tempDir } from './helpers';

const MARKS = path.join(AGENT_DIR, 'marks');
const ERG_MARK = path.join(MARKS, 'erg-mark');

afterAll(cleanupTempDirs);

/** The environment of a workload: this one's, ERG_MARKS_DIR as given (undefined: unset). */
function workloadEnv(marksDir: string | undefined, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PYTHONPATH: MARKS, PYTHONDONTWRITEBYTECODE: '1', ...extra };
  delete env[MARKS_DIR_ENV];
  if (marksDir !== undefined) env[MARKS_DIR_ENV] = marksDir;
  return env;
}

function ergMark(marksDir: string | undefined, ...args: string[]) {
  return spawnSync(ERG_MARK, args, { env: workloadEnv(marksDir), encoding: 'utf8', timeout: 10_000 });
}

function python(marksDir: string | undefined, code: string) {
  return spawnSync('python3', ['-c', code], { env: workloadEnv(marksDir), encoding: 'utf8', timeout: 20_000 });
}

/** The node's marks file in `dir`, named as the agent (Node's os.hostname()) looks for it. */
function marksFile(dir: string): string {
  return path.join(dir, marksFileName(os.hostname()));
}

/** Every line of the marks file, parsed; a line that does not parse fails the test. */
function readMarks(dir: string): MarkLine[] {
  const text = fs.readFileSync(marksFile(dir), 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text.slice(0, -1).split('\n').map((line) => {
    const mark = parseMarkLine(line);
    if (!mark) throw new Error(`a line that does not parse: ${JSON.stringify(line)}`);
    return mark;
  });
}

const kindsAndNames = (marks: MarkLine[]) => marks.map((m) => `${m.kind} ${m.name}`);

/** Wall clocks within a second of [before, after]. */
function expectWallNow(marks: MarkLine[], before: number, after: number): void {
  for (const m of marks) {
    const ms = Number(m.wallNs / 1_000_000n);
    expect(ms).toBeGreaterThanOrEqual(before - 1000);
    expect(ms).toBeLessThanOrEqual(after + 1000);
  }
}

describe('MARK_TOOL_FILES', () => {
  test('stages erg-mark as bin/erg-mark (0755) and erg.py as python/erg.py (0644), both files in this package', () => {
    expect(MARK_TOOL_FILES).toEqual([
      { relPath: 'bin/erg-mark', source: ERG_MARK, mode: 0o755 },
      { relPath: 'python/erg.py', source: path.join(MARKS, 'erg.py'), mode: 0o644 },
    ]);
    for (const file of MARK_TOOL_FILES) expect(fs.statSync(file.source).isFile()).toBe(true);
    expect(fs.statSync(ERG_MARK).mode & 0o111).toBe(0o111);
  });
});

describe('erg-mark (bash)', () => {
  test('appends begin, step and end lines to <os.hostname()>.marks: wall clock now, mono `-`, writer sh', () => {
    const dir = tempDir();
    const before = Date.now();
    for (const args of [['begin', 'train'], ['step'], ['step', 'batch'], ['begin', 'fwd/layer.0:attn-x_1'], ['end', 'fwd/layer.0:attn-x_1'], ['end', 'train']]) {
      const r = ergMark(dir, ...args);
      expect({ status: r.status, stderr: r.stderr, stdout: r.stdout }).toEqual({ status: 0, stderr: '', stdout: '' });
    }
    const after = Date.now();
    expect(fs.readdirSync(dir)).toEqual([marksFileName(os.hostname())]);
    const marks = readMarks(dir);
    expect(kindsAndNames(marks)).toEqual(['begin train', 'step step', 'step batch', 'begin fwd/layer.0:attn-x_1', 'end fwd/layer.0:attn-x_1', 'end train']);
    expectWallNow(marks, before, after);
    for (const m of marks) expect(m).toMatchObject({ monoNs: null, writer: 'sh' });
    for (let i = 1; i < marks.length; i += 1) expect(marks[i]!.wallNs).toBeGreaterThanOrEqual(marks[i - 1]!.wallNs);
  });

  test('bad use exits 2 with a usage line on stderr and writes nothing, under erg or not', () => {
    const dir = tempDir();
    const long = 'a'.repeat(65);
    for (const args of [[], ['begin'], ['end'], ['stop', 'x'], ['begin', 'two words'], ['begin', ''], ['end', long], ['step', 'a\tb'],
      ['begin', 'é'], ['step', 'x', 'y'], ['begin', 'a\nb']]) {
      for (const marksDir of [dir, undefined]) {
        const r = ergMark(marksDir, ...args);
        expect({ args, status: r.status }).toEqual({ args, status: 2 });
        expect(r.stderr).toMatch(/^erg-mark: .+\nusage: erg-mark begin NAME \| erg-mark end NAME \| erg-mark step \[NAME\]/);
      }
    }
    expect(ergMark(dir, 'begin', 'a'.repeat(64)).status).toBe(0);
    expect(readMarks(dir).map((m) => m.name)).toEqual(['a'.repeat(64)]);
  });

  test('--help prints the usage on stdout and exits 0', () => {
    const r = ergMark(undefined, '--help');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^usage: erg-mark begin NAME/);
  });

  test('without ERG_MARKS_DIR (unset or empty) it does nothing and succeeds', () => {
    const cwd = tempDir();
    for (const marksDir of [undefined, '']) {
      const r = spawnSync(ERG_MARK, ['begin', 'x'], { cwd, env: workloadEnv(marksDir), encoding: 'utf8' });
      expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    }
    expect(fs.readdirSync(cwd)).toEqual([]);
  });

  test('a mark it cannot write warns on stderr and still exits 0', () => {
    const r = ergMark(path.join(tempDir(), 'no', 'such', 'folder'), 'begin', 'x');
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/^erg-mark: warning: could not write the begin mark of "x" to .*\/no\/such\/folder\/.+\.marks/);
  });

  test('without $EPOCHREALTIME (bash < 5) it takes the clock from date; a comma from the locale is no decimal point', () => {
    const dir = tempDir();
    // Sourced into a shell where EPOCHREALTIME is unset (it then is an ordinary variable).
    const run = (prelude: string, ...args: string[]) =>
      spawnSync('bash', ['-c', `unset EPOCHREALTIME; ${prelude} . "$0" "$@"`, ERG_MARK, ...args], { env: workloadEnv(dir), encoding: 'utf8' });
    const before = Date.now();
    expect(run('', 'begin', 'from_date').status).toBe(0);
    const after = Date.now();
    expect(run('EPOCHREALTIME=1700000000,123456;', 'end', 'comma').status).toBe(0);
    const [fromDate, comma] = readMarks(dir);
    expect(fromDate).toMatchObject({ kind: 'begin', name: 'from_date', monoNs: null, writer: 'sh' });
    expectWallNow([fromDate!], before, after);
    expect(comma).toMatchObject({ kind: 'end', name: 'comma', wallNs: 1700000000123456000n });
  });
});

describe('erg (python3)', () => {
  test('phase as a context manager and a decorator, begin/end/step: nested lines, both clocks, writer py', () => {
    const dir = tempDir();
    const before = Date.now();
    const r = python(dir, `
import erg
assert erg.enabled()

@erg.phase("optimizer")
def optimize(x):
    erg.step("inner")
    return x * 2

with erg.phase("epoch"):
    with erg.phase("forward"):
        pass
    assert optimize(21) == 42
    erg.step()
erg.begin("eval")
erg.end("eval")
print(repr(erg.phase("epoch")), erg.phase("epoch") is erg.phase("epoch"))
`);
    const after = Date.now();
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    expect(r.stdout).toBe("erg.phase('epoch') True\n");
    const marks = readMarks(dir);
    expect(kindsAndNames(marks)).toEqual([
      'begin epoch', 'begin forward', 'end forward', 'begin optimizer', 'step inner', 'end optimizer', 'step step', 'end epoch', 'begin eval', 'end eval',
    ]);
    expectWallNow(marks, before, after);
    for (const m of marks) {
      expect(m.writer).toBe('py');
      expect(typeof m.monoNs).toBe('bigint');
    }
    for (let i = 1; i < marks.length; i += 1) expect(marks[i]!.monoNs!).toBeGreaterThanOrEqual(marks[i - 1]!.monoNs!);
  });

  test('an exception inside a phase (with or decorated) still writes its end mark and propagates', () => {
    const dir = tempDir();
    const r = python(dir, `
import erg

@erg.phase("decorated")
def boom():
    raise KeyError("k")

try:
    with erg.phase("outer"):
        with erg.phase("inner"):
            raise RuntimeError("boom")
except RuntimeError as e:
    print("caught", e)
try:
    boom()
except KeyError:
    print("caught k")
`);
    expect({ status: r.status, stderr: r.stderr, stdout: r.stdout }).toEqual({ status: 0, stderr: '', stdout: 'caught boom\ncaught k\n' });
    expect(kindsAndNames(readMarks(dir))).toEqual(['begin outer', 'begin inner', 'end inner', 'end outer', 'begin decorated', 'end decorated']);
  });

  test('decorated generators and coroutines are bracketed around their run, not their creation', () => {
    const dir = tempDir();
    const r = python(dir, `
import asyncio, erg

@erg.phase("gen")
def gen():
    erg.step("g")
    yield 1
    return 2

@erg.phase("coro")
async def coro():
    erg.step("c")
    return 3

g = gen()
erg.step("created")
assert list(g) == [1]
assert asyncio.new_event_loop().run_until_complete(coro()) == 3
`);
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    expect(kindsAndNames(readMarks(dir))).toEqual(['step created', 'begin gen', 'step g', 'end gen', 'begin coro', 'step c', 'end coro']);
  });

  test('a bad name raises ValueError at the call, under erg or not, and writes nothing', () => {
    const dir = tempDir();
    const code = `
import erg
bad = ["", "two words", "a" * 65, "tab\\there", "é", "line\\n", 7, None, b"bytes", ["x"]]
for call in (erg.begin, erg.end, erg.step, erg.phase):
    for name in bad:
        try:
            call(name)
        except ValueError as e:
            assert "bad mark name" in str(e), e
        else:
            raise SystemExit("no ValueError for %r" % (name,))
erg.step("a" * 64)
print("ok")
`;
    for (const marksDir of [dir, undefined]) {
      const r = python(marksDir, code);
      expect({ status: r.status, stderr: r.stderr, stdout: r.stdout }).toEqual({ status: 0, stderr: '', stdout: 'ok\n' });
    }
    expect(kindsAndNames(readMarks(dir))).toEqual([`step ${'a'.repeat(64)}`]);
  });

  test('without ERG_MARKS_DIR (unset or empty) every call does nothing and enabled() is False', () => {
    const cwd = tempDir();
    for (const marksDir of [undefined, '']) {
      const r = spawnSync('python3', ['-c', `
import erg
with erg.phase("x"):
    erg.step()
erg.begin("y"); erg.end("y")
print(erg.enabled())
`], { cwd, env: workloadEnv(marksDir), encoding: 'utf8' });
      expect({ status: r.status, stderr: r.stderr, stdout: r.stdout }).toEqual({ status: 0, stderr: '', stdout: 'False\n' });
    }
    expect(fs.readdirSync(cwd)).toEqual([]);
  });

  test('a marks file it cannot open warns once (RuntimeWarning) and never raises', () => {
    const missing = path.join(tempDir(), 'no', 'such', 'folder');
    const r = python(missing, `
import warnings, erg
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for i in range(3):
        with erg.phase("x"):
            erg.step()
print(len(caught), caught[0].category.__name__)
print(caught[0].message)
`);
    expect(r.status).toBe(0);
    const [count, message] = r.stdout.split('\n');
    expect(count).toBe('1 RuntimeWarning');
    expect(message).toMatch(/^erg: cannot open .*\/no\/such\/folder\/.+\.marks for phase marks .*the workload goes on/);
  });

  test('past ERG_MAX_PHASE_NAMES distinct names (job.sh exports it) marks of new names are not written, with one RuntimeWarning', () => {
    const dir = tempDir();
    const code = `
import warnings, erg
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for i in range(6):
        with erg.phase("p%d" % i):
            erg.step("p0")
    erg.begin("p1"); erg.end("p1")
print(len(caught), caught[0].category.__name__)
print(caught[0].message)
print(erg.DEFAULT_MAX_PHASE_NAMES)
`;
    const r = spawnSync('python3', ['-c', code], { env: workloadEnv(dir, { [MAX_PHASE_NAMES_ENV]: '3' }), encoding: 'utf8', timeout: 20_000 });
    expect(r.status).toBe(0);
    const [count, message, fallback] = r.stdout.split('\n');
    expect(count).toBe('1 RuntimeWarning');
    expect(message).toMatch(/^erg: more than 3 distinct phase names \(ERG_MAX_PHASE_NAMES\): marks of 'p3' and of any other new name are not written/);
    // The module's default is erg's (what the API and the scheduler keep where the site set nothing).
    expect(Number(fallback)).toBe(DEFAULT_MAX_PHASE_NAMES);
    // p0, p1, p2 and the step counter p0 (one of the three names): every mark of them, none of p3-p5.
    expect(kindsAndNames(readMarks(dir))).toEqual([
      ...['p0', 'p1', 'p2'].flatMap((name) => [`begin ${name}`, 'step p0', `end ${name}`]),
      'step p0', 'step p0', 'step p0', 'begin p1', 'end p1',
    ]);
  });

  test('a forked child (a DataLoader worker) writes its own whole lines; the parent goes on writing', () => {
    const dir = tempDir();
    const r = python(dir, `
import os, erg
with erg.phase("parent"):
    pids = []
    for k in range(3):
        pid = os.fork()
        if pid == 0:
            for i in range(200):
                with erg.phase("child%d" % k):
                    erg.step("child_step")
            os._exit(0)
        pids.append(pid)
    for i in range(200):
        erg.step("parent_step")
    for pid in pids:
        assert os.waitpid(pid, 0)[1] == 0
`);
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    const marks = readMarks(dir);
    const count = (kind: string, name: string) => marks.filter((m) => m.kind === kind && m.name === name).length;
    expect(marks).toHaveLength(2 + 200 + 3 * 600);
    expect([marks[0], marks.at(-1)].map((m) => `${m!.kind} ${m!.name}`)).toEqual(['begin parent', 'end parent']);
    expect(count('step', 'parent_step')).toBe(200);
    expect(count('step', 'child_step')).toBe(600);
    for (const k of [0, 1, 2]) {
      expect(count('begin', `child${k}`)).toBe(200);
      expect(count('end', `child${k}`)).toBe(200);
      // Each child's own lines are in its order: begin, step, end, begin, ...
      const own = marks.filter((m) => m.name === `child${k}`);
      own.forEach((m, i) => expect(m.kind).toBe(i % 2 === 0 ? 'begin' : 'end'));
    }
  });

  test('as on Python 3.6 (no time_ns, no register_at_fork): float clocks, and a fork noticed by its pid', () => {
    const dir = tempDir();
    const before = Date.now();
    const r = python(dir, `
import os, time
del time.time_ns, time.monotonic_ns, os.register_at_fork
import erg
assert erg._CHECK_PID
erg.begin("parent")
pid = os.fork()
if pid == 0:
    erg.step("child")
    os._exit(0 if erg._pid == os.getpid() else 1)
assert os.waitpid(pid, 0)[1] == 0
erg.end("parent")
`);
    const after = Date.now();
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    const marks = readMarks(dir);
    expect(kindsAndNames(marks)).toEqual(['begin parent', 'step child', 'end parent']);
    expectWallNow(marks, before, after);
    for (const m of marks) expect(typeof m.monoNs).toBe('bigint');
  });
});

describe('several writers at once', () => {
  test('python and shell processes appending to one file produce only whole lines', async () => {
    const dir = tempDir();
    const PY = 4;
    const PY_MARKS = 3000;
    const SH = 3;
    const SH_MARKS = 100;
    const run = (cmd: string, args: string[]) =>
      new Promise<void>((resolve, reject) => {
        const child = spawn(cmd, args, { env: workloadEnv(dir), stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('error', reject);
        child.on('exit', (code) => (code === 0 && stderr === '' ? resolve() : reject(new Error(`${cmd} exited ${code}: ${stderr}`))));
      });
    await Promise.all([
      ...Array.from({ length: PY }, (_, k) => run('python3', ['-c', `
import erg
name = "py_a_long_name_to_make_lines_longer_${k}_" + "x" * 20
for i in range(${PY_MARKS / 2}):
    with erg.phase(name):
        pass
`])),
      ...Array.from({ length: SH }, (_, k) => run('bash', ['-c', `for ((i = 0; i < ${SH_MARKS}; i++)); do "$0" step sh_${k} || exit 1; done`, ERG_MARK])),
    ]);
    const marks = readMarks(dir);
    expect(marks).toHaveLength(PY * PY_MARKS + SH * SH_MARKS);
    for (let k = 0; k < PY; k += 1) expect(marks.filter((m) => m.name.startsWith(`py_a_long_name_to_make_lines_longer_${k}_`))).toHaveLength(PY_MARKS);
    for (let k = 0; k < SH; k += 1) expect(marks.filter((m) => m.name === `sh_${k}` && m.writer === 'sh')).toHaveLength(SH_MARKS);
  }, 60_000);
});
