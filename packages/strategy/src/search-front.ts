/**
 * Pareto fronts and hypervolumes of two minimised objectives, for the search's acquisition and for
 * judging what a search found (bench/search.js).
 */

/** Indices of the non-dominated points (both minimised; equal points are all kept), in ascending order of the first objective. */
export function paretoIndices(points: readonly (readonly [number, number])[]): number[] {
  const order = points.map((_, i) => i).sort((i, j) => points[i]![0] - points[j]![0] || points[i]![1] - points[j]![1] || i - j);
  const kept: number[] = [];
  let bestY = Infinity;
  let lastX = NaN;
  let lastY = NaN;
  for (const i of order) {
    const [x, y] = points[i]!;
    // A point is dominated when an earlier one (smaller or equal x) has smaller y, or equal y with smaller x.
    if (y < bestY || (y === lastY && x === lastX)) {
      kept.push(i);
      if (y < bestY) bestY = y;
      lastX = x;
      lastY = y;
    }
  }
  return kept;
}

/**
 * Non-dominated sorting: rank 0 is the front, rank 1 the front of what is left, and so on.
 * O(R · n log n) for R ranks; used to choose which observations the surrogate keeps.
 */
export function paretoRanks(points: readonly (readonly [number, number])[]): number[] {
  const ranks = new Array<number>(points.length).fill(-1);
  let left = points.map((_, i) => i);
  for (let rank = 0; left.length > 0; rank++) {
    const front = paretoIndices(left.map((i) => points[i]!)).map((k) => left[k]!);
    for (const i of front) ranks[i] = rank;
    const inFront = new Set(front);
    left = left.filter((i) => !inFront.has(i));
  }
  return ranks;
}

function checkPoint(p: readonly number[], what: string): void {
  if (p.length !== 2 || !Number.isFinite(p[0]) || !Number.isFinite(p[1])) throw new RangeError(`${what} must be two finite numbers, got [${p.join(', ')}]`);
}

/**
 * The area dominated by the points and bounded by the reference point, both objectives minimised.
 * Points not strictly better than the reference on both objectives add nothing. O(n log n).
 */
export function hypervolume2d(points: readonly (readonly [number, number])[], reference: readonly [number, number]): number {
  checkPoint(reference, 'hypervolume2d: the reference point');
  for (const p of points) checkPoint(p, 'hypervolume2d: a point');
  const inside = points.filter((p) => p[0] < reference[0] && p[1] < reference[1]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let area = 0;
  let prevY = reference[1];
  for (const [x, y] of inside) {
    if (y >= prevY) continue;
    area += (reference[0] - x) * (prevY - y);
    prevY = y;
  }
  return area;
}

/**
 * What a point z adds to the hypervolume of a front (sorted by ascending first objective, as
 * paretoIndices returns it), within the reference. When z adds nothing (it is dominated, or
 * outside the reference), the result is minus the distance it would have to move on both
 * objectives to stop being dominated: so candidates that add nothing are still ranked, the
 * nearest to the front first. O(front size).
 */
export function improvement(front: readonly (readonly [number, number])[], z: readonly [number, number], reference: readonly [number, number]): number {
  const [a, b] = z;
  let shortfall = -Infinity;
  for (const f of front) {
    const need = Math.min(a - f[0], b - f[1]);
    if (need > shortfall) shortfall = need;
  }
  const outside = Math.max(a - reference[0], b - reference[1]);
  if (shortfall >= 0 || outside >= 0) return -Math.max(shortfall, outside, 0) - 1e-12;
  // Box dominated by z, less the part of it the front already dominates.
  let covered = 0;
  let prevY = reference[1];
  for (const f of front) {
    const x = Math.max(f[0], a);
    const y = Math.max(f[1], b);
    if (x >= reference[0] || y >= prevY) continue;
    covered += (reference[0] - x) * (prevY - y);
    prevY = y;
  }
  return (reference[0] - a) * (reference[1] - b) - covered;
}
