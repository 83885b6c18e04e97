// Power traces: which series are power, how they line up for uPlot (one shared x array, gaps as
// null), how new points from `from=<last t>` are appended, and the SVG version of the plot for
// export (uPlot draws on a canvas).
import { formatPower } from './format';
import { patternSvg } from './patterns';
import type { PhaseBands } from './phases';
import { linearScale, padded, ticks } from './scale';
import type { TelemetrySeries } from './types';

/** Series in watts (`*.power` sensors, or unit W), labelled `node · sensor`. */
export function powerSeries(series: readonly TelemetrySeries[]): TelemetrySeries[] {
  return series.filter((s) => s.unit === 'W' || s.sensor.endsWith('.power'));
}

export function seriesLabel(s: Pick<TelemetrySeries, 'node' | 'sensor'>): string {
  return `${s.node} · ${s.sensor}`;
}

/**
 * uPlot's data: the sorted union of all timestamps in seconds, then one array per series with its
 * value at each timestamp or null where it has no sample.
 */
export function alignSeries(series: readonly Pick<TelemetrySeries, 't' | 'v'>[]): [number[], ...(number | null)[][]] {
  const all = new Set<number>();
  for (const s of series) for (const t of s.t) all.add(t);
  const xs = [...all].sort((a, b) => a - b);
  const index = new Map(xs.map((t, i) => [t, i]));
  const ys = series.map((s) => {
    const y: (number | null)[] = new Array(xs.length).fill(null);
    s.t.forEach((t, i) => { y[index.get(t)!] = s.v[i]!; });
    return y;
  });
  return [xs.map((t) => t / 1000), ...ys];
}

/** The latest timestamp over all series (ms), or null with no samples. */
export function lastTime(series: readonly Pick<TelemetrySeries, 't'>[]): number | null {
  let last: number | null = null;
  for (const s of series) {
    const t = s.t[s.t.length - 1];
    if (t !== undefined && (last === null || t > last)) last = t;
  }
  return last;
}

/** `current` with the points of `fresh` that are later than each series' last point appended; new series added. */
export function appendSeries(current: readonly TelemetrySeries[], fresh: readonly TelemetrySeries[]): TelemetrySeries[] {
  const out = current.map((s) => ({ ...s, t: [...s.t], v: [...s.v] }));
  for (const f of fresh) {
    const s = out.find((o) => o.node === f.node && o.sensor === f.sensor);
    if (!s) { out.push({ ...f, t: [...f.t], v: [...f.v] }); continue; }
    const last = s.t[s.t.length - 1] ?? -Infinity;
    f.t.forEach((t, i) => {
      if (t > last) { s.t.push(t); s.v.push(f.v[i]!); }
    });
    s.samples = s.t.length;
  }
  return out;
}

export interface Band {
  label: string;
  fromMs: number;
  toMs: number;
}

/** Escapes text for SVG/XML content and attributes. */
export function xmlEscape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}

const DASHES = ['', '6 3', '2 2', '8 3 2 3', '1 3', '10 4'];

/**
 * The power plot as a standalone SVG document: one polyline per series (each with its own dash
 * pattern, named in the legend), the bands (workload, idle baseline) as hatched rectangles with
 * their labels, the phase bands (one lane per node, each phase its pattern, named in a second
 * legend row) when given, axes in seconds from the first sample and in watts.
 */
export function powerTraceSvg(series: readonly TelemetrySeries[], bands: readonly Band[], width = 900, height = 360, phases?: PhaseBands): string {
  const withPhases = phases !== undefined && phases.legend.length > 0;
  if (withPhases) height += 18;
  const left = 64, right = width - 16, top = 16, bottom = height - (withPhases ? 82 : 64);
  const ts = series.flatMap((s) => s.t);
  const vs = series.flatMap((s) => s.v);
  const t0 = ts.length ? Math.min(...ts) : 0;
  const t1 = ts.length ? Math.max(...ts) : 1;
  const sx = linearScale([0, (t1 - t0) / 1000 || 1], [left, right]);
  const yDomain = padded(0, vs.length ? Math.max(...vs) : 1, 0.05);
  const sy = linearScale([0, yDomain[1]], [bottom, top]);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#f4f4f4"/><line x1="0" y1="0" x2="0" y2="6" stroke="#999" stroke-width="1"/></pattern>' +
      (withPhases ? phases.legend.map((p) => patternSvg(`phase-${p.index}`, p.index)).join('') : '') +
      '</defs>',
    `<rect width="${width}" height="${height}" fill="white"/>`,
  ];
  for (const b of bands) {
    const x0 = Math.max(left, sx((b.fromMs - t0) / 1000));
    const x1 = Math.min(right, sx((b.toMs - t0) / 1000));
    if (x1 <= x0) continue;
    parts.push(`<rect class="band" x="${x0.toFixed(1)}" y="${top}" width="${(x1 - x0).toFixed(1)}" height="${bottom - top}" fill="url(#hatch)" opacity="0.6"/>`);
    parts.push(`<text x="${(x0 + 4).toFixed(1)}" y="${top + 12}">${xmlEscape(b.label)}</text>`);
  }
  if (withPhases) {
    const laneH = (bottom - top) / phases.lanes.length;
    phases.lanes.forEach((lane, i) => {
      const y = top + i * laneH;
      for (const b of lane.bands) {
        const x0 = Math.max(left, sx((b.fromMs - t0) / 1000));
        const x1 = Math.min(right, sx((b.toMs - t0) / 1000));
        if (x1 <= x0) continue;
        parts.push(`<rect class="phase-band" data-phase="${xmlEscape(b.phase)}" x="${x0.toFixed(1)}" y="${y.toFixed(1)}" width="${(x1 - x0).toFixed(1)}" height="${laneH.toFixed(1)}" fill="url(#phase-${b.index})" opacity="0.4"><title>${xmlEscape(b.open.join(' › '))}</title></rect>`);
        if (x1 - x0 > b.phase.length * 6.5 + 8) parts.push(`<text x="${(x0 + 4).toFixed(1)}" y="${(y + laneH - 6).toFixed(1)}">${xmlEscape(b.phase)}</text>`);
      }
      if (phases.lanes.length > 1) parts.push(`<text x="${right - 4}" y="${(y + 12).toFixed(1)}" text-anchor="end" font-weight="bold">${xmlEscape(lane.node)}</text>`);
    });
  }
  parts.push(`<line x1="${left}" y1="${bottom}" x2="${right}" y2="${bottom}" stroke="black"/><line x1="${left}" y1="${top}" x2="${left}" y2="${bottom}" stroke="black"/>`);
  for (const v of ticks(0, (t1 - t0) / 1000 || 1, 8)) {
    parts.push(`<text x="${sx(v).toFixed(1)}" y="${bottom + 14}" text-anchor="middle">${v}</text>`);
  }
  for (const v of ticks(0, yDomain[1], 5)) {
    parts.push(`<text x="${left - 4}" y="${(sy(v) + 4).toFixed(1)}" text-anchor="end">${xmlEscape(formatPower(v))}</text>`);
  }
  parts.push(`<text x="${(left + right) / 2}" y="${bottom + 30}" text-anchor="middle">time since first sample (s)</text>`);
  series.forEach((s, i) => {
    const pts = s.t.map((t, j) => `${sx((t - t0) / 1000).toFixed(1)},${sy(s.v[j]!).toFixed(1)}`).join(' ');
    parts.push(`<polyline class="series" fill="none" stroke="black" stroke-width="1.5" stroke-dasharray="${DASHES[i % DASHES.length]}" points="${pts}"/>`);
    const ly = bottom + 46;
    const lx = left + (i % 6) * 140;
    parts.push(`<line x1="${lx}" y1="${ly}" x2="${lx + 24}" y2="${ly}" stroke="black" stroke-width="1.5" stroke-dasharray="${DASHES[i % DASHES.length]}"/><text x="${lx + 28}" y="${ly + 4}">${xmlEscape(seriesLabel(s))}</text>`);
  });
  if (withPhases) {
    const ly = bottom + 64;
    let lx = left;
    for (const { name, index } of phases.legend) {
      parts.push(`<rect x="${lx}" y="${ly - 9}" width="12" height="12" fill="url(#phase-${index})" stroke="black" stroke-width="0.5"/><text x="${lx + 16}" y="${ly + 1}">${xmlEscape(name)}</text>`);
      lx += 28 + name.length * 6.5;
    }
    parts.push(`<text x="${lx}" y="${ly + 1}" fill="#555">(blank: inside no phase)</text>`);
  }
  parts.push('</svg>');
  return parts.join('\n');
}
