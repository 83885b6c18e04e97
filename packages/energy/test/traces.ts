// Synthetic telemetry for the tests: analytic power traces sampled regularly or with jitter,
// from a seeded generator so every run sees the same numbers.
import { seededRandom } from '@erg/testkit';

/** A realistic Unix-millisecond origin (2025-11-30T00:00:00Z), so precision is tested at real magnitudes. */
export const T0 = 1_764_460_800_000;

/** The seeded generator every test shares (mulberry32). */
export const rng = seededRandom;

/** Sample times from `fromMs` to `toMs` every `intervalMs`, each moved by up to ±jitterMs. */
export function sampleTimes(fromMs: number, toMs: number, intervalMs: number, jitterMs = 0, seed = 1): number[] {
  const r = rng(seed);
  const out: number[] = [];
  for (let x = fromMs; x <= toMs + 1e-9; x += intervalMs) out.push(x + (jitterMs ? (2 * r() - 1) * jitterMs : 0));
  return out;
}

/** A power series (W) of `p(seconds since T0)` at the given times. */
export function powerSeries(sensor: string, times: number[], p: (s: number) => number): { sensor: string; t: Float64Array; v: Float64Array } {
  return { sensor, t: Float64Array.from(times), v: Float64Array.from(times, (x) => p((x - T0) / 1000)) };
}

/** A window [T0 + a s, T0 + b s]. */
export function win(aS: number, bS: number): { startMs: number; endMs: number } {
  return { startMs: T0 + aS * 1000, endMs: T0 + bS * 1000 };
}

/** Relative error |x − exact| / |exact|. */
export function relErr(x: number, exact: number): number {
  return Math.abs(x - exact) / Math.abs(exact);
}
