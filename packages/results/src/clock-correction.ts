// Node clocks against the window's. job.sh times the workload window on the job's first node (the
// batch host); every node's agent stamps its samples and marks with its own node's clock. Where
// the nodes' clocks disagree by more than the campaign's bound (validity.maxClockOffsetMs), a
// node's samples would be attributed to the wrong stretch of the window: they are moved by the
// difference between its clock and the batch host's, each node's offset being the one its agent's
// pushes measured against erg's server (run_nodes.clock_offset_ms). The validity gates clock_offset
// and clock_spread still judge the clocks as they were: the run is flagged and corrected for.
import { expandHostlist } from '@erg/slurm/hostlist';
import type { RunMarkRecord } from '@erg/db';
import type { ClockOffset } from '@erg/energy';
import type { FigureSeries } from './run-figures';

/** What to move each node's timestamps by (ms, added), and a warning per node moved. */
export interface ClockCorrection {
  shifts: ReadonlyMap<string, number>;
  warnings: string[];
}

const seconds = (ms: number) => `${ms >= 0 ? '+' : '−'}${(Math.abs(ms) / 1000).toFixed(2)} s`;

/**
 * The shifts that put every node's timestamps on the batch host's clock (the first node of
 * Slurm's node list), for the nodes more than `limitMs` off it. None when the batch host's clock
 * was not measured (telemetry pulled from the spool): there is nothing to line the others up with.
 */
export function clockCorrection(clocks: readonly ClockOffset[], nodeList: string | null, limitMs: number): ClockCorrection {
  const shifts = new Map<string, number>();
  const warnings: string[] = [];
  const batchHost = nodeList ? expandHostlist(nodeList)?.[0] : undefined;
  const offsetOf = new Map(clocks.map((c) => [c.node.split('.')[0]!, c.offsetMs]));
  const reference = batchHost === undefined ? undefined : offsetOf.get(batchHost);
  if (batchHost === undefined || reference === undefined) return { shifts, warnings };
  for (const c of clocks) {
    const difference = c.offsetMs - reference;
    if (Math.abs(difference) <= limitMs) continue;
    shifts.set(c.node, -difference);
    warnings.push(
      `node ${c.node}: its clock is ${seconds(difference)} from ${batchHost}'s, which timed the window (each measured against erg's server by its agent's pushes): ` +
        `its samples and marks were moved by ${seconds(-difference)} to line up`,
    );
  }
  return { shifts, warnings };
}

/** The series with each shifted node's timestamps moved (the others as they are). */
export function shiftSeries(series: readonly FigureSeries[], shifts: ReadonlyMap<string, number>): readonly FigureSeries[] {
  if (shifts.size === 0) return series;
  return series.map((s) => {
    const by = shifts.get(s.node);
    return by === undefined ? s : { ...s, t: Float64Array.from(s.t, (t) => t + by) };
  });
}

/** The marks with each shifted node's times moved. */
export function shiftMarks(marks: readonly RunMarkRecord[], shifts: ReadonlyMap<string, number>): readonly RunMarkRecord[] {
  if (shifts.size === 0) return marks;
  return marks.map((m) => {
    const by = shifts.get(m.node);
    return by === undefined ? m : { ...m, t: m.t + by };
  });
}
