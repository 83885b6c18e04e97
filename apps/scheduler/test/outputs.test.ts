import { jobWindow, parseTiming } from '../src/outputs';

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
