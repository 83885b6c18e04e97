import type { CampaignSpec } from '@erg/spec';

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

type MetricSpec = CampaignSpec['metrics'][number];

/**
 * Figures of merit from the workload's output: every match of the metric's regex, reduced as the
 * spec says. A metric that never matched is null (not 0: absence is not a measurement).
 */
export function extractMetrics(metrics: readonly MetricSpec[], output: { stdout: string; stderr: string }): Record<string, number | null> {
  const result: Record<string, number | null> = {};
  for (const metric of metrics) {
    const text = metric.source === 'stderr' ? output.stderr : output.stdout;
    // Multiline: ^ and $ anchor at each line of the log, which is what a log pattern means.
    const re = new RegExp(metric.regex, 'gm');
    const values: number[] = [];
    let count = 0;
    for (const m of text.matchAll(re)) {
      count++;
      const v = Number(m[1]);
      if (m[1] !== undefined && m[1].trim() !== '' && Number.isFinite(v)) values.push(v);
    }
    result[metric.name] = reduce(metric.reduce, values, count);
  }
  return result;
}

function reduce(how: MetricSpec['reduce'], values: number[], count: number): number | null {
  if (how === 'count') return count;
  if (values.length === 0) return null;
  switch (how) {
    case 'first': return values[0]!;
    case 'last': return values[values.length - 1]!;
    case 'min': return Math.min(...values);
    case 'max': return Math.max(...values);
    case 'sum': return values.reduce((a, b) => a + b, 0);
    case 'mean': return values.reduce((a, b) => a + b, 0) / values.length;
  }
}
