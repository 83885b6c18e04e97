// The home page: every cluster with its runs by state, and the queued and running runs across
// campaigns in one table that renders only the rows on screen (10,000 runs stay responsive).
// Filters live in the hash query. Live: `run` events move rows at once and refetch the queue
// (debounced); `power` events update the power column.
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { formatCount, formatElapsed, formatPower, NO_VALUE } from '../../format';
import { PERF } from '../../perf';
import {
  applyPower, applyRunEvent, debounce, elapsedSeconds, filtersFromQuery, FILTER_KEYS, queueCsv, queuePath, visibleRange, type QueueFilters,
} from '../../queue';
import { formatHash, hrefCampaign, hrefRun } from '../../route';
import { ACTIVE_STATES, type ErgEvent, type Queue, type QueueRun } from '../../types';
import { StateBar } from '../charts/StateBar';
import { useApi, useEvents, useNow } from '../context';
import { downloadCsv } from '../exporting';

const ROW_H = 30;
/** The most runs GET /v1/queue returns at once; beyond that it says `truncated`. */
const QUEUE_LIMIT = 5000;
const POWER_FLUSH_MS = 500;

export function QueueView({ query }: { query: Record<string, string> }) {
  const api = useApi();
  const filters = useMemo(() => filtersFromQuery(query), [query]);
  const path = queuePath(filters, QUEUE_LIMIT);
  const [queue, setQueue] = useState<Queue | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  const firstRender = useRef(true);
  const now = useNow(1000);

  useEffect(() => {
    const ctl = new AbortController();
    performance.mark(PERF.queueFetchStart);
    api.get<Queue>(path, { signal: ctl.signal }).then(
      (q) => {
        performance.mark(PERF.queueFetchEnd);
        performance.measure(PERF.queueFetch, PERF.queueFetchStart, PERF.queueFetchEnd);
        setQueue(q);
        setError(null);
      },
      (e: Error) => { if (!ctl.signal.aborted) setError(e.message); },
    );
    return () => ctl.abort();
  }, [api, path, tick]);

  // The first paint of the table with its rows (the benchmark's "time to first render").
  useLayoutEffect(() => {
    if (queue && firstRender.current) {
      firstRender.current = false;
      requestAnimationFrame(() => {
        performance.mark(PERF.queueTableRendered);
        performance.measure(PERF.queueFirstRender, PERF.queueFetchStart, PERF.queueTableRendered);
      });
    }
  }, [queue]);

  const refetch = useMemo(() => debounce(() => setTick((t) => t + 1), 1000), []);
  useEffect(() => () => refetch.cancel(), [refetch]);

  // Power figures arrive often: collect them and apply them twice a second.
  const pendingPower = useRef(new Map<string, Extract<ErgEvent, { type: 'power' }>['data']>());
  useEffect(() => {
    const t = setInterval(() => {
      if (pendingPower.current.size === 0) return;
      const batch = [...pendingPower.current.values()];
      pendingPower.current.clear();
      setQueue((q) => (q ? { ...q, runs: batch.reduce((runs, p) => applyPower(runs, p), q.runs) } : q));
    }, POWER_FLUSH_MS);
    return () => clearInterval(t);
  }, []);

  useEvents(
    (e) => {
      if (e.type === 'run') {
        setQueue((q) => (q ? applyRunEvent(q, e.data) : q));
        refetch.call();
      } else if (e.type === 'power') {
        pendingPower.current.set(e.data.runId, e.data);
      }
    },
    () => setTick((t) => t + 1),
  );

  const setFilter = (key: keyof QueueFilters, value: string) => {
    const next: Record<string, string> = {};
    for (const k of FILTER_KEYS) if (filters[k]) next[k] = filters[k]!;
    if (value) next[key] = value; else delete next[key];
    location.hash = formatHash({ page: 'queue', query: next });
  };

  const campaigns = useMemo(() => {
    const m = new Map<string, string>();
    for (const r of queue?.runs ?? []) m.set(r.campaignId, r.campaignName);
    if (filters.campaign && !m.has(filters.campaign)) m.set(filters.campaign, filters.campaign);
    return [...m.entries()].sort((a, b) => a[1].localeCompare(b[1]));
  }, [queue, filters.campaign]);

  return (
    <section aria-labelledby="queue-title">
      <h1 id="queue-title">Queue</h1>
      {error && <p className="error" role="alert">{error}</p>}
      <div className="clusters" data-testid="clusters">
        {(queue?.clusters ?? []).map((c) => (
          <article key={c.name} className="cluster" data-cluster={c.name}>
            <h2>{c.name}</h2>
            <StateBar counts={c.runCounts} label={`runs on ${c.name} by state`} />
            <p className="small">
              {c.lastError ? <span className="error">unreachable: {c.lastError}</span> : c.lastContactAt ? `last contact ${new Date(c.lastContactAt).toLocaleTimeString()}` : 'not contacted yet'}
            </p>
          </article>
        ))}
        {queue && queue.clusters.length === 0 && <p>No clusters registered.</p>}
      </div>
      <form className="filters" aria-label="filters" onSubmit={(e) => e.preventDefault()}>
        <label>Cluster{' '}
          <select value={filters.cluster ?? ''} onChange={(e) => setFilter('cluster', e.target.value)}>
            <option value="">all</option>
            {(queue?.clusters ?? []).map((c) => <option key={c.name} value={c.name}>{c.name}</option>)}
          </select>
        </label>
        <label>Campaign{' '}
          <select value={filters.campaign ?? ''} onChange={(e) => setFilter('campaign', e.target.value)}>
            <option value="">all</option>
            {campaigns.map(([id, name]) => <option key={id} value={id}>{name} ({id.slice(0, 8)})</option>)}
          </select>
        </label>
        <label>State{' '}
          <select value={filters.state ?? ''} onChange={(e) => setFilter('state', e.target.value)}>
            <option value="">queued and running</option>
            {ACTIVE_STATES.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </label>
        <OwnerFilter value={filters.owner ?? ''} onChange={(v) => setFilter('owner', v)} />
        <button type="button" onClick={() => queue && downloadCsv(queueCsv(queue.runs, Date.now()), 'erg-queue.csv')} disabled={!queue}>Export CSV</button>
      </form>
      <p className="small" data-testid="queue-total">
        {queue ? `${formatCount(queue.runs.length)} of ${formatCount(queue.total)} runs shown${queue.truncated ? ' (truncated: narrow the filters)' : ''}` : 'Loading…'}
      </p>
      {queue && <RunTable runs={queue.runs} now={now} />}
    </section>
  );
}

function OwnerFilter({ value, onChange }: { value: string; onChange: (v: string) => void }) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  return (
    <label>Owner{' '}
      <input value={text} onChange={(e) => setText(e.target.value)} onBlur={() => text !== value && onChange(text.trim())}
        onKeyDown={(e) => { if (e.key === 'Enter') onChange(text.trim()); }} placeholder="any" size={10} />
    </label>
  );
}

const COLUMNS = ['Campaign', 'Configuration', 'Rep.', 'State', 'Slurm job', 'Partition', 'Nodes', 'In queue / running', 'Power'];

/** The runs table, rendering only the rows in view (plus a margin) between two spacer rows. */
function RunTable({ runs, now }: { runs: QueueRun[]; now: number }) {
  const box = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(600);
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    setHeight(el.clientHeight);
    const ro = new ResizeObserver(() => setHeight(el.clientHeight));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  const [first, last] = visibleRange(scrollTop, height, ROW_H, runs.length);
  return (
    <div className="tablebox" ref={box} onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)} tabIndex={0} aria-label="queued and running runs">
      <table className="runs" data-testid="queue-table" aria-rowcount={runs.length + 1}>
        <thead>
          <tr>{COLUMNS.map((c) => <th key={c} scope="col">{c}</th>)}</tr>
        </thead>
        <tbody>
          {first > 0 && <tr aria-hidden="true" style={{ height: first * ROW_H }} />}
          {runs.slice(first, last).map((r, i) => (
            <tr key={r.id} data-run={r.id} data-state={r.state} aria-rowindex={first + i + 2} style={{ height: ROW_H }}>
              <td><a href={hrefCampaign(r.campaignId)}>{r.campaignName}</a></td>
              <td><a href={hrefRun(r.id)} title={`run ${r.id}`}>{r.configurationKey}</a></td>
              <td className="num">{r.repetition}</td>
              <td><span className={`state state-${r.state}`}>{r.state}</span>{r.reason && r.state !== 'running' ? <span className="small"> ({r.reason})</span> : null}</td>
              <td className="num">{r.slurmJobId ?? NO_VALUE}</td>
              <td>{r.partition ?? NO_VALUE}</td>
              <td className="num" title={r.nodeList ?? undefined}>{r.nodes ?? NO_VALUE}</td>
              <td className="num">{formatElapsed(elapsedSeconds(r, now))}</td>
              <td className="num" data-testid="power">{formatPower(r.powerW)}</td>
            </tr>
          ))}
          {last < runs.length && <tr aria-hidden="true" style={{ height: (runs.length - last) * ROW_H }} />}
        </tbody>
      </table>
      {runs.length === 0 && <p className="empty">No queued or running runs.</p>}
    </div>
  );
}
