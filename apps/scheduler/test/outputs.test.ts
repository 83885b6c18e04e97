import { Metric } from '@erg/spec';
import { extractMetrics, jobWindow, parseTiming } from '../src/outputs';

describe('parseTiming', () => {
  test('reads what the job script writes', () => {
    expect(parseTiming('start_ns=1700000000000000000\nend_ns=1700000002500000000\nexit_code=3\n')).toEqual({
      startNs: 1700000000000000000n, endNs: 1700000002500000000n, exitCode: 3,
    });
  });
  test('a missing or partial file gives nulls, not zeros', () => {
    expect(parseTiming(null)).toEqual({ startNs: null, endNs: null, exitCode: null });
    expect(parseTiming('start_ns=5\n')).toEqual({ startNs: 5n, endNs: null, exitCode: null });
    expect(parseTiming('garbage\nstart_ns=abc')).toEqual({ startNs: null, endNs: null, exitCode: null });
  });
});

describe('extractMetrics', () => {
  const m = (o: object) => Metric.parse(o);
  const stdout = 'step=1 loss=3.5\nsamples/sec: 10.5\nstep=2 loss=2.5\nsamples/sec: 12.5\nstep=3 loss=1.0\n';

  test('reduces every match as the spec says', () => {
    const metrics = [
      m({ name: 'steps', regex: 'step=([0-9]+)', reduce: 'last' }),
      m({ name: 'first_loss', regex: 'loss=([0-9.]+)', reduce: 'first' }),
      m({ name: 'min_loss', regex: 'loss=([0-9.]+)', reduce: 'min' }),
      m({ name: 'max_loss', regex: 'loss=([0-9.]+)', reduce: 'max' }),
      m({ name: 'sps', regex: 'samples/sec: ([0-9.]+)', reduce: 'mean' }),
      m({ name: 'loss_sum', regex: 'loss=([0-9.]+)', reduce: 'sum' }),
      m({ name: 'lines', regex: 'step=', reduce: 'count' }),
    ];
    expect(extractMetrics(metrics, { stdout, stderr: '' })).toEqual({
      steps: 3, first_loss: 3.5, min_loss: 1, max_loss: 3.5, sps: 11.5, loss_sum: 7, lines: 3,
    });
  });

  test('^ and $ anchor at lines; an empty capture is not a zero', () => {
    const metrics = [m({ name: 'final', regex: '^loss=([0-9.]+)$', reduce: 'last' }), m({ name: 'empty', regex: 'x=([0-9]*);' })];
    expect(extractMetrics(metrics, { stdout: 'loss=2\nloss=1\nx=;\n', stderr: '' })).toEqual({ final: 1, empty: null });
  });

  test('a metric that never matched is null, and stderr is read when asked', () => {
    const metrics = [m({ name: 'tokens', regex: 'tokens=([0-9]+)' }), m({ name: 'warn', regex: 'warn=([0-9]+)', source: 'stderr' })];
    expect(extractMetrics(metrics, { stdout, stderr: 'warn=7\n' })).toEqual({ tokens: null, warn: 7 });
  });
});

describe('jobWindow', () => {
  const now = new Date('2026-11-30T12:00:10Z');
  const timing = { startNs: 1_796_040_000_500_000_000n, endNs: 1_796_040_005_250_000_000n };

  test("Slurm's times when it has them", () => {
    const job = { startTime: new Date('2026-11-30T12:00:00Z'), endTime: new Date('2026-11-30T12:00:06Z') };
    expect(jobWindow(job, timing, now)).toEqual({ startedAt: job.startTime, endedAt: job.endTime });
  });

  test('sacct still says Unknown: the workload window, then now', () => {
    expect(jobWindow({ startTime: null, endTime: null }, timing, now)).toEqual({
      startedAt: new Date(1_796_040_000_500), endedAt: new Date(1_796_040_005_250),
    });
    expect(jobWindow({ startTime: null, endTime: null }, { startNs: null, endNs: null }, now)).toEqual({ startedAt: null, endedAt: now });
  });
});
