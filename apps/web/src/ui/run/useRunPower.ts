// A run's power series per sensor: loaded whole (down-sampled to MAX_POINTS), then extended from
// the last timestamp shown, at most once a second while `power` events for the run arrive.
import { useCallback, useEffect, useRef, useState } from 'react';
import { appendSeries, lastTime, powerSeries } from '../../series';
import type { Telemetry, TelemetrySeries } from '../../types';
import { useApi } from '../context';

const MAX_POINTS = 2000;
const APPEND_EVERY_MS = 1000;

export interface RunPower {
  series: TelemetrySeries[] | null;
  error: string | null;
  /** Fetches everything again (after a reconnect: events in between were missed). */
  reload: () => void;
  /** Asks for the points after the last one shown (throttled). */
  append: () => void;
}

export function useRunPower(id: string): RunPower {
  const api = useApi();
  const [series, setSeries] = useState<TelemetrySeries[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const seriesRef = useRef<TelemetrySeries[] | null>(null);
  seriesRef.current = series;

  const loadAll = useCallback(async () => {
    try {
      const t = await api.get<Telemetry>(`/v1/runs/${id}/telemetry?maxPoints=${MAX_POINTS}`);
      setSeries(powerSeries(t.series));
      setError(null);
    } catch (e) {
      setError((e as Error).message);
    }
  }, [api, id]);
  useEffect(() => { void loadAll(); }, [loadAll]);

  const appendPending = useRef(false);
  const appendTimer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const append = useCallback(() => {
    if (appendTimer.current) { appendPending.current = true; return; }
    appendTimer.current = setTimeout(async () => {
      const from = lastTime(seriesRef.current ?? []);
      try {
        const t = await api.get<Telemetry>(`/v1/runs/${id}/telemetry?maxPoints=${MAX_POINTS}${from === null ? '' : `&from=${from}`}`);
        setSeries((cur) => appendSeries(cur ?? [], powerSeries(t.series)));
      } catch {
        // the next event tries again
      }
      appendTimer.current = null;
      if (appendPending.current) { appendPending.current = false; append(); }
    }, APPEND_EVERY_MS);
  }, [api, id]);
  useEffect(() => () => { if (appendTimer.current) clearTimeout(appendTimer.current); }, []);

  return { series, error, reload: () => void loadAll(), append };
}
