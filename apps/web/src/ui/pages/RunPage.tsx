// One run: power over time per sensor (appended live from `power` events while it runs), the
// workload window and idle baseline as bands and, once it has ended, its phases as bands per node;
// its nodes' provenance and the power state the node helper set, the energy figures (409 until
// ready) with the state in force, flags and Slurm's figure, its carbon and cost where its cluster
// has those settings, the energy per phase and per step (or how to mark phases), the bytes it moved
// per kind of link (where a node had such sensors), the stdout and stderr tails and the exact job
// script.
import { useMemo } from 'react';
import { NO_VALUE, toMs } from '../../format';
import { phaseBands, phasePalette, runPhaseNames } from '../../phases';
import { hrefCampaign } from '../../route';
import { lastTime, type Band } from '../../series';
import type { Run, RunLogs } from '../../types';
import { isUnfinishedRunState } from '../../types';
import { PowerChart } from '../charts/PowerChart';
import { useEvents, useGet } from '../context';
import { EnergyFigures } from '../run/EnergyFigures';
import { PhaseEnergy } from '../run/PhaseEnergy';
import { RunCarbonCost } from '../run/RunCarbonCost';
import { RunMovement } from '../run/RunMovement';
import { RunNodes } from '../run/RunNodes';
import { RunCooldownSection } from '../run/RunCooldown';
import { RunOutput } from '../run/RunOutput';
import { useRunEnergy } from '../run/useRunEnergy';
import { useRunPhases } from '../run/useRunPhases';
import { useRunPower } from '../run/useRunPower';

function bandsOf(run: Run | null, lastT: number | null): Band[] {
  if (!run) return [];
  const bands: Band[] = [];
  // The cooldown comes first: the wait for the nodes to be back near idle, before the baseline.
  if (run.cooldown?.window) bands.push({ label: 'cooldown', fromMs: run.cooldown.window.startMs, toMs: run.cooldown.window.endMs });
  const idleStart = toMs(run.idleStart), idleEnd = toMs(run.idleEnd);
  if (idleStart !== null && idleEnd !== null) bands.push({ label: 'idle baseline', fromMs: idleStart, toMs: idleEnd });
  const ws = toMs(run.workloadStart), we = toMs(run.workloadEnd);
  if (ws !== null && (we !== null || lastT !== null)) bands.push({ label: we === null ? 'workload (running)' : 'workload', fromMs: ws, toMs: we ?? lastT! });
  return bands;
}

export function RunPage({ id }: { id: string }) {
  const run = useGet<Run>(`/v1/runs/${id}`);
  const logs = useGet<RunLogs>(`/v1/runs/${id}/logs`);
  const power = useRunPower(id);
  const energy = useRunEnergy(id);
  const phases = useRunPhases(id);
  // One pattern per phase name for the whole page: bands, legend and table.
  const palette = useMemo(() => phasePalette(phases.view ? runPhaseNames(phases.view) : []), [phases.view]);
  const bandsOfPhases = useMemo(() => (phases.view ? phaseBands(phases.view, palette) : null), [phases.view, palette]);

  useEvents(
    (e) => {
      if (e.type === 'power' && e.data.runId === id) power.append();
      if (e.type === 'run' && e.data.runId === id) {
        run.reload();
        logs.reload();
        energy.reload();
        phases.reload();
        power.append();
      }
    },
    () => { run.reload(); power.reload(); energy.reload(); phases.reload(); },
  );

  const r = run.data;
  if (run.error) return <p className="error" role="alert">{run.error.message}</p>;
  if (!r) return <p>Loading…</p>;
  const name = `erg-run-${r.id.slice(0, 8)}`;
  const active = isUnfinishedRunState(r.state);
  const series = power.series;
  const bands = bandsOf(r, series ? lastTime(series) : null);

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
        {power.error && <p className="error">{power.error}</p>}
        {series && series.length > 0 ? <PowerChart series={series} bands={bands} phases={bandsOfPhases} name={name} /> : series ? <p data-testid="no-telemetry">No power samples yet.</p> : <p>Loading…</p>}
      </section>
      <RunNodes run={r} />
      <RunCooldownSection run={r} />
      <section aria-labelledby="energy-title">
        <h2 id="energy-title">Energy</h2>
        <EnergyFigures figures={energy.figures} note={energy.note} />
      </section>
      {(energy.figures?.carbon || energy.figures?.cost) && (
        <section aria-labelledby="carbon-cost-title">
          <h2 id="carbon-cost-title">Carbon and cost</h2>
          <RunCarbonCost figures={energy.figures} />
        </section>
      )}
      <section aria-labelledby="phases-title">
        <h2 id="phases-title">Energy by phase</h2>
        <PhaseEnergy view={phases.view} note={phases.note} palette={palette} name={name} shown={energy.figures?.warnings ?? []} />
      </section>
      {energy.figures && (
        <section aria-labelledby="movement-title">
          <h2 id="movement-title">Data movement</h2>
          {energy.figures.dataMovement
            ? <RunMovement movement={energy.figures.dataMovement} />
            : <p className="small" data-testid="no-movement">No node of this run had a data-movement sensor (PCIe, NVLink, NVLink-C2C or host-memory traffic).</p>}
        </section>
      )}
      <RunOutput logs={logs} />
      <section aria-labelledby="script-title">
        <h2 id="script-title">Job script</h2>
        {r.jobScript ? <pre className="script" data-testid="job-script">{r.jobScript}</pre> : <p>Not rendered yet.</p>}
      </section>
    </article>
  );
}
