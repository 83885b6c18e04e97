// The phases' names beside their patterns (the same as on the bands and in the table), and what
// the bands leave out.
import { useId } from 'react';
import { UNMARKED } from '../../phases';
import { PatternDefs, patternId } from './Patterns';

export function PhaseSwatch({ prefix, index }: { prefix: string; index: number | null }) {
  return (
    <svg width="12" height="12" aria-hidden="true" className="swatch">
      {index === null ? <rect width="12" height="12" fill="white" stroke="#999" strokeDasharray="2 1" /> : <rect width="12" height="12" fill={`url(#${patternId(prefix, index)})`} stroke="black" strokeWidth="0.5" />}
    </svg>
  );
}

export function PhaseLegend({ phases, note }: { phases: { name: string; index: number }[]; note: string | null }) {
  const prefix = useId().replace(/:/g, '');
  return (
    <div className="phase-legend" data-testid="phase-legend">
      <svg width="0" height="0" aria-hidden="true" style={{ position: 'absolute' }}><PatternDefs prefix={prefix} /></svg>
      <span className="small">Phases:</span>
      {phases.map((p) => (
        <span key={p.name} className="legend-item" data-phase={p.name}><PhaseSwatch prefix={prefix} index={p.index} />{p.name}</span>
      ))}
      <span className="legend-item small" data-phase={UNMARKED}><PhaseSwatch prefix={prefix} index={null} />blank: inside no phase</span>
      {note && <span className="small" data-testid="phase-bands-note">{note}</span>}
    </div>
  );
}
