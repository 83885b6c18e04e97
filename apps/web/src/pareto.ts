// Geometry of the Pareto plot: per configuration the mean of one objective (x: time unless the
// results were asked ?objectives=) against another (y: energy), with the 95 % intervals as error
// bars in both directions, the front as a line through its points (by x), and text labels on the
// runtime-, energy- and EDP-optimal points (and the least-carbon and cheapest where those are on
// an axis). No objective is ever negative: the axes start at 0 or above, and an interval reaching
// below 0 is cut at 0 and says so (xClipped, yClipped). Each point carries its place on the front
// under uncertainty (the results' claims): on the front, not distinguishable from it, or
// distinguishably dominated. Pure: the React component draws exactly what this returns, and the
// tests check it.
import { objectiveInfo, resultsObjectives, type ObjectiveInfo, type ObjectivePair } from './objectives';
import { entryId, interval, marksWithFootprintOf, paretoStatusText, type Marks } from './results';
import { scatterLayout, type ScatterLayout, type ScatterPoint } from './scatter';
import type { CampaignResults } from './types';

export interface ParetoPoint extends ScatterPoint {
  marks: Marks;
  /** Its place on the front at the claims' confidence; null where the results carry no claim of it. */
  status: 'front' | 'tied_with_front' | 'dominated' | null;
  /** That place in words ("front, tied with b", "≈ front (a)", "dominated by a"); '' without a claim. */
  statusText: string;
}

export interface ParetoLayout extends ScatterLayout<ParetoPoint> {
  /** The front as SVG polyline points "x,y x,y …", by increasing x. */
  front: string;
  /** What the front was decided on, and the axes show: [x, y]. */
  objectives: ObjectivePair;
  x: ObjectiveInfo;
  y: ObjectiveInfo;
}

export const OPTIMAL_LABELS = { time: 'fastest', energy: 'least energy', edp: 'lowest EDP', carbon: 'least carbon', cost: 'cheapest' } as const;

/** The label of a point from its marks, or null when it is none of the optima (carbon and cost count where marked). */
export function optimalLabel(marks: Marks): string | null {
  const parts = [
    marks.bestTime && OPTIMAL_LABELS.time, marks.bestEnergy && OPTIMAL_LABELS.energy, marks.bestEdp && OPTIMAL_LABELS.edp,
    marks.bestCarbon && OPTIMAL_LABELS.carbon, marks.bestCost && OPTIMAL_LABELS.cost,
  ].filter(Boolean);
  return parts.length === 0 ? null : parts.join(' · ');
}

/** The plot of `results` on the objectives its front was decided on (`results.objectives`). */
export function paretoLayout(results: CampaignResults, width = 640, height = 400): ParetoLayout {
  const objectives = resultsObjectives(results);
  const x = objectiveInfo(objectives[0], results.currency ?? null);
  const y = objectiveInfo(objectives[1], results.currency ?? null);
  // Configurations with measurements (a point) and a mean of both objectives.
  const measured = results.configurations.filter((c) => c.point !== null && x.summary(c)?.mean != null && y.summary(c)?.mean != null);
  const marks = measured.map((c) => {
    const m = marksWithFootprintOf(results, c);
    // Least carbon and cheapest are labelled only where the plot shows carbon or cost.
    return { ...m, bestCarbon: m.bestCarbon && objectives.includes('carbon'), bestCost: m.bestCost && objectives.includes('cost') };
  });
  const L = scatterLayout(
    measured.map((c, i) => ({
      key: c.key, x: x.summary(c)!.mean!, y: y.summary(c)!.mean!, xInterval: interval(x.summary(c)!.ci95), yInterval: interval(y.summary(c)!.ci95),
      label: optimalLabel(marks[i]!),
    })),
    width, height, y.tick,
  );
  const claims = results.claims ?? null;
  const points = L.points.map((p, i): ParetoPoint => {
    const id = entryId(measured[i]!);
    const claim = claims?.pareto.find((c) => c.id === id) ?? null;
    return { ...p, marks: marks[i]!, status: claim?.status ?? null, statusText: claims ? paretoStatusText(claims, id) : '' };
  });
  // The front names entries by id (the key, unless grouped by fingerprint).
  const byId = new Map(points.map((p, i) => [entryId(measured[i]!), p]));
  const front = results.paretoFront
    .map((id) => byId.get(id))
    .filter((p): p is ParetoPoint => p !== undefined)
    .sort((a, b) => a.xValue - b.xValue)
    .map((p) => `${round(p.x)},${round(p.y)}`)
    .join(' ');
  return { ...L, points, front, objectives, x, y };
}

function round(v: number): number {
  return Math.round(v * 10) / 10;
}
