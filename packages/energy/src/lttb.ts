import { EnergyInputError } from './errors';

/** A downsampled series and where its points came from. */
export interface Downsampled {
  t: number[];
  v: number[];
  /** Indices into the input of the points kept, ascending. */
  indices: number[];
}

/**
 * Largest-Triangle-Three-Buckets downsampling to about `maxPoints` points for plotting: the
 * first and last points are always kept, and each bucket in between contributes the point
 * that spans the largest triangle with its neighbours' choices.
 *
 * Peaks are not lost: in the bucket holding the series' global maximum (or minimum), LTTB's
 * choice is replaced by that extreme, so a power spike always reaches the plot. The output has
 * at most `maxPoints` points, or `maxPoints + 1` when the global maximum and minimum fall in
 * the same bucket (both are kept). An input of at most `maxPoints` points is returned whole.
 */
export function lttb(t: ArrayLike<number>, v: ArrayLike<number>, maxPoints: number): Downsampled {
  const n = t.length;
  if (v.length !== n) throw new EnergyInputError('ERG_ENERGY_LENGTH_MISMATCH', `t has ${n} values and v has ${v.length}; they must pair up`);
  if (!Number.isInteger(maxPoints) || maxPoints < 3) {
    throw new EnergyInputError('ERG_ENERGY_BAD_ARGUMENT', `maxPoints must be an integer ≥ 3 (first, last and one bucket), got ${maxPoints}`);
  }
  const indices: number[] = [];
  if (n <= maxPoints) {
    for (let i = 0; i < n; i++) indices.push(i);
  } else {
    let iMax = -1;
    let iMin = -1;
    for (let i = 0; i < n; i++) {
      const x = v[i]!;
      if (Number.isNaN(x)) continue;
      if (iMax < 0 || x > v[iMax]!) iMax = i;
      if (iMin < 0 || x < v[iMin]!) iMin = i;
    }
    const buckets = maxPoints - 2;
    const every = (n - 2) / buckets; // > 1, so no bucket is empty
    // Bucket k is [bound(k), bound(k + 1)); pinning the last bound avoids losing index n − 2 to rounding.
    const bound = (k: number) => (k >= buckets ? n - 1 : Math.floor(k * every) + 1);
    let a = 0;
    indices.push(0);
    for (let b = 0; b < buckets; b++) {
      const from = bound(b);
      const to = bound(b + 1);
      const extremes = [iMax, iMin].filter((i) => i >= from && i < to).sort((x, y) => x - y);
      if (extremes.length > 0) {
        if (extremes.length === 2 && extremes[0] === extremes[1]) extremes.pop(); // a flat series: max = min
        indices.push(...extremes);
        a = extremes[extremes.length - 1]!;
        continue;
      }
      // The third corner: the mean of the next bucket (the last point for the last bucket).
      const nextFrom = to;
      const nextTo = b + 1 >= buckets ? n : bound(b + 2);
      let avgT = 0;
      let avgV = 0;
      for (let i = nextFrom; i < nextTo; i++) {
        avgT += t[i]!;
        avgV += v[i]!;
      }
      const count = nextTo - nextFrom;
      avgT /= count;
      avgV /= count;
      const at = t[a]!;
      const av = v[a]!;
      let best = from;
      let bestArea = -1;
      for (let i = from; i < to; i++) {
        const area = Math.abs((at - avgT) * (v[i]! - av) - (at - t[i]!) * (avgV - av));
        if (area > bestArea) {
          bestArea = area;
          best = i;
        }
      }
      indices.push(best);
      a = best;
    }
    indices.push(n - 1);
  }
  return { t: indices.map((i) => t[i]!), v: indices.map((i) => v[i]!), indices };
}
