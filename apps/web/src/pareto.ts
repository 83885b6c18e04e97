// Geometry of the Pareto plot: mean time (x) against mean energy (y) per configuration, with the
// 95 % intervals as error bars in both directions, the front as a line through its points (by
// time), and text labels on the runtime-, energy- and EDP-optimal points. Time and energy are
// never negative: the axes start at 0 or above, and an interval reaching below 0 is cut at 0 and
// says so (xClipped, yClipped). Pure: the React component draws exactly what this returns, and
// the tests check it.
import { interval, marksOf, type Marks } from './results';
import { clipInterval, linearScale, paddedAbove, ticks } from './scale';
import type { CampaignResults } from './types';

export interface ParetoPoint {
  key: string;
  x: number;
  y: number;
  /** Error bars in pixels: [left, right] and [top, bottom]; equal to x/y when there is no interval. */
  xBar: [number, number];
  yBar: [number, number];
  /** The time interval reaches below 0 s: its left end is cut at the axis (drawn as an arrow, not a cap). */
  xClipped: boolean;
  /** The energy interval reaches below 0 J: its lower end is cut at the axis. */
  yClipped: boolean;
  timeS: number;
  energyJ: number;
  marks: Marks;
  /** Text drawn beside the point: "fastest", "least energy", "lowest EDP", joined by " · ". */
  label: string | null;
  labelX: number;
  labelY: number;
  labelAnchor: 'start' | 'end';
}

export interface ParetoLayout {
  width: number;
  height: number;
  plot: { left: number; top: number; right: number; bottom: number };
  points: ParetoPoint[];
  /** The front as SVG polyline points "x,y x,y …", by increasing time. */
  front: string;
  xTicks: { value: number; x: number }[];
  yTicks: { value: number; y: number }[];
  /** What the axes span (s, J): never below 0. */
  xDomain: [number, number];
  yDomain: [number, number];
}

export const OPTIMAL_LABELS = { time: 'fastest', energy: 'least energy', edp: 'lowest EDP' } as const;

/** The label of a point from its marks, or null when it is none of the three optima. */
export function optimalLabel(marks: Marks): string | null {
  const parts = [marks.bestTime && OPTIMAL_LABELS.time, marks.bestEnergy && OPTIMAL_LABELS.energy, marks.bestEdp && OPTIMAL_LABELS.edp].filter(Boolean);
  return parts.length === 0 ? null : parts.join(' · ');
}

const MARGIN = { left: 72, right: 16, top: 16, bottom: 48 };
/** Roughly the width of one label character at the plot's font size (px). */
const CHAR_W = 6.5;

export function paretoLayout(results: CampaignResults, width = 640, height = 400): ParetoLayout {
  const plot = { left: MARGIN.left, top: MARGIN.top, right: width - MARGIN.right, bottom: height - MARGIN.bottom };
  const measured = results.configurations.filter((c) => c.point !== null && c.timeS.mean !== null && c.energyJ.mean !== null);
  // Each configuration's intervals, cut at 0 (the means of time and energy are positive).
  const bars = new Map(measured.map((c) => {
    const t = interval(c.timeS.ci95) ?? [c.timeS.mean!, c.timeS.mean!];
    const e = interval(c.energyJ.ci95) ?? [c.energyJ.mean!, c.energyJ.mean!];
    return [c, { t: clipInterval(t[0], t[1]), e: clipInterval(e[0], e[1]) }] as const;
  }));
  const xs: number[] = [];
  const ys: number[] = [];
  for (const [c, b] of bars) {
    xs.push(b.t.lo, b.t.hi, c.timeS.mean!);
    ys.push(b.e.lo, b.e.hi, c.energyJ.mean!);
  }
  const xDomain = paddedAbove(Math.min(...xs), Math.max(...xs));
  const yDomain = paddedAbove(Math.min(...ys), Math.max(...ys));
  const sx = linearScale(xDomain, [plot.left, plot.right]);
  const sy = linearScale(yDomain, [plot.bottom, plot.top]);
  const points: ParetoPoint[] = measured.map((c) => {
    const x = sx(c.timeS.mean!);
    const y = sy(c.energyJ.mean!);
    const { t, e } = bars.get(c)!;
    const marks = marksOf(results, c);
    const label = optimalLabel(marks);
    // Labels go right of the point unless they would leave the plot, then left of it.
    const textW = (label?.length ?? 0) * CHAR_W;
    const right = x + 8 + textW <= plot.right;
    return {
      key: c.key, x, y,
      xBar: [sx(t.lo), sx(t.hi)],
      yBar: [sy(e.hi), sy(e.lo)],
      xClipped: t.clipped,
      yClipped: e.clipped,
      timeS: c.timeS.mean!, energyJ: c.energyJ.mean!, marks, label,
      labelX: right ? x + 8 : x - 8,
      labelY: Math.max(plot.top + 10, y - 8),
      labelAnchor: right ? 'start' : 'end',
    };
  });
  spreadLabels(points);
  const byKey = new Map(points.map((p) => [p.key, p]));
  const front = results.paretoFront
    .map((k) => byKey.get(k))
    .filter((p): p is ParetoPoint => p !== undefined)
    .sort((a, b) => a.timeS - b.timeS)
    .map((p) => `${round(p.x)},${round(p.y)}`)
    .join(' ');
  return {
    width, height, plot, points, front, xDomain, yDomain,
    xTicks: ticks(xDomain[0], xDomain[1], 6).map((value) => ({ value, x: sx(value) })),
    yTicks: ticks(yDomain[0], yDomain[1], 5).map((value) => ({ value, y: sy(value) })),
  };
}

/** Moves labels that would overlap another label down by one line (12 px), in order of y. */
function spreadLabels(points: ParetoPoint[]): void {
  const labelled = points.filter((p) => p.label !== null).sort((a, b) => a.labelY - b.labelY);
  for (let i = 1; i < labelled.length; i++) {
    const p = labelled[i]!;
    for (const q of labelled.slice(0, i)) {
      const overlapX = Math.abs(p.labelX - q.labelX) < Math.max(p.label!.length, q.label!.length) * CHAR_W;
      if (overlapX && Math.abs(p.labelY - q.labelY) < 12) p.labelY = q.labelY + 12;
    }
  }
}

function round(x: number): number {
  return Math.round(x * 10) / 10;
}
