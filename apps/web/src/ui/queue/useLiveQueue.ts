// The queue as GET /v1/queue returns it, kept live: refetched when the filters change, after a
// reconnect, and (debounced) after `run` events, which also move rows at once; `power` events are
// collected and applied twice a second. Marks the fetch for the benchmark (bench/queue-view.js).
import { useEffect, useMemo, useRef, useState } from 'react';
import { PERF } from '../../perf';
import { applyPower, applyRunEvent, debounce } from '../../queue';
import type { ErgEvent, Queue } from '../../types';
import { useApi, useEvents } from '../context';

const POWER_FLUSH_MS = 500;

type PowerEvent = Extract<ErgEvent, { type: 'power' }>['data'];

export function useLiveQueue(path: string): { queue: Queue | null; error: string | null } {
  const api = useApi();
  const [queue, setQueue] = useState<Queue | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);

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

  const refetch = useMemo(() => debounce(() => setTick((t) => t + 1), 1000), []);
  useEffect(() => () => refetch.cancel(), [refetch]);

  // Power figures arrive often: collect them and apply them twice a second.
  const pendingPower = useRef(new Map<string, PowerEvent>());
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

  return { queue, error };
}
