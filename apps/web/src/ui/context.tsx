// What every page needs: the API (with the token), the live events (one stream for the whole app,
// pages subscribe with a filter) and a clock that ticks every second for elapsed times.
import { createContext, useCallback, useContext, useEffect, useRef, useState } from 'react';
import type { ErgEvent } from '../types';
import type { Api } from './api';

export interface Live {
  /** Subscribes to events; returns the unsubscribe. */
  subscribe(fn: (e: ErgEvent) => void): () => void;
  /** Subscribes to resyncs (after the stream reconnected); returns the unsubscribe. */
  onResync(fn: () => void): () => void;
}

export const ApiContext = createContext<Api | null>(null);
export const LiveContext = createContext<Live | null>(null);

export function useApi(): Api {
  const api = useContext(ApiContext);
  if (!api) throw new Error('useApi outside the signed-in app');
  return api;
}

export function useLive(): Live {
  const live = useContext(LiveContext);
  if (!live) throw new Error('useLive outside the signed-in app');
  return live;
}

/** Calls `fn` for every event (latest `fn` wins without resubscribing) and `resync` after reconnects. */
export function useEvents(fn: (e: ErgEvent) => void, resync?: () => void): void {
  const live = useLive();
  const fnRef = useRef(fn);
  const resyncRef = useRef(resync);
  fnRef.current = fn;
  resyncRef.current = resync;
  useEffect(() => {
    const a = live.subscribe((e) => fnRef.current(e));
    const b = live.onResync(() => resyncRef.current?.());
    return () => { a(); b(); };
  }, [live]);
}

/** Date.now(), refreshed every `ms`. */
export function useNow(ms = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}

/** A GET that reloads when `path` changes or `reload()` is called; keeps the last data while reloading. */
export function useGet<T>(path: string | null): { data: T | null; error: Error | null; loading: boolean; reload: () => void; setData: (f: (d: T | null) => T | null) => void } {
  const api = useApi();
  const [data, setDataState] = useState<T | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [loading, setLoading] = useState(false);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    if (path === null) return;
    const ctl = new AbortController();
    setLoading(true);
    api.get<T>(path, { signal: ctl.signal }).then(
      (d) => { setDataState(d); setError(null); setLoading(false); },
      (e: Error) => { if (!ctl.signal.aborted) { setError(e); setLoading(false); } },
    );
    return () => ctl.abort();
  }, [api, path, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload, setData: setDataState };
}
