// Geometry of a scatter of means with 95 % whiskers both ways, for quantities that are never
// negative (time, energy, EDP, carbon, cost, bytes): the axes start at 0 or above, and an interval
// reaching below 0 is cut at the axis and says so (xClipped, yClipped; the charts draw an arrow at
// the axis instead of a cap, as `path.clipped`). Text labels sit beside their points, inside the
// plot and apart. The Pareto plot (pareto.ts) and the bytes-against-energy scatter (movement.ts)
// are both drawn from this. Pure: the React components draw exactly what it returns.
import { interval } from './results';
import { clipInterval, linearScale, paddedAbove, ticks } from './scale';

/** One point to place, in the axes' units. */
export interface ScatterInput {
  key: string;
  x: number;
  y: number;
  /** The 95 % interval of x; null: none (drawn as no whisker). */
  xInterval: readonly [number, number] | null;
  yInterval: readonly [number, number] | null;
  /** Text drawn beside the point; null: none. */
  label: string | null;
}

export interface ScatterPoint {
  key: string;
  /** The point in pixels. */
  x: number;
  y: number;
  /** Whiskers in pixels: [left, right] and [top, bottom]; equal to x/y when there is no interval. */
  xBar: [number, number];
  yBar: [number, number];
  /** The x interval reaches below 0: its left end is cut at the axis (drawn as an arrow, not a cap). */
  xClipped: boolean;
  /** The y interval reaches below 0: its lower end is cut at the axis. */
  yClipped: boolean;
  /** The means, in the axes' units. */
  xValue: number;
  yValue: number;
  label: string | null;
  labelX: number;
  labelY: number;
  labelAnchor: 'start' | 'end';
}

export interface ScatterLayout<P extends ScatterPoint = ScatterPoint> {
  width: number;
  height: number;
  plot: { left: number; top: number; right: number; bottom: number };
  points: P[];
  xTicks: { value: number; x: number }[];
  yTicks: { value: number; y: number }[];
  /** What the axes span, in their units: never below 0. */
  xDomain: [number, number];
  yDomain: [number, number];
}

const MARGIN = { left: 72, right: 16, top: 16, bottom: 48 };
/** Room for the y axis' title, written upwards at the left edge (px). */
const TITLE_W = 24;
/** Roughly the width of one label character at the plots' font size (px). */
export const LABEL_CHAR_W = 6.5;

/** A 95 % interval scaled into an axis' unit (bytes → GB: 1e-9), or null when there is none. */
export function scaledInterval(ci95: readonly number[] | null | undefined, factor = 1): [number, number] | null {
  const ends = interval(ci95);
  return ends && [ends[0] * factor, ends[1] * factor];
}

/**
 * The layout of `inputs` (in their order) on a `width` × `height` plot. `yTick` is how the y
 * ticks will read: the plot starts right of the longest one (and of the axis' title).
 */
export function scatterLayout(inputs: readonly ScatterInput[], width = 640, height = 400, yTick: (value: number) => string = String): ScatterLayout {
  // Each point's intervals, cut at 0 (the means themselves are never negative).
  const bars = inputs.map((p) => {
    const x = p.xInterval ?? [p.x, p.x];
    const y = p.yInterval ?? [p.y, p.y];
    return { x: clipInterval(x[0], x[1]), y: clipInterval(y[0], y[1]) };
  });
  const xs = inputs.flatMap((p, i) => [bars[i]!.x.lo, bars[i]!.x.hi, p.x]);
  const ys = inputs.flatMap((p, i) => [bars[i]!.y.lo, bars[i]!.y.hi, p.y]);
  const xDomain = paddedAbove(Math.min(...xs), Math.max(...xs));
  const yDomain = paddedAbove(Math.min(...ys), Math.max(...ys));
  const yValues = ticks(yDomain[0], yDomain[1], 5);
  // The axis' title (about 20 px from the edge), a gap, the longest tick, the tick mark.
  const left = Math.max(MARGIN.left, Math.ceil(TITLE_W + Math.max(0, ...yValues.map((v) => yTick(v).length)) * LABEL_CHAR_W + 10));
  const plot = { left, top: MARGIN.top, right: width - MARGIN.right, bottom: height - MARGIN.bottom };
  const sx = linearScale(xDomain, [plot.left, plot.right]);
  const sy = linearScale(yDomain, [plot.bottom, plot.top]);
  const points = inputs.map((p, i): ScatterPoint => {
    const x = sx(p.x);
    const y = sy(p.y);
    const b = bars[i]!;
    // Labels go right of the point unless they would leave the plot, then left of it.
    const right = x + 8 + (p.label?.length ?? 0) * LABEL_CHAR_W <= plot.right;
    return {
      key: p.key, x, y,
      xBar: [sx(b.x.lo), sx(b.x.hi)],
      yBar: [sy(b.y.hi), sy(b.y.lo)],
      xClipped: b.x.clipped,
      yClipped: b.y.clipped,
      xValue: p.x, yValue: p.y,
      label: p.label,
      labelX: right ? x + 8 : x - 8,
      labelY: Math.max(plot.top + 10, y - 8),
      labelAnchor: right ? 'start' : 'end',
    };
  });
  spreadLabels(points);
  return {
    width, height, plot, points, xDomain, yDomain,
    xTicks: ticks(xDomain[0], xDomain[1], 6).map((value) => ({ value, x: sx(value) })),
    yTicks: yValues.map((value) => ({ value, y: sy(value) })),
  };
}

/** Moves labels that would overlap another label down by one line (12 px), in order of y. */
function spreadLabels(points: ScatterPoint[]): void {
  const labelled = points.filter((p) => p.label !== null).sort((a, b) => a.labelY - b.labelY);
  for (let i = 1; i < labelled.length; i++) {
    const p = labelled[i]!;
    for (const q of labelled.slice(0, i)) {
      const overlapX = Math.abs(p.labelX - q.labelX) < Math.max(p.label!.length, q.label!.length) * LABEL_CHAR_W;
      if (overlapX && Math.abs(p.labelY - q.labelY) < 12) p.labelY = q.labelY + 12;
    }
  }
}
