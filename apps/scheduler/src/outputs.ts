import type { WorkloadTiming } from '@erg/spec';

/**
 * When a finished job started and ended. Slurm's times first; but sacct reports Start/End as
 * Unknown for a while after a job ends (its accounting record is not complete yet), so then the
 * workload's own window from erg.timing (which lies inside the job's), and `now` for an end
 * nobody recorded — a finished run always has an end.
 */
export function jobWindow(
  job: { startTime: Date | null; endTime: Date | null },
  timing: Pick<WorkloadTiming, 'startNs' | 'endNs'>,
  now: Date,
): { startedAt: Date | null; endedAt: Date } {
  const fromNs = (ns: bigint | null) => (ns === null ? null : new Date(Number(ns / 1_000_000n)));
  return { startedAt: job.startTime ?? fromNs(timing.startNs), endedAt: job.endTime ?? fromNs(timing.endNs) ?? now };
}
