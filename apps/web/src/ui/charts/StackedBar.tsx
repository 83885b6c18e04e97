// Energy by component per configuration: stacked horizontal bars, one pattern per component kind
// and a legend naming each, so the chart reads without colour.
import { useId, useRef } from 'react';
import { formatEnergy } from '../../format';
import { stackedBars } from '../../stacked';
import type { ConfigurationResult } from '../../types';
import { SvgExport } from './ExportButtons';
import { PatternDefs, patternId } from './Patterns';

export function StackedBar({ configurations, name }: { configurations: ConfigurationResult[]; name: string }) {
  const ref = useRef<SVGSVGElement>(null);
  const prefix = useId().replace(/:/g, '');
  const L = stackedBars(configurations, 640, 220);
  if (L.bars.length === 0) return <p>No per-component energy yet.</p>;
  const legendY = L.height - 12;
  return (
    <figure className="chart">
      <figcaption>
        Mean energy by component per configuration.
        <SvgExport target={ref} name={`${name}-components`} label="energy by component" />
      </figcaption>
      <svg ref={ref} viewBox={`0 0 ${L.width} ${L.height}`} width="100%" role="img" aria-label="stacked bar of energy by component" data-testid="components-chart" fontFamily="sans-serif" fontSize="11">
        <PatternDefs prefix={prefix} />
        <rect width={L.width} height={L.height} fill="white" />
        {L.bars.map((b) => (
          <g key={b.key}>
            <text x={L.plot.left - 6} y={b.y + b.height / 2 + 4} textAnchor="end">{b.key.length > 34 ? `${b.key.slice(0, 33)}…` : b.key}<title>{b.key}</title></text>
            {b.segments.map((s) => (
              <rect key={s.kind} x={s.x} y={b.y} width={Math.max(0, s.width)} height={b.height} fill={`url(#${patternId(prefix, s.kindIndex)})`} stroke="black" strokeWidth="0.5">
                <title>{`${b.key} · ${s.kind}: ${formatEnergy(s.valueJ)}`}</title>
              </rect>
            ))}
            <text x={Math.min(L.plot.right - 2, (b.segments.at(-1)?.x ?? L.plot.left) + (b.segments.at(-1)?.width ?? 0) + 4)} y={b.y + b.height / 2 + 4}
              textAnchor={(b.segments.at(-1)?.x ?? 0) + (b.segments.at(-1)?.width ?? 0) + 60 > L.plot.right ? 'end' : 'start'}>{formatEnergy(b.totalJ)}</text>
          </g>
        ))}
        {L.xTicks.map((t) => <text key={t.value} x={t.x} y={L.plot.bottom + 12} textAnchor="middle" fill="#555">{formatEnergy(t.value)}</text>)}
        {L.kinds.map((k, i) => (
          <g key={k} transform={`translate(${L.plot.left + i * 110} ${legendY - 10})`}>
            <rect width="14" height="14" fill={`url(#${patternId(prefix, i)})`} stroke="black" strokeWidth="0.5" />
            <text x="18" y="11">{k}</text>
          </g>
        ))}
      </svg>
    </figure>
  );
}
