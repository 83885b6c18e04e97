// Power over time per sensor with uPlot; the workload window and the idle baseline drawn as
// hatched bands with their names, and the phases (when the run marked any) as bands in each
// phase's pattern, one lane per node, named in a legend below. Exports: the canvas as PNG, and an
// SVG version of the same series and bands (powerTraceSvg) since uPlot draws no SVG.
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import { formatPower } from '../../format';
import { PATTERN_TILE, patternSpec } from '../../patterns';
import type { PhaseBands } from '../../phases';
import { alignSeries, powerTraceSvg, seriesLabel, type Band } from '../../series';
import type { TelemetrySeries } from '../../types';
import { canvasPng, downloadBlob, downloadText } from '../exporting';
import { PhaseLegend } from './PhaseLegend';

const STROKES = ['#1f5fa8', '#c0392b', '#2e7d32', '#8e44ad', '#d35400', '#555555'];
const DASHES: number[][] = [[], [6, 3], [2, 2], [8, 3, 2, 3], [1, 3], [10, 4]];

/** A phase's pattern (patterns.ts) as a canvas fill, at the canvas's pixel ratio. */
function canvasPattern(ctx: CanvasRenderingContext2D, index: number, scale: number): CanvasPattern | string {
  const spec = patternSpec(index);
  const tile = document.createElement('canvas');
  tile.width = tile.height = Math.round(PATTERN_TILE * scale);
  const g = tile.getContext('2d');
  if (!g) return spec.shade;
  g.scale(scale, scale);
  g.fillStyle = spec.shade;
  g.fillRect(0, 0, PATTERN_TILE, PATTERN_TILE);
  for (const m of spec.marks) {
    const path = new Path2D(m.d);
    if (m.stroke === undefined) { g.fillStyle = 'white'; g.fill(path); } else { g.strokeStyle = 'white'; g.lineWidth = m.stroke; g.stroke(path); }
  }
  return ctx.createPattern(tile, 'repeat') ?? spec.shade;
}

/** The phase bands, one lane per node, under the series; the number drawn goes to the box's data-phase-bands-drawn. */
function drawPhases(u: uPlot, phases: PhaseBands): void {
  const ctx = u.ctx;
  const { left: bl, top: bt, width: bw, height: bh } = u.bbox;
  const laneH = bh / phases.lanes.length;
  const fills = new Map<number, CanvasPattern | string>();
  let drawn = 0;
  ctx.save();
  ctx.font = `${11 * devicePixelRatio}px sans-serif`;
  phases.lanes.forEach((lane, i) => {
    const y = bt + i * laneH;
    for (const b of lane.bands) {
      const x0 = Math.max(bl, u.valToPos(b.fromMs / 1000, 'x', true));
      const x1 = Math.min(bl + bw, u.valToPos(b.toMs / 1000, 'x', true));
      if (x1 <= x0) continue;
      if (!fills.has(b.index)) fills.set(b.index, canvasPattern(ctx, b.index, devicePixelRatio));
      ctx.globalAlpha = 0.35;
      ctx.fillStyle = fills.get(b.index)!;
      ctx.fillRect(x0, y, x1 - x0, laneH);
      ctx.globalAlpha = 1;
      drawn++;
      if (x1 - x0 > ctx.measureText(b.phase).width + 8 * devicePixelRatio) {
        ctx.fillStyle = '#222';
        ctx.fillText(b.phase, x0 + 4 * devicePixelRatio, y + laneH - 6 * devicePixelRatio);
      }
    }
    if (phases.lanes.length > 1) {
      ctx.fillStyle = '#222';
      ctx.textAlign = 'right';
      ctx.fillText(lane.node, bl + bw - 4 * devicePixelRatio, y + 13 * devicePixelRatio);
      ctx.textAlign = 'left';
      if (i > 0) { ctx.strokeStyle = 'rgba(0,0,0,0.3)'; ctx.beginPath(); ctx.moveTo(bl, y); ctx.lineTo(bl + bw, y); ctx.stroke(); }
    }
  });
  ctx.restore();
  u.root.parentElement?.setAttribute('data-phase-bands-drawn', String(drawn));
}

/** A workload or idle band hatched across the plot: idle "\\\\", workload "////", so that they differ without colour. */
function hatchBand(u: uPlot, b: Band, left: number, right: number): void {
  const ctx = u.ctx;
  const idle = b.label.startsWith('idle');
  ctx.save();
  ctx.fillStyle = idle ? 'rgba(120,120,120,0.12)' : 'rgba(31,95,168,0.10)';
  ctx.fillRect(left, u.bbox.top, right - left, u.bbox.height);
  ctx.strokeStyle = 'rgba(0,0,0,0.25)';
  ctx.beginPath();
  ctx.rect(left, u.bbox.top, right - left, u.bbox.height);
  ctx.clip();
  const step = 10 * devicePixelRatio;
  for (let x = left - u.bbox.height; x < right + u.bbox.height; x += step) {
    ctx.moveTo(x, u.bbox.top);
    ctx.lineTo(idle ? x - u.bbox.height : x + u.bbox.height, u.bbox.top + u.bbox.height);
  }
  ctx.stroke();
  ctx.restore();
}

/** A band as its two edges only (dashed): the workload window when phases fill it. */
function edgeBand(u: uPlot, left: number, right: number): void {
  const ctx = u.ctx;
  ctx.save();
  ctx.strokeStyle = 'rgba(0,0,0,0.55)';
  ctx.setLineDash([4 * devicePixelRatio, 3 * devicePixelRatio]);
  ctx.beginPath();
  ctx.moveTo(left, u.bbox.top); ctx.lineTo(left, u.bbox.top + u.bbox.height);
  ctx.moveTo(right, u.bbox.top); ctx.lineTo(right, u.bbox.top + u.bbox.height);
  ctx.stroke();
  ctx.restore();
}

function bandsPlugin(bands: readonly Band[], phases: PhaseBands | null): uPlot.Plugin {
  return {
    hooks: {
      drawClear: (u: uPlot) => {
        if (phases) drawPhases(u, phases);
        for (const b of bands) {
          const x0 = u.valToPos(b.fromMs / 1000, 'x', true);
          const x1 = u.valToPos(b.toMs / 1000, 'x', true);
          const left = Math.max(u.bbox.left, Math.min(x0, x1));
          const right = Math.min(u.bbox.left + u.bbox.width, Math.max(x0, x1));
          if (right <= left) continue;
          // With phases the workload window is all phases and unmarked time: it keeps its edges and its name, not its hatching.
          if (phases && !b.label.startsWith('idle')) edgeBand(u, left, right);
          else hatchBand(u, b, left, right);
          const ctx = u.ctx;
          ctx.save();
          ctx.fillStyle = '#222';
          ctx.font = `${12 * devicePixelRatio}px sans-serif`;
          ctx.fillText(b.label, left + 4 * devicePixelRatio, u.bbox.top + 14 * devicePixelRatio);
          ctx.restore();
        }
      },
    },
  };
}

export function PowerChart({ series, bands, phases = null, name }: { series: TelemetrySeries[]; bands: Band[]; phases?: PhaseBands | null; name: string }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const withPhases = phases !== null && phases.legend.length > 0 ? phases : null;
  const phaseShape = withPhases ? withPhases.lanes.map((l) => `${l.node}:${l.bands.length}:${l.bands[0]?.fromMs}:${l.bands.at(-1)?.toMs}`).join('|') : '';
  const shape = series.map(seriesLabel).join('|') + '#' + bands.map((b) => `${b.label}:${b.fromMs}:${b.toMs}`).join('|') + '#' + phaseShape;

  // (Re)build the chart when the set of series or the bands change; otherwise only set data.
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const opts: uPlot.Options = {
      width: Math.max(320, el.clientWidth),
      height: 320,
      // Power from 0 W, so that a flat trace is not magnified into noise.
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      axes: [
        { label: 'time' },
        { label: 'power', values: (_u, vals) => vals.map((v) => formatPower(v)), size: 70 },
      ],
      series: [
        { label: 'time', value: (_u, v) => (v == null ? '—' : new Date(v * 1000).toLocaleTimeString()) },
        ...series.map((s, i): uPlot.Series => ({
          label: seriesLabel(s), stroke: STROKES[i % STROKES.length], dash: DASHES[i % DASHES.length], width: 1.5, spanGaps: true,
          value: (_u, v) => formatPower(v),
        })),
      ],
      plugins: [bandsPlugin(bands, withPhases)],
    };
    plot.current?.destroy();
    plot.current = new uPlot(opts, alignSeries(series) as uPlot.AlignedData, el);
    const ro = new ResizeObserver(() => plot.current?.setSize({ width: Math.max(320, el.clientWidth), height: 320 }));
    ro.observe(el);
    return () => { ro.disconnect(); plot.current?.destroy(); plot.current = null; };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [shape]);

  useEffect(() => {
    plot.current?.setData(alignSeries(series) as uPlot.AlignedData);
  }, [series]);

  const points = series.reduce((n, s) => n + s.t.length, 0);
  const last = series.reduce((m, s) => Math.max(m, s.t[s.t.length - 1] ?? 0), 0);
  return (
    <figure className="chart">
      <figcaption>
        Power per sensor ({points} points shown; bands: {withPhases ? `phases${withPhases.lanes.length > 1 ? ', one lane per node' : ''}, workload window (dashed edges)` : 'workload window'} and idle baseline).
        <span className="exports">
          <button type="button" aria-label="Export power plot as PNG" onClick={() => { const c = box.current?.querySelector('canvas'); if (c) void canvasPng(c).then((b) => downloadBlob(b, `${name}-power.png`)); }}>PNG</button>
          <button type="button" aria-label="Export power plot as SVG" onClick={() => downloadText(powerTraceSvg(series, bands, 900, 360, withPhases ?? undefined), `${name}-power.svg`, 'image/svg+xml')}>SVG</button>
        </span>
      </figcaption>
      <div ref={box} className="uplot-box" data-testid="power-chart" data-points={points} data-last-t={last} data-phase-lanes={withPhases?.lanes.length ?? 0} />
      {withPhases && <PhaseLegend phases={withPhases.legend} note={withPhases.note} />}
    </figure>
  );
}
