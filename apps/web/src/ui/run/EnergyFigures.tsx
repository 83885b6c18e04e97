// The energy figures of a run, with its method, coverage, components and idle baseline; its flags
// and warnings; the power state in force per GPU; Slurm's own figure beside erg's; and the
// validity gates its measurement was checked against.
import { formatEdp, formatEnergy, formatPercent, formatPower, formatTime } from '../../format';
import { cpuMaxFreqText, flagLabels, NODE_ENERGY_COLUMNS, nodeEnergyRows, POWER_IN_FORCE_COLUMNS, powerInForceRows, powerRequestedText, slurmEnergyFigure } from '../../run-info';
import type { RunEnergy } from '../../types';
import { RunValidity } from './RunValidity';

export function EnergyFigures({ figures: f, note }: { figures: RunEnergy | null; note: string | null }) {
  return (
    <>
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
          <div data-testid="slurm-energy"><dt>Slurm&apos;s figure</dt><dd>{slurmEnergyFigure(f.slurmEnergy)}</dd></div>
        </dl>
      ) : <p data-testid="energy-note">{note ?? 'Loading…'}</p>}
      {f && <p className="small">{f.slurmEnergy.note}</p>}
      {f?.stale && <p className="flags" data-testid="energy-stale">Telemetry arrived after these figures were computed; the scheduler recomputes them at its next tick.</p>}
      {f && f.flags.length > 0 && (
        <p className="flags" data-testid="run-flags">To read with care: {flagLabels(f).join(', ')} (the warnings below say why).</p>
      )}
      {f?.warnings && f.warnings.length > 0 && <ul className="warnings">{f.warnings.map((w) => <li key={w}>{w}</li>)}</ul>}
      {f && f.nodes.length > 1 && <EnergyPerNode figures={f} />}
      {f && <PowerInForce figures={f} />}
      {f && <RunValidity figures={f} />}
    </>
  );
}

/** Each node's share of a multi-node run's energy (they add up to the run's). */
function EnergyPerNode({ figures: f }: { figures: RunEnergy }) {
  return (
    <div data-testid="energy-per-node">
      <h3>Energy per node ({f.nodes.length} nodes)</h3>
      <div className="tablewrap">
        <table className="energy-per-node">
          <thead><tr>{NODE_ENERGY_COLUMNS.map((c) => <th key={c.field} scope="col">{c.header}</th>)}</tr></thead>
          <tbody>
            {nodeEnergyRows(f).map((r) => (
              <tr key={r.node}>{NODE_ENERGY_COLUMNS.map((c) => <td key={c.field} className={c.numeric ? 'num' : undefined}>{r[c.field]}</td>)}</tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

function PowerInForce({ figures: f }: { figures: RunEnergy }) {
  if (!f.power) return <p className="small" data-testid="power-in-force">Power state in force: not recorded (no power-state sensor on its nodes, and the campaign set no power state).</p>;
  const rows = powerInForceRows(f.power);
  const cpu = cpuMaxFreqText(f.power);
  return (
    <div data-testid="power-in-force">
      <h3>Power state in force ({powerRequestedText(f.power)})</h3>
      {rows.length > 0 ? (
        <div className="tablewrap">
          <table className="power-in-force">
            <thead><tr>{POWER_IN_FORCE_COLUMNS.map((c) => <th key={c.field} scope="col">{c.header}</th>)}</tr></thead>
            <tbody>
              {rows.map((r) => (
                <tr key={`${r.node}-${r.gpu}`}>{POWER_IN_FORCE_COLUMNS.map((c) => <td key={c.field} className={c.numeric ? 'num' : undefined}>{r[c.field]}</td>)}</tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : <p className="small">No GPU sensor of the state in force.</p>}
      {cpu && <p className="small">CPU max frequency read back: {cpu}</p>}
    </div>
  );
}
