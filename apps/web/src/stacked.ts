// Stacked horizontal bars: one bar per configuration, one segment per part (a component kind, a
// phase), on a common scale from 0 J. Each part keeps its index in `kinds`, which the chart maps to
// a fill pattern, so the chart reads without colour. stackedBars stacks energy by component;
// phases.ts's phaseStackedBars stacks self energy by phase.
import { componentKinds } from './results';
import { linearScale, ticks } from './scale';
import type { ConfigurationResult } from './types';

export interface StackSegment {
  kind: string;
  kindIndex: number;
  valueJ: number;
  x: number;
  width: number;
}

export interface StackBar {
  key: string;
  y: number;
  height: number;
  totalJ: number;
  segments: StackSegment[];
}

export interface StackLayout {
  width: number;
  height: number;
  kinds: string[];
  plot: { left: number; top: number; right: number; bottom: number };
  bars: StackBar[];
  xTicks: { value: number; x: number }[];
  /** One entry per kind (its swatch's top left corner), in rows that fit the width. */
  legend: { kind: string; kindIndex: number; x: number; y: number }[];
}

/** One bar to stack: its parts' values (J) by kind; a kind it lacks counts 0. */
export interface StackRow {
  key: string;
  values: Readonly<Record<string, number | null | undefined>>;
}

const BAR_H = 22;
const GAP = 8;
/** Roughly the width of one legend character at the chart's font size (px). */
const CHAR_W = 6.5;
const LEGEND_ROW = 18;

/**
 * The bars of `rows`, their parts stacked left to right in the order of `kinds`. Parts of 0 J (or
 * below: an estimate cannot take energy back) are left out, and the total is what is drawn.
 */
export function stackLayout(rows: readonly StackRow[], kinds: readonly string[], width = 640, labelWidth = 220): StackLayout {
  const part = (r: StackRow, k: string) => Math.max(0, r.values[k] ?? 0);
  const totals = rows.map((r) => kinds.reduce((s, k) => s + part(r, k), 0));
  const max = Math.max(1e-9, ...totals);
  const plot = { left: labelWidth, top: 8, right: width - 16, bottom: 8 + rows.length * (BAR_H + GAP) };
  const sx = linearScale([0, max], [plot.left, plot.right]);
  const bars = rows.map((r, i): StackBar => {
    let acc = 0;
    const segments: StackSegment[] = [];
    kinds.forEach((kind, kindIndex) => {
      const v = part(r, kind);
      if (!(v > 0)) return;
      segments.push({ kind, kindIndex, valueJ: v, x: sx(acc), width: sx(acc + v) - sx(acc) });
      acc += v;
    });
    return { key: r.key, y: plot.top + i * (BAR_H + GAP), height: BAR_H, totalJ: totals[i]!, segments };
  });
  // The legend under the ticks, from the plot's left edge, wrapping onto new rows (a swatch of 14 px, the name, a gap).
  const legend: StackLayout['legend'] = [];
  let lx = plot.left, row = 0;
  kinds.forEach((kind, kindIndex) => {
    const w = 18 + kind.length * CHAR_W + 16;
    if (lx > plot.left && lx + w > width) { lx = plot.left; row++; }
    legend.push({ kind, kindIndex, x: lx, y: plot.bottom + 16 + row * LEGEND_ROW });
    lx += w;
  });
  return {
    width, height: plot.bottom + 20 + (row + 1) * LEGEND_ROW, kinds: [...kinds], plot, bars,
    xTicks: ticks(0, max, 5).map((value) => ({ value, x: sx(value) })),
    legend,
  };
}

/** Mean energy by component kind per configuration (those with components), kinds sorted. */
export function stackedBars(configurations: readonly ConfigurationResult[], width = 640, labelWidth = 220): StackLayout {
  const withComponents = configurations.filter((c) => c.components && Object.keys(c.components).length > 0);
  const rows = withComponents.map((c) => ({ key: c.key, values: Object.fromEntries(Object.entries(c.components ?? {}).map(([k, s]) => [k, s.mean])) }));
  return stackLayout(rows, componentKinds(withComponents), width, labelWidth);
}
