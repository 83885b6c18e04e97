// Per configuration the mean of one objective (x) against another (y) — time against energy
// unless the results were asked on other objectives — with 95 % error bars both ways; the front
// as a line; Pareto-optimal points as filled diamonds, points not distinguishable from the front
// (the claims' tied_with_front) as hollow diamonds, the others as hollow circles; the optima
// labelled in text. Both axes start at 0 or above; an interval that reaches below 0 ends in an
// arrow at the axis instead of a cap.
import { useRef } from 'react';
import { paretoLayout } from '../../pareto';
import { claimsLevelText, markLetters } from '../../results';
import type { CampaignResults } from '../../types';
import { SvgExport } from './ExportButtons';
import { clippedNote, ScatterAxes, Whiskers } from './Scatter';

export function ParetoPlot({ results, name }: { results: CampaignResults; name: string }) {
  const ref = useRef<SVGSVGElement>(null);
  const L = paretoLayout(results, 640, 380);
  const { x, y } = L;
  if (L.points.length === 0) return <p data-testid="pareto-empty">No configuration has measurements of both {x.name} and {y.name} yet.</p>;
  return (
    <figure className="chart">
      <figcaption>
        Pareto plot: mean {x.name} against mean {y.name} (bars: 95 % intervals; an arrow at an axis: the interval reaches below 0 and is cut there). ◆ on the front of ({x.name}, {y.name}) (line),
        {results.claims ? ` ◇ dominated on the means but not distinguishably (${claimsLevelText(results.claims)}), ○ distinguishably dominated.` : ' ○ dominated.'}
        <SvgExport target={ref} name={`${name}-pareto`} label="Pareto plot" />
      </figcaption>
      <svg
        ref={ref} viewBox={`0 0 ${L.width} ${L.height}`} width="100%" role="img" aria-label={`Pareto plot of mean ${x.name} against mean ${y.name}`} data-testid="pareto-plot"
        data-objectives={L.objectives.join(',')} fontFamily="sans-serif" fontSize="11"
      >
        <ScatterAxes layout={L} xTick={x.tick} yTick={y.tick} xLabel={x.axisLabel} yLabel={y.axisLabel} />
        {L.front && <polyline className="front" points={L.front} fill="none" stroke="#1f5fa8" strokeWidth="2" strokeDasharray="6 3" />}
        {L.points.map((p) => (
          <g key={p.key} className="point" data-key={p.key} data-pareto={p.marks.pareto} data-status={p.status ?? undefined}>
            <title>{`${p.key} (${markLetters(p.marks) || 'dominated'}${p.statusText ? `; ${p.statusText}` : ''}): ${x.format(p.xValue)}, ${y.format(p.yValue)}${clippedNote(p, x.name, y.name)}`}</title>
            <Whiskers point={p} />
            {p.marks.pareto || p.status === 'tied_with_front'
              ? <path d={`M${p.x},${p.y - 6} L${p.x + 6},${p.y} L${p.x},${p.y + 6} L${p.x - 6},${p.y} Z`} fill={p.marks.pareto ? '#1f5fa8' : 'white'} stroke="black" />
              : <circle cx={p.x} cy={p.y} r="4.5" fill="white" stroke="black" strokeWidth="1.5" />}
            {p.label && <text className="optimal-label" x={p.labelX} y={p.labelY} textAnchor={p.labelAnchor} fontWeight="bold">{p.label}</text>}
          </g>
        ))}
      </svg>
    </figure>
  );
}
