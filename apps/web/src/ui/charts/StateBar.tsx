// Runs by state as one stacked bar with a legend that names each state and its count, so it reads
// without colour; each state also has its own pattern.
import { useId } from 'react';
import { formatCount } from '../../format';
import { RUN_STATES } from '../../types';
import { orderedCounts } from '../../queue';
import { PatternDefs, patternId } from './Patterns';

export function StateBar({ counts, label, width = 420 }: { counts: Record<string, number>; label: string; width?: number }) {
  const prefix = useId().replace(/:/g, '');
  const entries = orderedCounts(counts, RUN_STATES);
  const total = entries.reduce((s, [, n]) => s + n, 0);
  let x = 0;
  return (
    <figure className="statebar">
      <svg viewBox={`0 0 ${width} 18`} width="100%" height="18" preserveAspectRatio="none" role="img" aria-label={`${label}: ${entries.map(([s, n]) => `${s} ${n}`).join(', ') || 'no runs'}`}>
        <PatternDefs prefix={prefix} />
        <rect width={width} height="18" fill="#eee" />
        {entries.map(([state, n]) => {
          const w = total ? (n / total) * width : 0;
          const r = <rect key={state} x={x} width={w} height="18" fill={`url(#${patternId(prefix, RUN_STATES.indexOf(state as never) < 0 ? 7 : RUN_STATES.indexOf(state as never))})`} stroke="white"><title>{`${state}: ${n}`}</title></rect>;
          x += w;
          return r;
        })}
      </svg>
      <figcaption>
        {entries.length === 0 ? 'no runs' : entries.map(([state, n]) => (
          <span key={state} className="legend-item" data-state={state}>
            <svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill={`url(#${patternId(prefix, Math.max(0, RUN_STATES.indexOf(state as never)))})`} /></svg>
            {state} <b>{formatCount(n)}</b>
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
