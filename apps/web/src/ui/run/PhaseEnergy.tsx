// Where a run's energy went: per phase its inclusive and self energy (± 95 % where the regression
// gives one), mean power and share, the unmarked time last; per step counter the energy and time
// per step. A run without phases says how to mark them.
import { useId } from 'react';
import { formatCount, formatEnergy, formatPercent, formatPower, formatTime, NO_VALUE } from '../../format';
import { phaseRows, phasesCsv, type PhaseRow } from '../../phases';
import type { RunPhases, RunPhasesView } from '../../types';
import { PhaseSwatch } from '../charts/PhaseLegend';
import { PatternDefs } from '../charts/Patterns';
import { downloadCsv } from '../exporting';

const pm = (half: number | null, f: (x: number) => string) => (half === null ? '' : ` ± ${f(half)}`);

export function MarkPhasesHint() {
  return (
    <div className="hint-box" data-testid="phases-hint">
      <p>This run marked no phases. To see where its energy went, mark them in the workload:</p>
      <ul>
        <li>in a shell script: <code>erg-mark begin NAME</code> … <code>erg-mark end NAME</code> (and <code>erg-mark step</code> per unit of work);</li>
        <li>in Python: <code>import erg</code>, then <code>with erg.phase(&quot;NAME&quot;):</code> around the code;</li>
        <li>or give the campaign spec a <code>phases</code> section whose regexes find them in the workload&apos;s log.</li>
      </ul>
      <p className="small">erg then divides the run&apos;s energy among the phases and draws them over the power trace.</p>
    </div>
  );
}

/** `shown`: warnings the page shows already (the energy's, which the phases repeat where they come from the same telemetry). */
export function PhaseEnergy({ view, note, palette, name, shown = [] }: { view: RunPhasesView | null; note: string | null; palette: ReadonlyMap<string, number>; name: string; shown?: readonly string[] }) {
  if (!view) return <p data-testid="phases-note">{note ?? 'Loading…'}</p>;
  const p = view.phases;
  const warnings = (p?.warnings ?? []).filter((w) => !shown.includes(w));
  return (
    <>
      {!p || p.phases.length === 0 ? <MarkPhasesHint /> : <PhaseTable phases={p} palette={palette} name={name} />}
      {p && p.steps.length > 0 && <StepTable phases={p} />}
      {warnings.length > 0 && <ul className="warnings">{warnings.map((w) => <li key={w}>{w}</li>)}</ul>}
      {view.marks.count > 0 && (
        <p className="small">
          {formatCount(view.marks.count)} marks from {view.marks.nodes.join(', ') || NO_VALUE} (written by {view.marks.writers.join(', ') || NO_VALUE}).
        </p>
      )}
    </>
  );
}

function methodText(p: RunPhases): string {
  const how = p.method === 'regression'
    ? 'each phase’s mean power estimated from the readings (regression: it resolves phases shorter than a reading), times its time'
    : 'each reading’s energy split among the phases by their share of its interval (proportional: no resolution below a reading)';
  const every = p.resolutionMs === null ? '' : `; the slowest sensor read every ${formatTime(p.resolutionMs / 1000)} (median)`;
  return `Attributed ${p.method === 'regression' ? 'by regression' : 'proportionally'}: ${how}${every}.`;
}

function PhaseTable({ phases, palette, name }: { phases: RunPhases; palette: ReadonlyMap<string, number>; name: string }) {
  const prefix = useId().replace(/:/g, '');
  const rows = phaseRows(phases);
  return (
    <>
      <div className="toolbar">
        <button type="button" onClick={() => downloadCsv(phasesCsv(phases), `${name}-phases.csv`)}>Export phases CSV</button>
      </div>
      <svg width="0" height="0" aria-hidden="true" style={{ position: 'absolute' }}><PatternDefs prefix={prefix} /></svg>
      <div className="tablewrap">
        <table className="phases" data-testid="phase-table">
          <thead>
            <tr>
              <th scope="col">Phase</th><th scope="col">Occurrences</th><th scope="col" title="node-seconds, nested phases included">Time</th><th scope="col" title="node-seconds as the innermost phase">Self time</th>
              <th scope="col" title="nested phases included">Energy (± 95 %)</th><th scope="col" title="nested phases excluded: these add up to the run's energy">Self energy (± 95 %)</th>
              <th scope="col">Mean power</th><th scope="col" title="energy ÷ the run's">Share</th><th scope="col" title="self energy ÷ the run's">Self share</th><th scope="col">Method</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => <Row key={r.name} row={r} prefix={prefix} index={r.unmarked ? null : (palette.get(r.name) ?? 0)} />)}
          </tbody>
          <tfoot>
            <tr>
              <th scope="row">Run</th><td /><td className="num">{formatTime(phases.timeS)}</td><td />
              <td className="num">{formatEnergy(phases.energyJ)}</td><td className="num">{formatEnergy(phases.energyJ)}</td><td /><td className="num">{formatPercent(1)}</td><td className="num">{formatPercent(1)}</td><td>{phases.method}</td>
            </tr>
          </tfoot>
        </table>
      </div>
      <p className="small">
        {methodText(phases)} Times are node-seconds (summed over nodes); mean power is one node&apos;s. Energy counts the phases nested in a phase, self energy does not: the self
        energies and the unmarked time add up to the run&apos;s energy. ± is the half-width of the 95 % interval of the split (none where it was proportional).
      </p>
    </>
  );
}

function Row({ row: r, prefix, index }: { row: PhaseRow; prefix: string; index: number | null }) {
  return (
    <tr data-phase={r.name}>
      <th scope="row" className="phase-name"><PhaseSwatch prefix={prefix} index={index} /> {r.name}</th>
      <td className="num">{r.occurrences === null ? '' : formatCount(r.occurrences)}</td>
      <td className="num">{formatTime(r.timeS)}</td>
      <td className="num">{formatTime(r.selfTimeS)}</td>
      <td className="num">{formatEnergy(r.energyJ)}{pm(r.ci95J, formatEnergy)}</td>
      <td className="num">{formatEnergy(r.selfEnergyJ)}{pm(r.selfCi95J, formatEnergy)}</td>
      <td className="num">{formatPower(r.meanPowerW)}</td>
      <td className="num">{formatPercent(r.share)}</td>
      <td className="num">{formatPercent(r.selfShare)}</td>
      <td>{r.method}</td>
    </tr>
  );
}

function StepTable({ phases }: { phases: RunPhases }) {
  return (
    <>
      <h3>Per step</h3>
      <div className="tablewrap">
        <table className="steps" data-testid="step-table">
          <thead>
            <tr>
              <th scope="col">Counter</th><th scope="col">Steps</th><th scope="col">Energy per step (mean ± std)</th><th scope="col">5 % / median / 95 %</th>
              <th scope="col">Time per step (mean)</th><th scope="col" title="steps shorter than 2 sampling intervals: interpolated between readings">Below resolution</th>
            </tr>
          </thead>
          <tbody>
            {phases.steps.map((s) => (
              <tr key={s.name} data-step={s.name}>
                <th scope="row">{s.name}</th>
                <td className="num">{formatCount(s.count)}</td>
                <td className="num">{formatEnergy(s.energyJ.mean)}{s.energyJ.std === null ? '' : ` ± ${formatEnergy(s.energyJ.std)}`}</td>
                <td className="num">{formatEnergy(s.energyJ.p5)} / {formatEnergy(s.energyJ.p50)} / {formatEnergy(s.energyJ.p95)}</td>
                <td className="num">{formatTime(s.timeS.mean)}</td>
                <td className="num">{formatCount(s.belowResolution)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p className="small">One node&apos;s energy and time between two consecutive step marks (J/step).</p>
    </>
  );
}
