// Stacked horizontal bars per configuration (stacked.ts's layout): energy by component, and self
// energy by phase (PhaseStack.tsx). One pattern per part and a legend naming each, so the chart
// reads without colour.
import { useId, useRef, type ReactNode } from 'react';
import { formatEnergy } from '../../format';
import { stackedBars, type StackLayout } from '../../stacked';
import type { ConfigurationResult } from '../../types';
import { SvgExport } from './ExportButtons';
import { PatternDefs, patternId } from './Patterns';

export interface StackChartProps {
  layout: StackLayout;
  caption: ReactNode;
  /** The chart's accessible name. */
  ariaLabel: string;
  /** What the export buttons call it ("Export <label> as SVG"). */
  label: string;
  testId: string;
  exportName: string;
  /** The fill of a part: by default its kind's pattern. */
  fill?: (kind: string, kindIndex: number, prefix: string) => string;
}

export function StackChart({ layout: L, caption, ariaLabel, label, testId, exportName, fill }: StackChartProps) {
  const ref = useRef<SVGSVGElement>(null);
  const prefix = useId().replace(/:/g, '');
  const fillOf = (kind: string, i: number) => (fill ? fill(kind, i, prefix) : `url(#${patternId(prefix, i)})`);
  return (
    <figure className="chart">
      <figcaption>
        <span>{caption}</span>
        <SvgExport target={ref} name={exportName} label={label} />
      </figcaption>
      <svg ref={ref} viewBox={`0 0 ${L.width} ${L.height}`} width="100%" role="img" aria-label={ariaLabel} data-testid={testId} fontFamily="sans-serif" fontSize="11">
        <PatternDefs prefix={prefix} />
        <rect width={L.width} height={L.height} fill="white" />
        {L.bars.map((b) => (
          <g key={b.key} className="bar" data-key={b.key}>
            <text x={L.plot.left - 6} y={b.y + b.height / 2 + 4} textAnchor="end">{b.key.length > 34 ? `${b.key.slice(0, 33)}…` : b.key}<title>{b.key}</title></text>
            {b.segments.map((s) => (
              <rect key={s.kind} className="segment" data-kind={s.kind} x={s.x} y={b.y} width={Math.max(0, s.width)} height={b.height} fill={fillOf(s.kind, s.kindIndex)} stroke="black" strokeWidth="0.5">
                <title>{`${b.key} · ${s.kind}: ${formatEnergy(s.valueJ)}`}</title>
              </rect>
            ))}
            <text x={Math.min(L.plot.right - 2, (b.segments.at(-1)?.x ?? L.plot.left) + (b.segments.at(-1)?.width ?? 0) + 4)} y={b.y + b.height / 2 + 4}
              textAnchor={(b.segments.at(-1)?.x ?? 0) + (b.segments.at(-1)?.width ?? 0) + 60 > L.plot.right ? 'end' : 'start'}>{formatEnergy(b.totalJ)}</text>
          </g>
        ))}
        {L.xTicks.map((t) => <text key={t.value} className="tick" x={t.x} y={L.plot.bottom + 12} textAnchor="middle" fill="#555">{formatEnergy(t.value)}</text>)}
        {L.legend.map((e) => (
          <g key={e.kind} className="legend-entry" data-kind={e.kind} transform={`translate(${e.x} ${e.y})`}>
            <rect width="14" height="14" fill={fillOf(e.kind, e.kindIndex)} stroke="black" strokeWidth="0.5" />
            <text x="18" y="11">{e.kind}</text>
          </g>
        ))}
      </svg>
    </figure>
  );
}

export function StackedBar({ configurations, name }: { configurations: ConfigurationResult[]; name: string }) {
  const L = stackedBars(configurations, 640, 220);
  if (L.bars.length === 0) return <p>No per-component energy yet.</p>;
  return <StackChart layout={L} caption="Mean energy by component per configuration." ariaLabel="stacked bar of energy by component" label="energy by component" testId="components-chart" exportName={`${name}-components`} />;
}
