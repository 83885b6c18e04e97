// Mean time (x) against mean energy (y) per configuration with 95 % error bars both ways; the
// front as a line; Pareto-optimal points as filled diamonds, the others as hollow circles; the
// runtime-, energy- and EDP-optimal points labelled in text. Both axes start at 0 or above; an
// interval that reaches below 0 ends in an arrow at the axis instead of a cap.
import { useRef } from 'react';
import { formatEnergy, formatTime } from '../../format';
import { paretoLayout, type ParetoPoint } from '../../pareto';
import { markLetters } from '../../results';
import type { CampaignResults } from '../../types';
import { SvgExport } from './ExportButtons';

function clippedNote(p: ParetoPoint): string {
  const cut = [p.xClipped && 'time', p.yClipped && 'energy'].filter(Boolean);
  return cut.length === 0 ? '' : ` (the 95 % interval of its ${cut.join(' and ')} reaches below 0: cut at 0)`;
}

export function ParetoPlot({ results, name }: { results: CampaignResults; name: string }) {
  const ref = useRef<SVGSVGElement>(null);
  const L = paretoLayout(results, 640, 380);
  const { plot } = L;
  if (L.points.length === 0) return <p>No configuration has measurements yet.</p>;
  return (
    <figure className="chart">
      <figcaption>
        Pareto plot: mean time against mean energy (bars: 95 % intervals; an arrow at an axis: the interval reaches below 0 and is cut there). ◆ on the front (line), ○ dominated.
        <SvgExport target={ref} name={`${name}-pareto`} label="Pareto plot" />
      </figcaption>
      <svg ref={ref} viewBox={`0 0 ${L.width} ${L.height}`} width="100%" role="img" aria-label="Pareto plot of mean time against mean energy" data-testid="pareto-plot" fontFamily="sans-serif" fontSize="11">
        <rect width={L.width} height={L.height} fill="white" />
        <g className="axes" stroke="#333">
          <line x1={plot.left} y1={plot.bottom} x2={plot.right} y2={plot.bottom} />
          <line x1={plot.left} y1={plot.top} x2={plot.left} y2={plot.bottom} />
        </g>
        {L.xTicks.map((t) => (
          <g key={`x${t.value}`}>
            <line x1={t.x} x2={t.x} y1={plot.bottom} y2={plot.bottom + 4} stroke="#333" />
            <line x1={t.x} x2={t.x} y1={plot.top} y2={plot.bottom} stroke="#eee" />
            <text className="tick" x={t.x} y={plot.bottom + 16} textAnchor="middle">{formatTime(t.value)}</text>
          </g>
        ))}
        {L.yTicks.map((t) => (
          <g key={`y${t.value}`}>
            <line x1={plot.left - 4} x2={plot.left} y1={t.y} y2={t.y} stroke="#333" />
            <line x1={plot.left} x2={plot.right} y1={t.y} y2={t.y} stroke="#eee" />
            <text className="tick" x={plot.left - 6} y={t.y + 4} textAnchor="end">{formatEnergy(t.value)}</text>
          </g>
        ))}
        <text x={(plot.left + plot.right) / 2} y={L.height - 10} textAnchor="middle">mean time to solution</text>
        <text transform={`translate(14 ${(plot.top + plot.bottom) / 2}) rotate(-90)`} textAnchor="middle">mean energy</text>
        {L.front && <polyline className="front" points={L.front} fill="none" stroke="#1f5fa8" strokeWidth="2" strokeDasharray="6 3" />}
        {L.points.map((p) => (
          <g key={p.key} className="point" data-key={p.key} data-pareto={p.marks.pareto}>
            <title>{`${p.key} (${markLetters(p.marks) || 'dominated'}): ${formatTime(p.timeS)}, ${formatEnergy(p.energyJ)}${clippedNote(p)}`}</title>
            <g stroke="#555" strokeWidth="1" fill="none">
              <line x1={p.xBar[0]} x2={p.xBar[1]} y1={p.y} y2={p.y} />
              {p.xClipped
                ? <path className="clipped" d={`M${p.xBar[0] + 5},${p.y - 4} L${p.xBar[0]},${p.y} L${p.xBar[0] + 5},${p.y + 4}`} strokeWidth="1.5" />
                : <line x1={p.xBar[0]} x2={p.xBar[0]} y1={p.y - 3} y2={p.y + 3} />}
              <line x1={p.xBar[1]} x2={p.xBar[1]} y1={p.y - 3} y2={p.y + 3} />
              <line x1={p.x} x2={p.x} y1={p.yBar[0]} y2={p.yBar[1]} />
              <line x1={p.x - 3} x2={p.x + 3} y1={p.yBar[0]} y2={p.yBar[0]} />
              {p.yClipped
                ? <path className="clipped" d={`M${p.x - 4},${p.yBar[1] - 5} L${p.x},${p.yBar[1]} L${p.x + 4},${p.yBar[1] - 5}`} strokeWidth="1.5" />
                : <line x1={p.x - 3} x2={p.x + 3} y1={p.yBar[1]} y2={p.yBar[1]} />}
            </g>
            {p.marks.pareto
              ? <path d={`M${p.x},${p.y - 6} L${p.x + 6},${p.y} L${p.x},${p.y + 6} L${p.x - 6},${p.y} Z`} fill="#1f5fa8" stroke="black" />
              : <circle cx={p.x} cy={p.y} r="4.5" fill="white" stroke="black" strokeWidth="1.5" />}
            {p.label && <text className="optimal-label" x={p.labelX} y={p.labelY} textAnchor={p.labelAnchor} fontWeight="bold">{p.label}</text>}
          </g>
        ))}
      </svg>
    </figure>
  );
}
