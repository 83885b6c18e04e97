import { jobWindow } from '../src/outputs';

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
