// What the scatters (the Pareto plot, bytes against energy) draw alike: the axes from their
// layout with ticks and titles, and each point's 95 % whiskers — an end cut at an axis (the
// interval reaches below 0) drawn as an arrow (`path.clipped`) instead of a cap.
import type { ScatterLayout, ScatterPoint } from '../../scatter';

export function ScatterAxes({ layout: L, xTick, yTick, xLabel, yLabel }: { layout: ScatterLayout; xTick: (v: number) => string; yTick: (v: number) => string; xLabel: string; yLabel: string }) {
  const { plot } = L;
  return (
    <>
      <rect width={L.width} height={L.height} fill="white" />
      <g className="axes" stroke="#333">
        <line x1={plot.left} y1={plot.bottom} x2={plot.right} y2={plot.bottom} />
        <line x1={plot.left} y1={plot.top} x2={plot.left} y2={plot.bottom} />
      </g>
      {L.xTicks.map((t) => (
        <g key={`x${t.value}`}>
          <line x1={t.x} x2={t.x} y1={plot.bottom} y2={plot.bottom + 4} stroke="#333" />
          <line x1={t.x} x2={t.x} y1={plot.top} y2={plot.bottom} stroke="#eee" />
          <text className="tick x-tick" x={t.x} y={plot.bottom + 16} textAnchor="middle">{xTick(t.value)}</text>
        </g>
      ))}
      {L.yTicks.map((t) => (
        <g key={`y${t.value}`}>
          <line x1={plot.left - 4} x2={plot.left} y1={t.y} y2={t.y} stroke="#333" />
          <line x1={plot.left} x2={plot.right} y1={t.y} y2={t.y} stroke="#eee" />
          <text className="tick y-tick" x={plot.left - 6} y={t.y + 4} textAnchor="end">{yTick(t.value)}</text>
        </g>
      ))}
      <text className="axis-label x-label" x={(plot.left + plot.right) / 2} y={L.height - 10} textAnchor="middle">{xLabel}</text>
      <text className="axis-label y-label" transform={`translate(14 ${(plot.top + plot.bottom) / 2}) rotate(-90)`} textAnchor="middle">{yLabel}</text>
    </>
  );
}

export function Whiskers({ point: p }: { point: ScatterPoint }) {
  return (
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
  );
}

/** The note in a point's tooltip when an interval was cut at an axis: "" when none was. */
export function clippedNote(p: ScatterPoint, xName: string, yName: string): string {
  const cut = [p.xClipped && xName, p.yClipped && yName].filter(Boolean);
  return cut.length === 0 ? '' : ` (the 95 % interval of its ${cut.join(' and ')} reaches below 0: cut at 0)`;
}
