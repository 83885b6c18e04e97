// Power over time per sensor with uPlot; the workload window and the idle baseline drawn as
// hatched bands with their names. Exports: the canvas as PNG, and an SVG version of the same
// series (powerTraceSvg) since uPlot draws no SVG.
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import { formatPower } from '../../format';
import { alignSeries, powerTraceSvg, seriesLabel, type Band } from '../../series';
import type { TelemetrySeries } from '../../types';
import { canvasPng, downloadBlob, downloadText } from '../exporting';

const STROKES = ['#1f5fa8', '#c0392b', '#2e7d32', '#8e44ad', '#d35400', '#555555'];
const DASHES: number[][] = [[], [6, 3], [2, 2], [8, 3, 2, 3], [1, 3], [10, 4]];

function bandsPlugin(bands: readonly Band[]): uPlot.Plugin {
  return {
    hooks: {
      drawClear: (u: uPlot) => {
        const ctx = u.ctx;
        for (const b of bands) {
          const x0 = u.valToPos(b.fromMs / 1000, 'x', true);
          const x1 = u.valToPos(b.toMs / 1000, 'x', true);
          const left = Math.max(u.bbox.left, Math.min(x0, x1));
          const right = Math.min(u.bbox.left + u.bbox.width, Math.max(x0, x1));
          if (right <= left) continue;
          ctx.save();
          ctx.fillStyle = b.label.startsWith('idle') ? 'rgba(120,120,120,0.12)' : 'rgba(31,95,168,0.10)';
          ctx.fillRect(left, u.bbox.top, right - left, u.bbox.height);
          ctx.strokeStyle = 'rgba(0,0,0,0.25)';
          ctx.beginPath();
          ctx.rect(left, u.bbox.top, right - left, u.bbox.height);
          ctx.clip();
          // Hatching, so that the bands differ without colour: idle "\\\\", workload "////".
          const step = 10 * devicePixelRatio;
          for (let x = left - u.bbox.height; x < right + u.bbox.height; x += step) {
            ctx.moveTo(x, u.bbox.top);
            ctx.lineTo(b.label.startsWith('idle') ? x - u.bbox.height : x + u.bbox.height, u.bbox.top + u.bbox.height);
          }
          ctx.stroke();
          ctx.restore();
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

export function PowerChart({ series, bands, name }: { series: TelemetrySeries[]; bands: Band[]; name: string }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const shape = series.map(seriesLabel).join('|') + '#' + bands.map((b) => `${b.label}:${b.fromMs}:${b.toMs}`).join('|');

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
      plugins: [bandsPlugin(bands)],
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
        Power per sensor ({points} points shown; bands: workload window and idle baseline).
        <span className="exports">
          <button type="button" aria-label="Export power plot as PNG" onClick={() => { const c = box.current?.querySelector('canvas'); if (c) void canvasPng(c).then((b) => downloadBlob(b, `${name}-power.png`)); }}>PNG</button>
          <button type="button" aria-label="Export power plot as SVG" onClick={() => downloadText(powerTraceSvg(series, bands), `${name}-power.svg`, 'image/svg+xml')}>SVG</button>
        </span>
      </figcaption>
      <div ref={box} className="uplot-box" data-testid="power-chart" data-points={points} data-last-t={last} />
    </figure>
  );
}
