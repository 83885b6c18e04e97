import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { compileUserRegex, LogPhase, Metric } from '@erg/spec';
import { describeOutside, LOG_MARK_OFFSET_BASE, LogMarks, logMarkOffset, phasePatterns, SLOTS_PER_LINE } from '../src/log-phases';
import { localLogSource, scanRunLogs, type MetricScanLimits } from '../src/metric-scan';
import { matchPhases, parseIsoTime, parseLogTime, type PhasePattern } from '../src/phase-match';
import { UserRegexRunner } from '../src/regex-runner';

const MiB = 1024 * 1024;
const limits: MetricScanLimits = { scanBytes: 64 * MiB, regexBudgetMs: 10_000 };
const T0 = Date.UTC(2026, 4, 1, 12, 0, 0); // 2026-05-01T12:00:00Z
const everything = { minT: 0, maxT: Number.MAX_SAFE_INTEGER };
const phase = (o: object) => LogPhase.parse(o);

describe('parseLogTime: the formats a timestamp may have', () => {
  test('ISO 8601 and YYYY-MM-DD HH:MM:SS[.fff]: UTC unless it has an offset', () => {
    expect(parseLogTime('2026-05-01T12:00:00Z', 'iso')).toBe(T0);
    expect(parseLogTime('2026-05-01T12:00:00', 'iso')).toBe(T0);
    expect(parseLogTime('2026-05-01 12:00:00.125', 'iso')).toBe(T0 + 125);
    expect(parseLogTime('2026-05-01 12:00:00,5', 'iso')).toBe(T0 + 500); // Python's logging
    expect(parseLogTime('2026-05-01T12:00:00.000250Z', 'iso')).toBeCloseTo(T0 + 0.25, 6);
    expect(parseLogTime('2026-05-01T14:00:00+02:00', 'iso')).toBe(T0);
    expect(parseLogTime('2026-05-01T14:30:00+0230', 'iso')).toBe(T0);
    expect(parseLogTime('2026-05-01T07:00:00-05', 'iso')).toBe(T0);
    expect(parseLogTime('2026-05-01 12:00:00 Z', 'iso')).toBe(T0);
    expect(parseLogTime('  2026-05-01T12:00:00Z ', 'iso')).toBe(T0);
    expect(parseLogTime('2024-02-29T00:00:00Z', 'iso')).toBe(Date.UTC(2024, 1, 29));
  });

  test('an ISO time that is not a real time is no time', () => {
    for (const bad of ['2026-13-01T00:00:00Z', '2026-02-29T00:00:00Z', '2026-04-31T00:00:00Z', '2026-05-01T24:00:00Z', '2026-05-01T12:61:00Z',
      '2026-05-01T12:00:00+25:00', '2026-05-01', '12:00:00', '2026-05-01T12:00Z', 'yesterday', '', '1777636800']) {
      expect(parseLogTime(bad, 'iso')).toBeNull();
    }
    expect(parseIsoTime('2026-05-01T12:00:00+02:00:00')).toBeNull();
  });

  test('unix seconds (fractions too) and unix_ms', () => {
    expect(parseLogTime(String(T0 / 1000), 'unix')).toBe(T0);
    expect(parseLogTime(`${T0 / 1000}.25`, 'unix')).toBe(T0 + 250);
    expect(parseLogTime(String(T0), 'unix_ms')).toBe(T0);
    expect(parseLogTime(`${T0}.5`, 'unix_ms')).toBe(T0 + 0.5);
    expect(parseLogTime('2026-05-01T12:00:00Z', 'unix')).toBeNull();
    for (const bad of ['-1', '1e9', '0x10', '12:00', 'NaN', '']) expect(parseLogTime(bad, 'unix')).toBeNull();
  });

  test('without a format, each value is read as what it looks like: a number of 1e11 or more is ms', () => {
    expect(parseLogTime('2026-05-01 12:00:00.125', null)).toBe(T0 + 125);
    expect(parseLogTime(String(T0 / 1000), null)).toBe(T0);
    expect(parseLogTime(`${T0 / 1000}.125`, null)).toBe(T0 + 125);
    expect(parseLogTime(String(T0), null)).toBe(T0);
    expect(parseLogTime('step 3', null)).toBeNull();
  });
});

/** Runs matchPhases the way a worker does (RE2, user-regex.ts). */
function match(text: string, patterns: PhasePattern[], offset = 0, maxMarks = 1000) {
  return matchPhases(text, new TextEncoder().encode(text), { patterns, offset, maxMarks }, compileUserRegex);
}

describe('matchPhases: log lines to marks', () => {
  const iso = (ms: number) => new Date(ms).toISOString();
  const begin: PhasePattern = { source: '^\\[(?<t>[^\\]]+)\\] step begins', slot: 0, format: null };
  const end: PhasePattern = { source: '^\\[(?<t>[^\\]]+)\\] step ends', slot: 1, format: null };

  test('each matching line gives its byte offset, the pattern’s slot and the time; pairing is left to the energy math', () => {
    const lines = [`[${iso(T0)}] step begins`, 'naïve ünïcödé filler', `[${iso(T0 + 1500)}] step ends`, `[${iso(T0 + 2000)}] step ends`, ''];
    const text = lines.join('\n');
    const out = match(text, [begin, end], 4096);
    const offsetOf = (i: number) => 4096 + Buffer.byteLength(lines.slice(0, i).map((l) => `${l}\n`).join(''));
    expect(out).toEqual({
      lines: [offsetOf(0), offsetOf(2), offsetOf(3)],
      slots: [0, 1, 1],
      t: [T0, T0 + 1500, T0 + 2000],
      unparsed: [0, 0],
      unparsedExample: [null, null],
      full: false,
      refused: [null, null],
    });
  });

  test('one mark per pattern per line, even where a pattern matches twice in it; another pattern may mark the same line', () => {
    const text = `t=${T0} t=${T0 + 5}\nnothing\nt=${T0 + 10}`;
    const step: PhasePattern = { source: 't=(?<t>\\d+)', slot: 2, format: 'unix_ms' };
    const other: PhasePattern = { source: 't=(?<t>\\d+)', slot: 5, format: null };
    const out = match(text, [step, other]);
    expect(out.slots).toEqual([2, 2, 5, 5]);
    expect(out.t).toEqual([T0, T0 + 10, T0, T0 + 10]);
    expect(out.lines).toEqual([0, text.lastIndexOf('\n') + 1, 0, text.lastIndexOf('\n') + 1]);
  });

  test('a timestamp that does not parse is skipped and counted, with the first one shown', () => {
    const text = `[soon] step begins\n[${iso(T0)}] step begins\n[2026-05-01 25:00:00] step begins\n`;
    const out = match(text, [begin, end]);
    expect(out.t).toEqual([T0]);
    expect(out.unparsed).toEqual([2, 0]);
    expect(out.unparsedExample).toEqual(['soon', null]);
  });

  test('stops at maxMarks and says so', () => {
    const text = Array.from({ length: 10 }, (_, i) => `[${iso(T0 + i)}] step begins`).join('\n');
    const out = match(text, [begin], 0, 4);
    expect(out.t).toEqual([T0, T0 + 1, T0 + 2, T0 + 3]);
    expect(out.full).toBe(true);
  });

  test('each line is matched on its own: a pattern across a line end marks nothing, and a CR before the LF is not part of the line', () => {
    const text = `a ${T0}\nb\na ${T0 + 1}\r\nb\n`;
    expect(match(text, [{ source: 'a (?<t>\\d+)\\nb', slot: 2, format: null }]).t).toEqual([]);
    const out = match(text, [{ source: '^a (?<t>\\d+)$', slot: 2, format: null }]);
    expect(out.t).toEqual([T0, T0 + 1]);
    expect(out.lines).toEqual([0, text.indexOf(`a ${T0 + 1}`)]);
  });

  test('a pattern RE2 refuses (stored before erg used RE2) gives no marks and its reason; the others still mark', () => {
    const text = `[${iso(T0)}] step begins\n`;
    const out = match(text, [{ source: '^\\[(?<t>[^\\]]+)\\](?= step)', slot: 0, format: null }, begin]);
    expect(out.refused).toEqual([expect.stringMatching(/^RE2 syntax: lookahead /), null]);
    expect(out.t).toEqual([T0]);
    expect(out.slots).toEqual([begin.slot]);
  });
});

describe('LogMarks: the marks of a run, as run_marks stores them', () => {
  const phases = [
    phase({ name: 'optimizer', begin: '^(?<t>\\S+) opt begins', end: '^(?<t>\\S+) opt ends' }),
    phase({ name: 'step', step: '^(?<t>\\S+) step', timeFormat: 'unix_ms' }),
  ];

  test('the regexes of the phases, with their slots', () => {
    expect(phasePatterns(phases)).toEqual([
      { source: '^(?<t>\\S+) opt begins', slot: 0, format: null },
      { source: '^(?<t>\\S+) opt ends', slot: 1, format: null },
      { source: '^(?<t>\\S+) step', slot: 5, format: 'unix_ms' },
    ]);
  });

  test('offsets are unique per line and slot, above any `<node>.marks` byte offset, and exact as numbers', () => {
    expect(logMarkOffset(0, 0)).toBe(LOG_MARK_OFFSET_BASE);
    expect(logMarkOffset(1, 0)).toBe(LOG_MARK_OFFSET_BASE + SLOTS_PER_LINE);
    expect(logMarkOffset(0, SLOTS_PER_LINE - 1)).toBeLessThan(logMarkOffset(1, 0));
    // A 64 TiB log still has exact offsets.
    expect(Number.isSafeInteger(logMarkOffset(64 * 1024 ** 4, SLOTS_PER_LINE - 1))).toBe(true);
  });

  test('marks come out with their kind, name, wall clock and writer log; those outside the run’s times are left out and counted', () => {
    const marks = new LogMarks();
    marks.add({ lines: [0, 40, 80, 120], slots: [0, 1, 5, 0], t: [T0, T0 + 10, T0 + 20, T0 - 7_200_000], unparsed: [0, 0, 0], unparsedExample: [null, null, null], full: false, refused: [null, null, null] }, phasePatterns(phases));
    const bounds = { minT: T0 - 1000, maxT: T0 + 1000 };
    expect([...marks.marksWithin(phases, bounds)]).toEqual([
      { offset: logMarkOffset(0, 0), kind: 'begin', name: 'optimizer', t: T0, clock: 'wall', writer: 'log' },
      { offset: logMarkOffset(40, 1), kind: 'end', name: 'optimizer', t: T0 + 10, clock: 'wall', writer: 'log' },
      { offset: logMarkOffset(80, 5), kind: 'step', name: 'step', t: T0 + 20, clock: 'wall', writer: 'log' },
    ]);
    expect(describeOutside(phases, marks.outside(bounds), 'stdout.log')).toEqual([
      'phase "optimizer" (begin regex "^(?<t>\\\\S+) opt begins"): 1 mark of stdout.log lay outside the run\'s time (from shortly before it was submitted to shortly after it ended) ' +
        'and was skipped; a time without an offset is read as UTC: if the log prints local time, print its offset too (e.g. +02:00)',
    ]);
  });

  test('keeps at most maxMarks, and says what it skipped', () => {
    const marks = new LogMarks(3);
    const patterns = phasePatterns(phases);
    marks.add({ lines: [0, 1], slots: [0, 1], t: [T0, T0], unparsed: [2, 0, 1], unparsedExample: ['soon', null, 'x'], full: false, refused: [null, null, null] }, patterns);
    expect(marks.remaining).toBe(1);
    marks.add({ lines: [2, 3], slots: [0, 1], t: [T0, T0], unparsed: [1, 0, 0], unparsedExample: ['later', null, null], full: false, refused: [null, null, null] }, patterns);
    expect(marks.count).toBe(3);
    expect(marks.full).toBe(true);
    expect(marks.warnings(phases, 'stdout.log')).toEqual([
      'phase "optimizer" (begin regex "^(?<t>\\\\S+) opt begins"): 3 lines of stdout.log had a timestamp (?<t>…) that does not read as an ISO 8601 time or Unix seconds or milliseconds (first: "soon") and were skipped',
      'phase "step" (step regex "^(?<t>\\\\S+) step"): 1 line of stdout.log had a timestamp (?<t>…) that does not read as unix_ms (first: "x") and was skipped',
      'stdout.log has more than 3 phase marks; those after the first 3 were not kept (MAX_NODE_MARKS)',
    ]);
  });

  test('grows past its first columns without losing marks', () => {
    const marks = new LogMarks();
    const n = 5000;
    marks.add({ lines: Array.from({ length: n }, (_, i) => i * 10), slots: Array(n).fill(5), t: Array.from({ length: n }, (_, i) => T0 + i), unparsed: [0, 0, 0], unparsedExample: [null, null, null], full: false, refused: [null, null, null] }, phasePatterns(phases));
    const out = [...marks.marksWithin(phases, everything)];
    expect(out).toHaveLength(n);
    expect(out[n - 1]).toMatchObject({ offset: logMarkOffset((n - 1) * 10, 5), t: T0 + n - 1 });
  });
});

describe('scanRunLogs: phases in the same pass as the metrics', () => {
  let dir: string;
  let runner: UserRegexRunner;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'erg-log-phases-'));
    runner = new UserRegexRunner({ workers: 2 });
  });
  afterAll(async () => {
    await runner.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const logFile = (name: string, content: string) => {
    const file = path.join(dir, `${name}-${Math.random().toString(36).slice(2)}`);
    writeFileSync(file, content);
    return localLogSource(file, name);
  };
  const noStderr = () => logFile('stderr.log', '');
  const phases = [
    phase({ name: 'optimizer', begin: '^\\[(?<t>[^\\]]+)\\] step begins', end: '^\\[(?<t>[^\\]]+)\\] step ends' }),
    phase({ name: 'step', step: 'global_step=\\d+ at (?<t>[0-9.]+)' }),
  ];
  const iso = (ms: number) => new Date(ms).toISOString();

  test('finds every mark of a log of many batches, with offsets of its lines in the file, and the metrics beside them', async () => {
    const lines: string[] = [];
    for (let i = 0; i < 30_000; i++) {
      lines.push(`[${iso(T0 + i * 100)}] step begins`, `loss=${i}`, `[${iso(T0 + i * 100 + 60)}] step ends`, `global_step=${i} at ${(T0 + i * 100 + 99) / 1000}`);
    }
    const body = `${lines.join('\n')}\n`;
    expect(body.length).toBeGreaterThan(2 * MiB);
    const metrics = [Metric.parse({ name: 'loss', regex: 'loss=([0-9]+)' })];
    const out = await scanRunLogs({ metrics, phases }, { stdout: logFile('stdout.log', body), stderr: noStderr() }, runner, limits);
    expect(out.metrics).toEqual({ loss: 29_999 });
    expect(out.warnings).toEqual([]);
    const marks = [...out.marks!.marksWithin(phases, everything)];
    expect(marks).toHaveLength(90_000);
    // Each offset names its own line of the file: decode it back.
    const starts = new Map<number, number>();
    let at = 0;
    lines.forEach((line, i) => {
      starts.set(at, i);
      at += Buffer.byteLength(line) + 1;
    });
    const misplaced = marks.filter((m) => {
      const slot = (m.offset - LOG_MARK_OFFSET_BASE) % SLOTS_PER_LINE;
      const line = lines[starts.get((m.offset - LOG_MARK_OFFSET_BASE - slot) / SLOTS_PER_LINE) ?? -1] ?? '';
      return !line.includes(m.kind === 'begin' ? 'begins' : m.kind === 'end' ? 'ends' : 'global_step');
    });
    expect(misplaced).toEqual([]);
    expect(marks.filter((m) => m.kind === 'step').map((m) => m.t).slice(0, 2)).toEqual([T0 + 99, T0 + 199]);
    expect(new Set(marks.map((m) => m.offset)).size).toBe(marks.length);
  }, 30_000);

  test('the same log gives the same marks again (a finalize tried again stores nothing new)', async () => {
    const body = Array.from({ length: 50 }, (_, i) => `[${iso(T0 + i)}] step begins\n[${iso(T0 + i + 1)}] step ends\n`).join('');
    const scan = async () => [...(await scanRunLogs({ metrics: [], phases }, { stdout: logFile('stdout.log', body), stderr: noStderr() }, runner, limits)).marks!.marksWithin(phases, everything)];
    expect(await scan()).toEqual(await scan());
  });

  test('bad timestamps are counted in the warnings; no phases, no marks', async () => {
    const body = `[${iso(T0)}] step begins\n[not a time] step ends\n[${iso(T0 + 5)}] step ends\n`;
    const out = await scanRunLogs({ metrics: [], phases }, { stdout: logFile('stdout.log', body), stderr: noStderr() }, runner, limits);
    expect(out.marks!.count).toBe(2);
    expect(out.warnings).toEqual([
      'phase "optimizer" (end regex "^\\\\[(?<t>[^\\\\]]+)\\\\] step ends"): 1 line of stdout.log had a timestamp (?<t>…) that does not read as an ISO 8601 time or Unix seconds or milliseconds (first: "not a time") and was skipped',
    ]);
    const none = await scanRunLogs({ metrics: [] }, { stdout: logFile('stdout.log', body), stderr: noStderr() }, runner, limits);
    expect(none).toEqual({ metrics: {}, warnings: [], refused: [], marks: null });
  });

  test('beyond the scan cap, phases are read from the end of the log, at their true offsets, and a warning says so', async () => {
    const filler = `${'f'.repeat(99)}\n`;
    const head = `[${iso(T0)}] step begins\n`;
    const tail = `[${iso(T0 + 9)}] step ends\n`;
    const body = head + filler.repeat(30_000) + tail;
    const out = await scanRunLogs({ metrics: [], phases }, { stdout: logFile('stdout.log', body), stderr: noStderr() }, runner, { ...limits, scanBytes: 1 * MiB });
    expect([...out.marks!.marksWithin(phases, everything)]).toEqual([
      { offset: logMarkOffset(Buffer.byteLength(body) - tail.length, 1), kind: 'end', name: 'optimizer', t: T0 + 9, clock: 'wall', writer: 'log' },
    ]);
    expect(out.warnings).toEqual(['stdout.log is 2.9 MiB; phases optimizer, step were read from its last 1 MiB (ERG_METRIC_SCAN_BYTES)']);
  });

  test('at the run’s mark limit the scan keeps the first marks and says so', async () => {
    const body = Array.from({ length: 100 }, (_, i) => `global_step=${i} at ${(T0 + i) / 1000}\n`).join('');
    const out = await scanRunLogs({ metrics: [], phases }, { stdout: logFile('stdout.log', body), stderr: noStderr() }, runner, { ...limits, maxMarks: 10 });
    expect([...out.marks!.marksWithin(phases, everything)].map((m) => m.t)).toEqual(Array.from({ length: 10 }, (_, i) => T0 + i));
    expect(out.warnings).toEqual(['stdout.log has more than 10 phase marks; those after the first 10 were not kept (MAX_NODE_MARKS)']);
  });

  test('a phase regex past the phases’ budget stops the phases only: it is named, the marks before it are kept, the metrics keep their values', async () => {
    // Linear, yet slow: ~15 ms a line, 30 s for these lines, against a budget of 0.5 s.
    let seed = 3;
    const letter = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % 2 === 0 ? 'a' : 'b');
    const slowLines = Array.from({ length: 2000 }, () => `${Array.from({ length: 198 }, letter).join('')}cd`).join('\n');
    const slow = [{ name: 'slow', step: '(?<t>(?:.{0,30}a){10})c' }] as LogPhase[];
    const body = `${slowLines}\nv=5\n`;
    const out = await scanRunLogs(
      { metrics: [Metric.parse({ name: 'v', regex: 'v=([0-9])' }), Metric.parse({ name: 'n', regex: 'cd$', reduce: 'count' })], phases: slow },
      { stdout: logFile('stdout.log', body), stderr: noStderr() }, runner, { ...limits, regexBudgetMs: 500 },
    );
    expect(out.metrics).toEqual({ v: 5, n: 2000 });
    expect(out.warnings).toEqual([
      'phase "slow" (step regex "(?<t>(?:.{0,30}a){10})c") ran past the phases\' regex time budget of 0.5 s (ERG_METRIC_REGEX_BUDGET_MS) on stdout.log and was stopped; ' +
        'phase marks were read up to 0 B into it only',
    ]);
    expect(out.marks!.count).toBe(0);
  }, 60_000);
});
