// Bytes against energy: per configuration the mean bytes per run over one kind of link (x, GB)
// against the mean energy of those runs (y, kJ), with 95 % whiskers both ways (an arrow at an
// axis: cut at 0); the runtime- and energy-optimal configurations labelled in text.
import { useRef } from 'react';
import { formatBytes, formatEnergy } from '../../format';
import { axisNumber, kindLabel, type MovementScatter as Layout } from '../../movement';
import { SvgExport } from './ExportButtons';
import { clippedNote, ScatterAxes, Whiskers } from './Scatter';

export function MovementScatter({ layout: L, name }: { layout: Layout; name: string }) {
  const ref = useRef<SVGSVGElement>(null);
  const kind = kindLabel(L.kind);
  if (L.points.length === 0) return <p>No configuration has a mean of bytes over {kind} and of energy.</p>;
  return (
    <figure className="chart">
      <figcaption>
        Mean bytes per run over {kind} against mean energy per run (bars: 95 % intervals; an arrow at an axis: the interval reaches below 0 and is cut there).
        <SvgExport target={ref} name={`${name}-bytes-energy-${L.kind}`} label="bytes against energy" />
      </figcaption>
      <svg
        ref={ref} viewBox={`0 0 ${L.width} ${L.height}`} width="100%" role="img" aria-label={`mean bytes over ${kind} against mean energy`} data-testid="movement-scatter"
        data-kind={L.kind} fontFamily="sans-serif" fontSize="11"
      >
        <ScatterAxes layout={L} xTick={axisNumber} yTick={axisNumber} xLabel={L.xLabel} yLabel={L.yLabel} />
        {L.points.map((p) => (
          <g key={p.key} className="point" data-key={p.key} data-x={p.x.toFixed(1)} data-y={p.y.toFixed(1)}>
            <title>{`${p.key}: ${formatBytes(p.bytes)} over ${kind}, ${formatEnergy(p.energyJ)}${clippedNote(p, 'bytes', 'energy')}`}</title>
            <Whiskers point={p} />
            <circle cx={p.x} cy={p.y} r="4.5" fill={p.label ? '#1f5fa8' : 'white'} stroke="black" strokeWidth="1.5" />
            {p.label && <text className="optimal-label" x={p.labelX} y={p.labelY} textAnchor={p.labelAnchor} fontWeight="bold">{p.label}</text>}
          </g>
        ))}
      </svg>
    </figure>
  );
}
