// One run: power over time per sensor (appended live from `power` events while it runs), the
// workload window and idle baseline as bands, the energy figures (409 until ready), the stdout
// and stderr tails and the exact job script.
import { useCallback, useEffect, useRef, useState } from 'react';
import { formatEdp, formatEnergy, formatPercent, formatPower, formatTime, NO_VALUE, toMs } from '../../format';
import { hrefCampaign } from '../../route';
import { appendSeries, lastTime, powerSeries, type Band } from '../../series';
import type { Run, RunEnergy, RunLogs, Telemetry, TelemetrySeries } from '../../types';
import { ACTIVE_STATES } from '../../types';
import { ApiError } from '../api';
import { PowerChart } from '../charts/PowerChart';
import { useApi, useEvents, useGet } from '../context';

const MAX_POINTS = 2000;
const APPEND_EVERY_MS = 1000;

function bandsOf(run: Run | null, lastT: number | null): Band[] {
  if (!run) return [];
  const bands: Band[] = [];
  const idleStart = toMs(run.idleStart), idleEnd = toMs(run.idleEnd);
  if (idleStart !== null && idleEnd !== null) bands.push({ label: 'idle baseline', fromMs: idleStart, toMs: idleEnd });
  const ws = toMs(run.workloadStart), we = toMs(run.workloadEnd);
  if (ws !== null && (we !== null || lastT !== null)) bands.push({ label: we === null ? 'workload (running)' : 'workload', fromMs: ws, toMs: we ?? lastT! });
  return bands;
}

export function RunPage({ id }: { id: string }) {
  const api = useApi();
  const run = useGet<Run>(`/v1/runs/${id}`);
  const logs = useGet<RunLogs>(`/v1/runs/${id}/logs`);
  const [series, setSeries] = useState<TelemetrySeries[] | null>(null);
  const [telemetryError, setTelemetryError] = useState<string | null>(null);
  const [energy, setEnergy] = useState<{ figures: RunEnergy | null; note: string | null }>({ figures: null, note: null });
  const seriesRef = useRef<TelemetrySeries[] | null>(null);
  seriesRef.current = series;

  const loadAll = useCallback(async () => {
    try {
      const t = await api.get<Telemetry>(`/v1/runs/${id}/telemetry?maxPoints=${MAX_POINTS}`);
      setSeries(powerSeries(t.series));
      setTelemetryError(null);
    } catch (e) {
      setTelemetryError((e as Error).message);
    }
  }, [api, id]);

  const loadEnergy = useCallback(async () => {
    try {
      setEnergy({ figures: await api.get<RunEnergy>(`/v1/runs/${id}/energy`), note: null });
    } catch (e) {
      const why = e instanceof ApiError && e.status === 409 ? `Not ready yet: ${e.message}.` : (e as Error).message;
      setEnergy({ figures: null, note: why });
    }
  }, [api, id]);

  useEffect(() => { void loadAll(); void loadEnergy(); }, [loadAll, loadEnergy]);

  // New points: fetch from the last timestamp shown, at most once a second while events arrive.
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

  useEvents(
    (e) => {
      if (e.type === 'power' && e.data.runId === id) append();
      if (e.type === 'run' && e.data.runId === id) {
        run.reload();
        logs.reload();
        void loadEnergy();
        append();
      }
    },
    () => { run.reload(); void loadAll(); void loadEnergy(); },
  );

  const r = run.data;
  if (run.error) return <p className="error" role="alert">{run.error.message}</p>;
  if (!r) return <p>Loading…</p>;
  const name = `erg-run-${r.id.slice(0, 8)}`;
  const active = ACTIVE_STATES.includes(r.state);
  const bands = bandsOf(r, series ? lastTime(series) : null);
  const f = energy.figures;

  return (
    <article aria-labelledby="run-title">
      <h1 id="run-title">Run {r.configurationKey} #{r.repetition}</h1>
      <p className="small">
        <code>{r.id}</code> · campaign <a href={hrefCampaign(r.campaignId)}>{r.campaignName ?? r.campaignId}</a> · state <b data-testid="run-state">{r.state}</b>
        {r.reason ? ` (${r.reason})` : ''} · Slurm job {r.slurmJobId ?? NO_VALUE} · partition {r.partition ?? NO_VALUE} · nodes {r.nodeList ?? NO_VALUE}
        {r.exitCode !== null ? ` · exit code ${r.exitCode}` : ''}
      </p>
      {r.warnings.length > 0 && (
        // What erg could not do in full for this run (a metric regex out of its budget, a log read in part).
        <ul className="warnings" role="note" aria-label="warnings" data-testid="run-warnings">
          {r.warnings.map((w) => <li key={w}>{w}</li>)}
        </ul>
      )}
      <section aria-labelledby="power-title">
        <h2 id="power-title">Power {active && <span className="small">(live)</span>}</h2>
        {telemetryError && <p className="error">{telemetryError}</p>}
        {series && series.length > 0 ? <PowerChart series={series} bands={bands} name={name} /> : series ? <p data-testid="no-telemetry">No power samples yet.</p> : <p>Loading…</p>}
      </section>
      <section aria-labelledby="energy-title">
        <h2 id="energy-title">Energy</h2>
        {f ? (
          <dl className="figures" data-testid="energy-figures">
            <div><dt>Time</dt><dd>{formatTime(f.timeS)}</dd></div>
            <div><dt>Energy</dt><dd>{formatEnergy(f.energyJ)}</dd></div>
            <div><dt>Average power</dt><dd>{formatPower(f.avgPowerW)}</dd></div>
            <div><dt>EDP</dt><dd>{formatEdp(f.edpJs)}</dd></div>
            <div><dt>Method</dt><dd>{f.method}{f.method === 'model' ? ' (modelled: no power sensor)' : ''}</dd></div>
            <div><dt>Coverage</dt><dd>{formatPercent(f.coverage)}</dd></div>
            {Object.entries(f.components).map(([k, v]) => <div key={k}><dt>{k}</dt><dd>{formatEnergy(v)}</dd></div>)}
            {f.idle && <div><dt>Idle baseline</dt><dd>{formatPower(f.idle.powerW)}; net {formatEnergy(f.idle.netEnergyJ)}</dd></div>}
          </dl>
        ) : <p data-testid="energy-note">{energy.note ?? 'Loading…'}</p>}
        {f?.warnings && f.warnings.length > 0 && <ul className="warnings">{f.warnings.map((w) => <li key={w}>{w}</li>)}</ul>}
      </section>
      <section aria-labelledby="logs-title">
        <h2 id="logs-title">Output {logs.data && <span className="small">({logs.data.source}{logs.data.truncated ? ', tail' : ''})</span>}</h2>
        <button type="button" onClick={() => logs.reload()}>Refresh</button>
        {logs.error && <p className="error">{logs.error.message}</p>}
        <div className="logs">
          <div><h3>stdout</h3><pre data-testid="stdout">{logs.data?.stdout || '(empty)'}</pre></div>
          <div><h3>stderr</h3><pre data-testid="stderr">{logs.data?.stderr || '(empty)'}</pre></div>
        </div>
      </section>
      <section aria-labelledby="script-title">
        <h2 id="script-title">Job script</h2>
        {r.jobScript ? <pre className="script" data-testid="job-script">{r.jobScript}</pre> : <p>Not rendered yet.</p>}
      </section>
    </article>
  );
}
