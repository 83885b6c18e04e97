import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { JobFileRefusedError } from '@erg/slurm';
import { Metric } from '@erg/spec';
import { BATCH_BYTES, localLogSource, scanMetrics, type LogSource, type MetricScanLimits } from '../src/metric-scan';
import { UserRegexRunner } from '../src/regex-runner';

const m = (o: object) => Metric.parse(o);
const MiB = 1024 * 1024;
const limits: MetricScanLimits = { scanBytes: 64 * MiB, regexBudgetMs: 10_000 };

let dir: string;
let runner: UserRegexRunner;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'erg-metric-scan-'));
  runner = new UserRegexRunner({ workers: 2 });
});
afterAll(async () => {
  await runner.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A local log with `content`, counting the bytes each scan reads from it. */
function log(name: string, content: string | Buffer): LogSource & { bytesRead: number } {
  const file = path.join(dir, `${name}-${Math.random().toString(36).slice(2)}`);
  writeFileSync(file, content);
  const inner = localLogSource(file, name);
  const counted = {
    name,
    bytesRead: 0,
    open: async (request: Parameters<LogSource['open']>[0]) => {
      const window = await inner.open(request);
      if (!window) return null;
      const chunks = (async function* () {
        for await (const chunk of window.chunks) {
          counted.bytesRead += chunk.length;
          yield chunk;
        }
      })();
      return { ...window, chunks };
    },
  };
  return counted;
}

const nothing = () => log('stderr.log', '');

describe('scanMetrics: what a metric means', () => {
  const stdout = 'step=1 loss=3.5\nsamples/sec: 10.5\nstep=2 loss=2.5\nsamples/sec: 12.5\nstep=3 loss=1.0\n';

  test('reduces every match as the spec says', async () => {
    const metrics = [
      m({ name: 'steps', regex: 'step=([0-9]+)', reduce: 'last' }),
      m({ name: 'first_loss', regex: 'loss=([0-9.]+)', reduce: 'first' }),
      m({ name: 'min_loss', regex: 'loss=([0-9.]+)', reduce: 'min' }),
      m({ name: 'max_loss', regex: 'loss=([0-9.]+)', reduce: 'max' }),
      m({ name: 'sps', regex: 'samples/sec: ([0-9.]+)', reduce: 'mean' }),
      m({ name: 'loss_sum', regex: 'loss=([0-9.]+)', reduce: 'sum' }),
      m({ name: 'lines', regex: 'step=', reduce: 'count' }),
    ];
    const out = await scanMetrics(metrics, { stdout: log('stdout.log', stdout), stderr: nothing() }, runner, limits);
    expect(out).toEqual({
      metrics: { steps: 3, first_loss: 3.5, min_loss: 1, max_loss: 3.5, sps: 11.5, loss_sum: 7, lines: 3 },
      warnings: [],
      refused: [],
    });
  });

  test('^ and $ anchor at lines; an empty capture is not a zero', async () => {
    const metrics = [m({ name: 'final', regex: '^loss=([0-9.]+)$', reduce: 'last' }), m({ name: 'empty', regex: 'x=([0-9]*);', reduce: 'max' })];
    const out = await scanMetrics(metrics, { stdout: log('stdout.log', 'loss=2\nloss=1\nx=;\n'), stderr: nothing() }, runner, limits);
    expect(out.metrics).toEqual({ final: 1, empty: null });
  });

  test('a metric that never matched is null, count is 0, and stderr is read when asked', async () => {
    const metrics = [
      m({ name: 'tokens', regex: 'tokens=([0-9]+)' }),
      m({ name: 'none', regex: 'nope', reduce: 'count' }),
      m({ name: 'warn', regex: 'warn=([0-9]+)', source: 'stderr' }),
    ];
    const out = await scanMetrics(metrics, { stdout: log('stdout.log', stdout), stderr: log('stderr.log', 'warn=7\n') }, runner, limits);
    expect(out.metrics).toEqual({ tokens: null, none: 0, warn: 7 });
  });

  test('a log that does not exist gives nulls (and count 0), not an error', async () => {
    const missing = localLogSource(path.join(dir, 'no-such-file'), 'stdout.log');
    const metrics = [m({ name: 'a', regex: 'a=([0-9]+)', reduce: 'min' }), m({ name: 'n', regex: 'a', reduce: 'count' })];
    expect(await scanMetrics(metrics, { stdout: missing, stderr: nothing() }, runner, limits)).toEqual({ metrics: { a: null, n: 0 }, warnings: [], refused: [] });
  });

  test('a log erg refuses to read is reported, its metrics null', async () => {
    const refusal = new JobFileRefusedError('stdout.log', 'not-regular', 'stdout.log is a FIFO, not a regular file; erg reads job output only from regular files');
    const fifo: LogSource = { name: 'stdout.log', open: () => Promise.reject(refusal) };
    const metrics = [m({ name: 'a', regex: 'a=([0-9]+)' }), m({ name: 'w', regex: 'w=([0-9]+)', source: 'stderr' })];
    const out = await scanMetrics(metrics, { stdout: fifo, stderr: log('stderr.log', 'w=4\n') }, runner, limits);
    expect(out).toEqual({ metrics: { a: null, w: 4 }, warnings: [], refused: [refusal] });
  });
});

describe('scanMetrics: output of any size', () => {
  test('200,000 matches with reduce: min (a spread of that many values overflows the stack)', async () => {
    const lines = Array.from({ length: 200_000 }, (_, i) => `step ${i} loss=${(200_000 - i) / 1000}\n`).join('');
    const metrics = [m({ name: 'best', regex: 'loss=([0-9.]+)', reduce: 'min' }), m({ name: 'steps', regex: '^step', reduce: 'count' })];
    const out = await scanMetrics(metrics, { stdout: log('stdout.log', lines), stderr: nothing() }, runner, limits);
    expect(out.metrics).toEqual({ best: 0.001, steps: 200_000 });
    expect(out.warnings).toEqual([]);
  });

  test('only `last` metrics: reads the end of the log, not all of it', async () => {
    const filler = 'x'.repeat(99) + '\n';
    const body = `throughput=1\n${filler.repeat(200_000)}throughput=42.5\n${filler.repeat(100)}`;
    const stdout = log('stdout.log', body);
    const out = await scanMetrics([m({ name: 'tp', regex: 'throughput=([0-9.]+)', reduce: 'last' })], { stdout, stderr: nothing() }, runner, limits);
    expect(out.metrics).toEqual({ tp: 42.5 });
    expect(stdout.bytesRead).toBeLessThanOrEqual(1 * MiB);
    expect(body.length).toBeGreaterThan(19 * MiB);
  });

  test('only `first` metrics: stops reading once each has matched', async () => {
    const filler = 'y'.repeat(99) + '\n';
    const stdout = log('stdout.log', `warmup\nloss=9\n${filler.repeat(200_000)}loss=1\n`);
    const out = await scanMetrics([m({ name: 'initial', regex: 'loss=([0-9]+)', reduce: 'first' })], { stdout, stderr: nothing() }, runner, limits);
    expect(out.metrics).toEqual({ initial: 9 });
    // A couple of batches in flight at most, not the 20 MB.
    expect(stdout.bytesRead).toBeLessThanOrEqual(4 * MiB);
  });

  test('a `last` value on a line that straddles two blocks read backwards is matched whole', async () => {
    // The final match sits across the boundary of the last 1 MiB block.
    const tailLength = 1 * MiB;
    const filler = 'z'.repeat(63) + '\n';
    const straddling = 'tokens=123456789\n';
    const after = 'z'.repeat(tailLength - 8 - 1) + '\n';
    const body = filler.repeat(1000) + 'tokens=5\n' + filler.repeat(1000) + straddling + after;
    // The block boundary (size - 1 MiB) falls inside `straddling`.
    const boundary = Buffer.byteLength(body) - tailLength;
    const at = body.indexOf(straddling);
    expect(boundary).toBeGreaterThan(at);
    expect(boundary).toBeLessThan(at + straddling.length - 1);
    const out = await scanMetrics([m({ name: 'tokens', regex: '^tokens=([0-9]+)$', reduce: 'last' })], { stdout: log('stdout.log', body), stderr: nothing() }, runner, limits);
    expect(out.metrics).toEqual({ tokens: 123456789 });
  });

  test('beyond the scan cap, aggregates read the end of the log and say so; `first` still reads the start', async () => {
    const filler = 'w'.repeat(99) + '\n';
    const body = `lr=7\nloss=0.5\n${filler.repeat(30_000)}loss=2\nloss=3\n`;
    const metrics = [
      m({ name: 'best', regex: 'loss=([0-9.]+)', reduce: 'min' }),
      m({ name: 'lr', regex: 'lr=([0-9]+)', reduce: 'first' }),
      m({ name: 'final', regex: 'loss=([0-9.]+)', reduce: 'last' }),
    ];
    const out = await scanMetrics(metrics, { stdout: log('stdout.log', body), stderr: nothing() }, runner, { ...limits, scanBytes: 1 * MiB });
    // loss=0.5 lies before the last MiB: the minimum is over what was read.
    expect(out.metrics).toEqual({ best: 2, lr: 7, final: 3 });
    expect(out.warnings).toEqual(['stdout.log is 2.9 MiB; metrics best were read from its last 1 MiB (ERG_METRIC_SCAN_BYTES)']);
  });

  test('a line longer than a batch is matched in pieces, with a warning', async () => {
    const body = `${'q'.repeat(BATCH_BYTES + 10)}\nvalue=3\n`;
    const out = await scanMetrics([m({ name: 'v', regex: 'value=([0-9]+)', reduce: 'max' })], { stdout: log('stdout.log', body), stderr: nothing() }, runner, limits);
    expect(out.metrics).toEqual({ v: 3 });
    expect(out.warnings).toEqual(['stdout.log has lines longer than 1 MiB; metrics matched them in pieces of that size']);
  });
});

describe('scanMetrics: one bad regex costs only itself', () => {
  test('`^(a+)+$` beside an innocent `v=([0-9])` over 4 MB of lines built to make it backtrack: the whole scan finishes and both metrics have their values', async () => {
    // Forty a's and a '!': a backtracking engine tries 2^40 splits per line; RE2 reads each line once.
    const trap = `${'a'.repeat(40)}!\n`;
    const body = `${trap.repeat(50_000)}aaaa\nv=7\n${trap.repeat(50_000)}aaaaaaaa\n`;
    expect(body.length).toBeGreaterThan(4 * MiB);
    const metrics = [m({ name: 'v', regex: 'v=([0-9])' }), m({ name: 'evil', regex: '^(a+)+$', reduce: 'count' })];
    const out = await scanMetrics(metrics, { stdout: log('stdout.log', body), stderr: nothing() }, runner, { ...limits, regexBudgetMs: 60_000 });
    expect(out).toEqual({ metrics: { v: 7, evil: 2 }, warnings: [], refused: [] });
  }, 120_000);

  test('a regex that runs past its own budget is the only metric without a value, and the only one the warning names', async () => {
    // Linear, yet slow: ~15 ms a line here, 30 s for the log, against a budget of 0.5 s. The
    // others read the same batches (and the other log) under budgets of their own.
    let seed = 7;
    const letter = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % 2 === 0 ? 'a' : 'b');
    const line = () => `${Array.from({ length: 198 }, letter).join('')}cd\n`;
    const body = `v=7\n${Array.from({ length: 2000 }, line).join('')}`;
    const metrics = [
      m({ name: 'v', regex: 'v=([0-9])' }),
      m({ name: 'slow', regex: '(?:.{0,30}a){10}c', reduce: 'count' }),
      m({ name: 'lines', regex: 'cd$', reduce: 'count' }),
      m({ name: 'w', regex: 'w=([0-9])', source: 'stderr' }),
    ];
    const out = await scanMetrics(metrics, { stdout: log('stdout.log', body), stderr: log('stderr.log', 'w=4\n') }, runner, { ...limits, regexBudgetMs: 500 });
    expect(out.metrics).toEqual({ v: 7, slow: null, lines: 2000, w: 4 });
    expect(out.warnings).toEqual([
      'metric "slow" (regex "(?:.{0,30}a){10}c") ran past its regex time budget of 0.5 s (ERG_METRIC_REGEX_BUDGET_MS, per metric) on stdout.log and was stopped; it has no value',
    ]);
  }, 60_000);

  test('a stored regex RE2 refuses (a campaign created before erg used RE2) leaves only its metric without a value, with the reason', async () => {
    // The schema keeps a stored spec's regex as it was; only a spec coming in is held to RE2.
    const metrics = [m({ name: 'ms', regex: '([0-9]+)(?= ms)' }), m({ name: 'v', regex: 'v=([0-9])' })];
    const out = await scanMetrics(metrics, { stdout: log('stdout.log', 'took 12 ms\nv=3\n'), stderr: nothing() }, runner, limits);
    expect(out.metrics).toEqual({ ms: null, v: 3 });
    expect(out.warnings).toEqual([
      expect.stringMatching(/^metric "ms" \(regex "\(\[0-9\]\+\)\(\?= ms\)"\) could not be matched on stdout\.log: RE2 syntax: lookahead .*; it has no value$/),
    ]);
  });

  test('each line is matched on its own: ^ and $ at its ends, a CR before its LF not part of it, no match across lines', async () => {
    const metrics = [
      m({ name: 'final', regex: '^v=([0-9]+)$', reduce: 'last' }),
      m({ name: 'pairs', regex: 'x\\ny', reduce: 'count' }),
      m({ name: 'empty', regex: '^$', reduce: 'count' }),
    ];
    const out = await scanMetrics(metrics, { stdout: log('stdout.log', 'v=1\r\nx\ny\n\nv=2\r\n'), stderr: nothing() }, runner, limits);
    expect(out.metrics).toEqual({ final: 2, pairs: 0, empty: 1 });
  });
});
