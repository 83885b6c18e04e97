// `<node>.stats.json`: what one agent process did, written when it stops.

/** A sensor that left the sensor set (at detection or at run time), and why. */
export interface DroppedSensor {
  sensor: string;
  reason: string;
}

export interface AgentStats {
  agentVersion: string;
  node: string;
  pid: number;
  startedAt: string;
  stoppedAt: string;
  durationMs: number;
  intervalMs: number;
  samples: number;
  /** Batches this process spooled. */
  batches: number;
  firstSeq: number | null;
  lastSeq: number | null;
  /** Highest seq with every seq ≤ it settled on the server (-1: none). */
  ackedSeq: number;
  pushed: number;
  duplicates: number;
  rejected: number;
  retries: number;
  /** Unacknowledged batches left in the spool at exit. */
  unacked: number;
  pushStoppedByStatus: number | null;
  cachedRepeats: number;
  missedTicks: number;
  readErrors: number;
  /** Batches lost because the spool could not be written. */
  spoolErrors: number;
  /** Phase marks (`<node>.marks`) put into spooled batches by this process. */
  marksSent: number;
  /** Lines of `<node>.marks` skipped: not a mark, too long, or dated implausibly. */
  marksBadLines: number;
  /** Marks read but never spooled (the last batches could not be). */
  marksDropped: number;
  /** Whether reading `<node>.marks` stopped at the node's limit (MAX_NODE_MARKS): later marks were not read. */
  marksCapped: boolean;
  droppedSensors: DroppedSensor[];
  fsyncs: number;
  cpuUserMs: number;
  cpuSystemMs: number;
  maxRssBytes: number;
  sources: Record<string, unknown>;
}

/** The counters the agent adds up from its sources' own stats: hwmon's cached repeats, every source's read errors. */
export function sourceCounters(sourceStats: Record<string, unknown>): { cachedRepeats: number; readErrors: number } {
  const hwmonStats = sourceStats.hwmon as { cachedRepeats?: number } | undefined;
  const readErrors = Object.values(sourceStats).reduce<number>((s, x) => s + (Number((x as { readErrors?: number }).readErrors) || 0), 0);
  return { cachedRepeats: hwmonStats?.cachedRepeats ?? 0, readErrors };
}
