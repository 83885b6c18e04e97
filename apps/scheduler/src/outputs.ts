/** What the job script writes to erg.timing around the workload (see @erg/slurm's renderer). */
export interface WorkloadTiming {
  startNs: bigint | null;
  endNs: bigint | null;
  exitCode: number | null;
}

/** The idle-baseline window the job script writes to erg.idle, when the spec asks for one. */
export function parseIdleWindow(text: string | null): { idleStartNs: bigint | null; idleEndNs: bigint | null } {
  const start = /^idle_start_ns=(\d+)\s*$/m.exec(text ?? '')?.[1];
  const end = /^idle_end_ns=(\d+)\s*$/m.exec(text ?? '')?.[1];
  return { idleStartNs: start ? BigInt(start) : null, idleEndNs: end ? BigInt(end) : null };
}

export function parseTiming(text: string | null): WorkloadTiming {
  const values = new Map<string, string>();
  for (const line of (text ?? '').split('\n')) {
    const m = /^([a-z_]+)=(-?\d+)\s*$/.exec(line);
    if (m) values.set(m[1]!, m[2]!);
  }
  const big = (k: string) => (values.has(k) ? BigInt(values.get(k)!) : null);
  return { startNs: big('start_ns'), endNs: big('end_ns'), exitCode: values.has('exit_code') ? Number(values.get('exit_code')) : null };
}

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
