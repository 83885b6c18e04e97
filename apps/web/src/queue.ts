// The queue view's model: its filters, the request they make, how live events change the rows
// without a refetch, the per-cluster counts, which rows are on screen (the table renders only
// those, so 10,000 runs stay responsive) and the table's CSV.
import { renderCsv } from './csv';
import { toMs } from './format';
import type { ErgEvent, Queue, QueueCluster, QueueRun, RunState } from './types';
import { UNFINISHED_RUN_STATES } from './types';

export interface QueueFilters {
  cluster?: string;
  campaign?: string;
  state?: string;
  owner?: string;
}

export const FILTER_KEYS = ['cluster', 'campaign', 'state', 'owner'] as const;

/** The filters in a route query (unknown keys dropped). */
export function filtersFromQuery(query: Record<string, string>): QueueFilters {
  const f: QueueFilters = {};
  for (const k of FILTER_KEYS) if (query[k]) f[k] = query[k];
  return f;
}

/** `/v1/queue?…` for these filters. */
export function queuePath(filters: QueueFilters, limit?: number): string {
  const qs = new URLSearchParams();
  for (const k of FILTER_KEYS) if (filters[k]) qs.set(k, filters[k]!);
  if (limit !== undefined) qs.set('limit', String(limit));
  const s = qs.toString();
  return `/v1/queue${s ? `?${s}` : ''}`;
}

/** The states the table lists: queued and running runs (and the steps around them). */
export const TABLE_STATES: readonly RunState[] = UNFINISHED_RUN_STATES;

/**
 * The rows after a `power` event: the run's power figure replaced. Returns the same array when the
 * run is not in it (so React skips a render).
 */
export function applyPower(runs: QueueRun[], event: Extract<ErgEvent, { type: 'power' }>['data']): QueueRun[] {
  const i = runs.findIndex((r) => r.id === event.runId);
  if (i < 0 || runs[i]!.powerW === event.w) return runs;
  const out = runs.slice();
  out[i] = { ...runs[i]!, powerW: event.w };
  return out;
}

/**
 * The rows and cluster counts after a `run` event: the run's state moves at once (its row leaves
 * the table when it finished), and the counts of its cluster shift. A run not yet listed is left to
 * the debounced refetch.
 */
export function applyRunEvent(queue: Queue, event: Extract<ErgEvent, { type: 'run' }>['data']): Queue {
  let runs = queue.runs;
  const i = runs.findIndex((r) => r.id === event.runId);
  if (i >= 0) {
    runs = runs.slice();
    const to = event.to;
    if (isActive(to)) {
      const started = to === 'running' && !runs[i]!.startedAt ? event.at : runs[i]!.startedAt;
      runs[i] = { ...runs[i]!, state: to, startedAt: started };
    } else {
      runs.splice(i, 1);
    }
  }
  const clusters = queue.clusters.map((c): QueueCluster => {
    if (c.name !== event.cluster) return c;
    const counts = { ...c.runCounts };
    if (event.from && counts[event.from]) {
      counts[event.from] = counts[event.from]! - 1;
      if (counts[event.from] === 0) delete counts[event.from];
    }
    counts[event.to] = (counts[event.to] ?? 0) + 1;
    return { ...c, runCounts: counts };
  });
  return { ...queue, runs, clusters };
}

function isActive(state: RunState): state is QueueRun['state'] {
  return TABLE_STATES.includes(state);
}

/** Seconds in queue (queued: since submission, or creation) or running (since start). */
export function elapsedSeconds(run: QueueRun, nowMs: number): number | null {
  const since = run.state === 'running' || run.state === 'completing' ? run.startedAt : (run.submittedAt ?? run.createdAt);
  const ms = toMs(since);
  return ms === null ? null : Math.max(0, (nowMs - ms) / 1000);
}

/** Rows `[first, last)` of a list of `count` rows of `rowHeight` px seen through a viewport, with `overscan` rows either side. */
export function visibleRange(scrollTop: number, viewportHeight: number, rowHeight: number, count: number, overscan = 10): [number, number] {
  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(count, Math.ceil((scrollTop + viewportHeight) / rowHeight) + overscan);
  return [first, Math.max(first, last)];
}

/** Per cluster, the counts in a fixed state order (only non-zero), for the summary cards. */
export function orderedCounts(counts: Record<string, number>, order: readonly string[]): [string, number][] {
  const known = order.filter((s) => (counts[s] ?? 0) > 0).map((s): [string, number] => [s, counts[s]!]);
  const other = Object.entries(counts).filter(([s, n]) => !order.includes(s) && n > 0);
  return [...known, ...other];
}

/** A number of whole seconds, kept a number: a CSV cell of text beginning with `-` would be neutralised as a formula. */
function roundedOrNull(x: number | null): number | null {
  return x === null ? null : Math.round(x);
}

/** The queue table as CSV (raw values; elapsed seconds at `nowMs`). */
export function queueCsv(runs: readonly QueueRun[], nowMs: number): string {
  const header = ['run_id', 'campaign_id', 'campaign', 'owner', 'cluster', 'configuration', 'repetition', 'state', 'slurm_job_id', 'partition', 'nodes', 'node_list', 'elapsed_s', 'power_w', 'reason'];
  return renderCsv([
    header,
    ...runs.map((r) => [
      r.id, r.campaignId, r.campaignName, r.owner, r.cluster, r.configurationKey, r.repetition, r.state, r.slurmJobId, r.partition, r.nodes, r.nodeList,
      roundedOrNull(elapsedSeconds(r, nowMs)), r.powerW, r.reason,
    ]),
  ]);
}

/**
 * Calls `fn` at most once per `waitMs`, after the last call in a burst (trailing debounce).
 * Returns the debounced function and a cancel.
 */
export function debounce(fn: () => void, waitMs: number, timers: { set: typeof setTimeout; clear: typeof clearTimeout } = { set: setTimeout, clear: clearTimeout }): { call: () => void; cancel: () => void } {
  let handle: ReturnType<typeof setTimeout> | null = null;
  return {
    call: () => {
      if (handle !== null) timers.clear(handle);
      handle = timers.set(() => { handle = null; fn(); }, waitMs);
    },
    cancel: () => { if (handle !== null) timers.clear(handle); handle = null; },
  };
}
