// Linear scales and "nice" ticks for the SVG charts.

export interface Scale {
  domain: [number, number];
  range: [number, number];
  (x: number): number;
}

export function linearScale(domain: [number, number], range: [number, number]): Scale {
  const [d0, d1] = domain;
  const [r0, r1] = range;
  const span = d1 - d0 || 1;
  const f = ((x: number) => r0 + ((x - d0) / span) * (r1 - r0)) as Scale;
  f.domain = domain;
  f.range = range;
  return f;
}

/** A step of 1, 2 or 5 × 10^k giving about `count` ticks over [lo, hi]. */
export function niceStep(lo: number, hi: number, count = 5): number {
  const raw = Math.abs(hi - lo) / Math.max(1, count);
  if (!(raw > 0) || !Number.isFinite(raw)) return 1;
  const power = 10 ** Math.floor(Math.log10(raw));
  const m = raw / power;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * power;
}

/** Ticks at multiples of niceStep inside [lo, hi]. */
export function ticks(lo: number, hi: number, count = 5): number[] {
  const step = niceStep(lo, hi, count);
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

/** [lo, hi] widened by `pad` of its span on each side (a point-sized span gets ±10 % or ±1). */
export function padded(lo: number, hi: number, pad = 0.08): [number, number] {
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return [0, 1];
  if (hi === lo) {
    const d = Math.abs(lo) * 0.1 || 1;
    return [lo - d, hi + d];
  }
  const d = (hi - lo) * pad;
  return [lo - d, hi + d];
}

/**
 * An interval of a quantity that cannot be below `floor` (time, energy, power: 0), cut there.
 * A 95 % interval from few repetitions can reach below zero (mean ± t·s/√n); the plot shows where
 * it was cut (`clipped`) instead of an axis of negative joules.
 */
export function clipInterval(lo: number, hi: number, floor = 0): { lo: number; hi: number; clipped: boolean } {
  return { lo: Math.max(floor, lo), hi: Math.max(floor, hi), clipped: lo < floor };
}

/** padded(lo, hi) for a quantity that cannot be below `floor`: the padding never takes the axis under it. */
export function paddedAbove(lo: number, hi: number, floor = 0, pad = 0.08): [number, number] {
  const [a, b] = padded(Math.max(floor, lo), Math.max(floor, hi), pad);
  return [Math.max(floor, a), Math.max(floor, b)];
}
