#!/usr/bin/env node
// Benchmark: what one phase mark costs the workload that writes it (apps/agent/marks).
//   Python: a python3 child runs loops of `with erg.phase("forward"): pass` (two marks each) and
//           `erg.step()` (one), timed with time.perf_counter_ns around each loop, minus the same
//           loop empty; the best and the median of several rounds. Also with marks off
//           (ERG_MARKS_DIR unset), what a script outside erg pays. Target: < 5 µs per mark.
//   Shell:  a bash loop calling `erg-mark step` (a process each), and the same loop calling
//           /bin/true: the floor of any command a job script runs.
// Then every line of <hostname>.marks is parsed with @erg/spec/marks and counted.
//
//   node bench/marks.js            # --help: the options
//
// Needs python3, bash, and @erg/spec built (npx turbo run build --filter=@erg/spec; built here if missing).
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync, spawnSync } = require('node:child_process');
const { parseOptions } = require('./lib/options');

const { opts } = parseOptions({
  script: __filename,
  summary: 'what one phase mark costs the workload that writes it (apps/agent/marks): python3 loops of erg.phase() and '
    + 'erg.step() against the same loop empty, with marks on and off, and a bash loop of `erg-mark step` against /bin/true; '
    + 'then every line written is parsed with @erg/spec/marks. Target: < 5 µs per mark. Needs python3, bash and @erg/spec '
    + 'built (built here if missing).',
  positionals: [{ name: 'iterations', type: 'integer', min: 100, default: 50_000, quick: 5000, description: 'loop iterations per round' }],
  options: {
    quick: { type: 'boolean', description: '5,000 iterations, 3 rounds (else 5), 50 shell calls (else 500) (a test runs it)' },
    json: { type: 'boolean', description: 'one line of JSON at the end (the text goes to stderr)' },
  },
  examples: ['node bench/marks.js', 'node bench/marks.js 200000'],
});
const iterations = opts.iterations;
const rounds = opts.quick ? 3 : 5;
const shellCalls = opts.quick ? 50 : 500;
const log = opts.json ? console.error : console.log;
const root = path.resolve(__dirname, '..');
const marksDir = path.join(root, 'apps', 'agent', 'marks');
const ergMark = path.join(marksDir, 'erg-mark');
const specMarks = path.join(root, 'packages', 'spec', 'dist', 'marks.js');
if (!fs.existsSync(specMarks)) execFileSync('npx', ['turbo', 'run', 'build', '--filter=@erg/spec'], { cwd: root, stdio: 'inherit' });
const { parseMarkLine, marksFileName, MARKS_DIR_ENV } = require(specMarks);

const WARMUP = 1000;
// Runs in python3: argv = iterations rounds; prints one JSON line.
const PYTHON = String.raw`
import json, sys, time
import erg
n, rounds = int(sys.argv[1]), int(sys.argv[2])
clock = time.perf_counter_ns

def empty():
    t = clock()
    for _ in range(n):
        pass
    return clock() - t

def phase():
    t = clock()
    for _ in range(n):
        with erg.phase("forward"):
            pass
    return clock() - t

def step():
    t = clock()
    for _ in range(n):
        erg.step()
    return clock() - t

for _ in range(${WARMUP}):  # opens the file, caches the name, warms the interpreter
    with erg.phase("forward"):
        erg.step()
runs = {"empty": [], "phase": [], "step": []}
for _ in range(rounds):
    for name, loop in (("empty", empty), ("phase", phase), ("step", step)):
        runs[name].append(loop())
print(json.dumps({"version": sys.version.split()[0], "enabled": erg.enabled(), "runs": runs}))
`;

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}
const us = (ns) => +(ns / 1000).toFixed(3);

/** µs per mark of the phase and step loops (each round minus that round's empty loop). */
function pythonFigures(env) {
  const r = spawnSync('python3', ['-c', PYTHON, String(iterations), String(rounds)], { env: { ...env, PYTHONPATH: marksDir, PYTHONDONTWRITEBYTECODE: '1' }, encoding: 'utf8', maxBuffer: 1 << 20 });
  if (r.status !== 0 || r.stderr) throw new Error(`python3 exited ${r.status}: ${r.stderr}`);
  const out = JSON.parse(r.stdout.trim());
  const perMark = (loop, marksPerIteration) => out.runs[loop].map((ns, i) => Math.max(0, ns - out.runs.empty[i]) / (iterations * marksPerIteration));
  const phase = perMark('phase', 2);
  const step = perMark('step', 1);
  return {
    version: out.version,
    enabled: out.enabled,
    phaseUsPerMark: us(median(phase)),
    phaseUsPerMarkBest: us(Math.min(...phase)),
    stepUsPerMark: us(median(step)),
    stepUsPerMarkBest: us(Math.min(...step)),
    emptyLoopNsPerIteration: +(median(out.runs.empty) / iterations).toFixed(1),
  };
}

/** µs per `erg-mark step` call from a bash loop, and per /bin/true call (the floor of any command). */
function shellFigures(env) {
  const script = `LC_ALL=C
s=$EPOCHREALTIME; for ((i = 0; i < $1; i++)); do "$0" step sh_step || exit 1; done; e=$EPOCHREALTIME
s2=$EPOCHREALTIME; for ((i = 0; i < $1; i++)); do /bin/true; done; e2=$EPOCHREALTIME
echo "$s $e $s2 $e2 $BASH_VERSION"`;
  const r = spawnSync('bash', ['-c', script, ergMark, String(shellCalls)], { env, encoding: 'utf8' });
  if (r.status !== 0 || r.stderr) throw new Error(`bash exited ${r.status}: ${r.stderr}`);
  const [s, e, s2, e2, version] = r.stdout.trim().split(' ');
  const perCall = (a, b) => +(((Number(b) - Number(a)) * 1e6) / shellCalls).toFixed(1);
  return { version, calls: shellCalls, usPerCall: perCall(s, e), trueUsPerCall: perCall(s2, e2) };
}

/** Parses every line the writers left; counts by writer and by kind and name. */
function checkLines(dir) {
  const files = fs.readdirSync(dir);
  const file = marksFileName(os.hostname());
  const text = fs.readFileSync(path.join(dir, file), 'utf8');
  const lines = text.split('\n');
  const unterminated = lines.pop() !== '';
  const byWriter = {};
  const byMark = {};
  let parsed = 0;
  let unparsed = 0;
  for (const line of lines) {
    const mark = parseMarkLine(line);
    if (!mark) {
      unparsed += 1;
      continue;
    }
    parsed += 1;
    byWriter[mark.writer] = (byWriter[mark.writer] ?? 0) + 1;
    const key = `${mark.kind} ${mark.name}`;
    byMark[key] = (byMark[key] ?? 0) + 1;
  }
  return { files, file, bytes: Buffer.byteLength(text), total: lines.length, parsed, unparsed, unterminated, byWriter, byMark };
}

/** The same keys with the same counts, in any order. */
function sameCounts(a, b) {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}

function main() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'erg-marks-bench-'));
  try {
    const on = { ...process.env, [MARKS_DIR_ENV]: work };
    const off = { ...process.env };
    delete off[MARKS_DIR_ENV];
    const python = pythonFigures(on);
    const pythonOff = pythonFigures(off);
    const shell = shellFigures(on);
    const lines = checkLines(work);
    const phaseMarks = WARMUP * 2 + rounds * iterations * 2;
    const stepMarks = WARMUP + rounds * iterations;
    const expected = {
      total: phaseMarks + stepMarks + shellCalls,
      byWriter: { py: phaseMarks + stepMarks, sh: shellCalls },
      byMark: { 'begin forward': phaseMarks / 2, 'end forward': phaseMarks / 2, 'step step': stepMarks, 'step sh_step': shellCalls },
    };
    const result = {
      iterations,
      rounds,
      python: { ...python, offUsPerMark: pythonOff.phaseUsPerMark, offStepUsPerMark: pythonOff.stepUsPerMark, offEnabled: pythonOff.enabled },
      shell,
      lines: { ...lines, expected, asExpected: lines.unparsed === 0 && !lines.unterminated && lines.total === expected.total
        && sameCounts(lines.byWriter, expected.byWriter) && sameCounts(lines.byMark, expected.byMark) },
      targetPythonUsPerMark: 5,
      node: process.version,
      cpus: os.cpus().length,
    };
    log(JSON.stringify(result, null, 2));
    log(
      `\nPython ${python.version}: ${python.phaseUsPerMark} µs per mark in \`with erg.phase\` (best ${python.phaseUsPerMarkBest}), ` +
        `${python.stepUsPerMark} µs per erg.step() (best ${python.stepUsPerMarkBest}); ${result.python.offUsPerMark} µs with marks off ` +
        `— target < 5 µs: ${python.phaseUsPerMark < 5 && python.stepUsPerMark < 5 ? 'met' : 'NOT met'}\n` +
        `bash ${shell.version}: ${shell.usPerCall} µs per erg-mark call (a process; /bin/true costs ${shell.trueUsPerCall} µs)\n` +
        `${lines.parsed} of ${lines.total} lines parse, ${lines.asExpected ? 'all as expected' : 'NOT as expected'}`,
    );
    if (opts.json) console.log(JSON.stringify(result));
    if (!result.lines.asExpected) process.exitCode = 1;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main();
