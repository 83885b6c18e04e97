// The stacked bar of energy by component per configuration: one horizontal bar per configuration,
// one segment per component kind (mean J), on a common scale. Each kind keeps its index, which
// selects its fill pattern, so the chart reads without colour.
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
}

const BAR_H = 22;
const GAP = 8;

export function stackedBars(configurations: readonly ConfigurationResult[], width = 640, labelWidth = 220): StackLayout {
  const withComponents = configurations.filter((c) => c.components && Object.keys(c.components).length > 0);
  const kinds = componentKinds(withComponents);
  const totals = withComponents.map((c) => kinds.reduce((s, k) => s + (c.components?.[k]?.mean ?? 0), 0));
  const max = Math.max(1e-9, ...totals);
  const plot = { left: labelWidth, top: 8, right: width - 16, bottom: 8 + withComponents.length * (BAR_H + GAP) };
  const sx = linearScale([0, max], [plot.left, plot.right]);
  const bars = withComponents.map((c, i): StackBar => {
    let acc = 0;
    const segments: StackSegment[] = [];
    kinds.forEach((kind, kindIndex) => {
      const v = c.components?.[kind]?.mean ?? 0;
      if (!(v > 0)) return;
      segments.push({ kind, kindIndex, valueJ: v, x: sx(acc), width: sx(acc + v) - sx(acc) });
      acc += v;
    });
    return { key: c.key, y: plot.top + i * (BAR_H + GAP), height: BAR_H, totalJ: totals[i]!, segments };
  });
  return {
    width, height: plot.bottom + 36, kinds, plot, bars,
    xTicks: ticks(0, max, 5).map((value) => ({ value, x: sx(value) })),
  };
}
