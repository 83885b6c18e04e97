// The energy figures of a run, with its method, coverage, components and idle baseline.
import { formatEdp, formatEnergy, formatPercent, formatPower, formatTime } from '../../format';
import type { RunEnergy } from '../../types';

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
        </dl>
      ) : <p data-testid="energy-note">{note ?? 'Loading…'}</p>}
      {f?.warnings && f.warnings.length > 0 && <ul className="warnings">{f.warnings.map((w) => <li key={w}>{w}</li>)}</ul>}
    </>
  );
}
