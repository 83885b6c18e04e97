// A campaign: progress by state, the results table (the same figures and P/T/E/D/C/M marks as
// GET /v1/campaigns/:id/results and `erg results`, with carbon and cost per run where the runs
// have them, and each configuration's place on the Pareto front under uncertainty), what the
// results claim with their ties and intervals, the node effects, the Pareto plot on two objectives of choice, energy by component, energy by phase
// with where the energy went between the fastest and the most frugal configuration, data
// movement against energy, and the parameter effects; for an adaptive campaign, its decisions.
// Live while running: `run` events of this campaign refetch (debounced).
import { useEffect, useMemo, useState } from 'react';
import { formatCount, formatEdp, formatEnergy, formatPercent, formatPower, formatTime, NO_VALUE } from '../../format';
import { debounce } from '../../queue';
import { footprintColumns, footprintNote } from '../../footprint';
import {
  differingMachines, entryId, flaggedConfigurations, halfWidth, leftOutText, markLegend, markLetters, marksWithFootprintOf, measuredConfigurations, parameterNames, parameterText,
  confidenceText, paretoLegend, paretoStatusText, powerNoteLine, publishableLine, resultRows, resultsCsv, runOrderLabel, startedByLabel, UNTRIED,
} from '../../results';
import { flagLabel } from '../../run-info';
import { hrefRun } from '../../route';
import type { CampaignDecisions, CampaignDetail, CampaignResults, RunSummary, Summary } from '../../types';
import { TERMINAL_RUN_STATES } from '../../types';
import { EffectsPlot } from '../charts/EffectsPlot';
import { PhaseComparisonView, PhaseStack } from '../charts/PhaseStack';
import { StackedBar } from '../charts/StackedBar';
import { StateBar } from '../charts/StateBar';
import { DataMovementSection } from '../campaign/DataMovement';
import { DecisionsSection } from '../campaign/Decisions';
import { isAdaptive } from '../../decisions';
import { ClaimsSection } from '../campaign/Claims';
import { NodeEffectsSection } from '../campaign/NodeEffects';
import { ParetoSection } from '../campaign/ParetoSection';
import { useEvents, useGet } from '../context';
import { downloadCsv } from '../exporting';
import { renderCsv } from '../../csv';

const pm = (s: Summary, f: (x: number) => string) => {
  const h = halfWidth(s);
  return h === null ? '' : ` ± ${f(h)}`;
};

export function CampaignPage({ id }: { id: string }) {
  const campaign = useGet<CampaignDetail>(`/v1/campaigns/${id}`);
  const results = useGet<CampaignResults>(`/v1/campaigns/${id}/results`);
  const runs = useGet<{ items: RunSummary[]; total: number }>(`/v1/campaigns/${id}/runs?limit=10000`);
  // Only an adaptive campaign has decisions to show (its spec says so once the campaign is loaded).
  const adaptive = isAdaptive(campaign.data?.spec);
  const decisions = useGet<CampaignDecisions>(adaptive ? `/v1/campaigns/${id}/decisions` : null);
  const refresh = useMemo(
    () => debounce(() => { campaign.reload(); results.reload(); runs.reload(); decisions.reload(); }, 800),
    [campaign.reload, results.reload, runs.reload, decisions.reload],
  );
  useEffect(() => () => refresh.cancel(), [refresh]);
  useEvents((e) => { if (e.type === 'run' && e.data.campaignId === id) refresh.call(); }, () => refresh.call());

  const c = campaign.data;
  if (campaign.error) return <p className="error" role="alert">{campaign.error.message}</p>;
  if (!c) return <p>Loading…</p>;
  const r = results.data;
  const name = `erg-${c.name}-${c.id.slice(0, 8)}`;
  const finished = Object.entries(c.runCounts).filter(([s]) => (TERMINAL_RUN_STATES as readonly string[]).includes(s)).reduce((a, [, n]) => a + n, 0);

  return (
    <article aria-labelledby="campaign-title">
      <h1 id="campaign-title">Campaign {c.name}</h1>
      <p className="small">
        <code>{c.id}</code> · cluster {c.cluster ?? 'none (import)'} · started by <span data-testid="campaign-creator">{c.createdBy ? startedByLabel(c.createdBy) : (c.owner ?? NO_VALUE)}</span> · created {new Date(c.createdAt).toLocaleString()} · state <b data-testid="campaign-state">{c.state}</b>
        {c.design && <> · run order <span data-testid="run-order">{runOrderLabel(c.design)}</span></>}
      </p>
      <p className="toolbar no-print">
        {/* The page's print styles (styles.css, @media print) lay it out as the study report; `erg report` writes the same as one file. */}
        <button type="button" data-testid="print" onClick={() => window.print()}>Print / PDF</button>
      </p>
      <section aria-labelledby="progress-title">
        <h2 id="progress-title">Progress: {formatCount(finished)} of {formatCount(c.totalRuns)} runs finished</h2>
        <StateBar counts={c.runCounts} label="runs by state" width={800} />
      </section>
      {decisions.data && <DecisionsSection decisions={decisions.data} />}
      <section aria-labelledby="results-title">
        <h2 id="results-title">Results</h2>
        {r ? <ResultsTable results={r} name={name} /> : results.error ? <p className="error">{results.error.message}</p> : <p>Loading…</p>}
      </section>
      {r && <ClaimsSection results={r} />}
      {r && <NodeEffectsSection results={r} />}
      {r && (
        <div className="charts">
          <ParetoSection campaignId={id} results={r} name={name} />
          <section aria-labelledby="components-title"><h2 id="components-title">Energy by component</h2><StackedBar configurations={measuredConfigurations(r)} name={name} /></section>
        </div>
      )}
      {r && <CampaignPhasesSection results={r} name={name} />}
      {r && <DataMovementSection results={r} name={name} />}
      {r && (
        <section aria-labelledby="effects-title">
          <h2 id="effects-title">Parameter effects</h2>
          <EffectsPlot configurations={measuredConfigurations(r)} name={name} />
        </section>
      )}
      <section aria-labelledby="runs-title">
        <h2 id="runs-title">Runs</h2>
        {runs.data && <RunsTable runs={runs.data.items} name={name} />}
      </section>
    </article>
  );
}

function CampaignPhasesSection({ results: r, name }: { results: CampaignResults; name: string }) {
  const phases = r.phases;
  if (!phases) {
    return (
      <section aria-labelledby="phases-title">
        <h2 id="phases-title">Energy by phase</h2>
        <p className="small" data-testid="no-phases">No run of this campaign marked phases (a run&apos;s page says how: erg-mark, <code>import erg</code> or the spec&apos;s <code>phases</code>).</p>
      </section>
    );
  }
  return (
    <div className="charts">
      <section aria-labelledby="phases-title">
        <h2 id="phases-title">Energy by phase</h2>
        <PhaseStack phases={phases} order={r.configurations.map((c) => c.key)} name={name} />
      </section>
      <section aria-labelledby="comparison-title">
        <h2 id="comparison-title">Where did the energy go?</h2>
        {phases.comparison
          ? <PhaseComparisonView phases={phases} comparison={phases.comparison} />
          : <p data-testid="comparison-summary">No comparison yet: the campaign has no fastest and least-energy configuration with runs that marked phases.</p>}
      </section>
    </div>
  );
}

function ResultsTable({ results, name }: { results: CampaignResults; name: string }) {
  const [showAll, setShowAll] = useState(false);
  const { rows, folded } = resultRows(results, showAll);
  const names = parameterNames(results.configurations);
  const measured = new Set(measuredConfigurations(results).map(entryId));
  const flagged = flaggedConfigurations(results.configurations, flagLabel);
  const differing = differingMachines(results.configurations);
  const power = powerNoteLine(results.power);
  const publishable = publishableLine(results.validity);
  const footprint = footprintColumns(results);
  const footprintText = footprintNote(results);
  const legend = markLegend(results);
  const claims = results.claims ?? null;
  return (
    <>
      <div className="toolbar">
        <button type="button" onClick={() => downloadCsv(resultsCsv(results), `${name}-results.csv`)}>Export results CSV</button>
      </div>
      <div className="tablewrap">
        <table className="results" data-testid="results-table">
          <thead>
            <tr>
              <th scope="col" title={legend}>Marks</th>
              {names.map((n) => <th key={n} scope="col">{n}</th>)}
              <th scope="col">n</th><th scope="col">Time (± 95 %)</th><th scope="col">Energy (± 95 %)</th><th scope="col">Avg power (± 95 %)</th><th scope="col">EDP (± 95 %)</th>
              {footprint.map((f) => <th key={f.key} scope="col" title={f.title} data-column={f.key}>{f.header}</th>)}
              {claims && <th scope="col" title={paretoLegend(claims)}>Pareto ({confidenceText(claims.confidence)})</th>}
            </tr>
          </thead>
          <tbody>
            {rows.map((c) => (
              <tr key={entryId(c)} data-key={c.key}>
                <td className="marks">{markLetters(marksWithFootprintOf(results, c))}</td>
                {names.map((n) => <td key={n} className="num">{parameterText(c.parameters[n])}</td>)}
                <td className="num">{c.n}</td>
                {measured.has(entryId(c)) ? (
                  <>
                    <td className="num">{formatTime(c.timeS.mean)}{pm(c.timeS, formatTime)}</td>
                    <td className="num">{formatEnergy(c.energyJ.mean)}{pm(c.energyJ, formatEnergy)}</td>
                    <td className="num">{formatPower(c.avgPowerW.mean)}{pm(c.avgPowerW, formatPower)}</td>
                    <td className="num">{formatEdp(c.edpJs.mean)}{pm(c.edpJs, formatEdp)}</td>
                    {footprint.map((f) => <td key={f.key} className="num" data-column={f.key}>{f.cell(c)}</td>)}
                    {claims && <td className="pareto-claim" data-testid="pareto-claim">{paretoStatusText(claims, entryId(c))}</td>}
                  </>
                ) : <td colSpan={4 + footprint.length + (claims ? 1 : 0)} className="small">{results.excluded.find((e) => e.key === entryId(c))?.why ?? 'no measurements yet'}</td>}
              </tr>
            ))}
            {folded.length > 0 && (
              <tr data-testid="results-folded">
                <td colSpan={6 + names.length + footprint.length + (claims ? 1 : 0)} className="small">
                  {folded.map((f) => `${formatCount(f.count)} configuration${f.count === 1 ? '' : 's'}: ${f.why}`).join('; ')}{' '}
                  {/* A search's untried candidates are counted by the API, not listed: nothing to show. */}
                  {folded.some((f) => f.why !== UNTRIED) && <button type="button" onClick={() => setShowAll(true)}>Show them</button>}
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      <p className="small">Marks: {legend}. ± is the half-width of the 95 % interval of the mean.{footprintText ? ` ${footprintText}` : ''}{claims ? ` ${paretoLegend(claims)}.` : ''}</p>
      {claims ? claims.tradeoff && <p data-testid="tradeoff">Trade-off: {claims.tradeoff.statement}.</p> : results.tradeoff && results.tradeoff.fastest !== results.tradeoff.mostFrugal && (
        <p>
          Trade-off: the most frugal configuration ({results.tradeoff.mostFrugal}) saves {formatEnergy(results.tradeoff.energySavedJ)} (
          {formatPercent(results.tradeoff.energySavedPct === null ? null : results.tradeoff.energySavedPct / 100)}) against the fastest ({results.tradeoff.fastest}) and takes{' '}
          {formatTime(results.tradeoff.timeLostS)} longer.
        </p>
      )}
      {flagged.length > 0 && (
        <details className="runs-flagged">
          <summary>Runs to read with care (see each run&apos;s warnings)</summary>
          <ul>
            {flagged.map(({ configuration, text }) => (
              <li key={entryId(configuration)}>{entryId(configuration)}: {text}</li>
            ))}
          </ul>
        </details>
      )}
      {differing.length > 0 && (
        <details className="runs-differing-machines" data-testid="differing-machines">
          <summary>Ran on differing machines ({differing.length}; each run&apos;s page shows what its nodes were)</summary>
          <ul>
            {differing.map(({ configuration, label, differences }) => (
              <li key={entryId(configuration)}>
                {label}
                <ul>{differences.map((d) => <li key={d}>{d}</li>)}</ul>
              </li>
            ))}
          </ul>
        </details>
      )}
      {results.runsLeftOut.length > 0 && (
        <details className="runs-left-out">
          <summary>Runs left out of these figures ({results.runsLeftOut.length})</summary>
          <ul>
            {results.runsLeftOut.map((r) => (
              <li key={r.runId}>
                <a href={hrefRun(r.runId)}>run {r.repetition} of {r.key}</a>: {leftOutText(r)}
              </li>
            ))}
          </ul>
        </details>
      )}
      {power && <p className="small" data-testid="power-note">{power}</p>}
      {publishable && <p className={results.validity?.publishable ? 'small' : 'flags'} data-testid="publishable">{publishable}</p>}
    </>
  );
}

function RunsTable({ runs, name }: { runs: RunSummary[]; name: string }) {
  const csv = () => renderCsv([['run_id', 'configuration', 'repetition', 'state', 'slurm_job_id', 'exit_code', 'reason'], ...runs.map((r) => [r.id, r.configurationKey, r.repetition, r.state, r.slurmJobId, r.exitCode, r.reason])]);
  return (
    <>
      <div className="toolbar"><button type="button" onClick={() => downloadCsv(csv(), `${name}-runs.csv`)}>Export runs CSV</button></div>
      <div className="tablewrap short">
        <table className="runs" data-testid="campaign-runs">
          <thead><tr><th scope="col">Configuration</th><th scope="col">Rep.</th><th scope="col">State</th><th scope="col">Slurm job</th><th scope="col">Exit</th><th scope="col">Reason</th></tr></thead>
          <tbody>
            {runs.map((r) => (
              <tr key={r.id} data-run={r.id}>
                <td><a href={hrefRun(r.id)}>{r.configurationKey}</a></td>
                <td className="num">{r.repetition}</td>
                <td><span className={`state state-${r.state}`}>{r.state}</span></td>
                <td className="num">{r.slurmJobId ?? NO_VALUE}</td>
                <td className="num">{r.exitCode ?? NO_VALUE}</td>
                <td className="small">{r.reason ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
