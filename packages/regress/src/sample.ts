import { RegressInputError } from './errors';

/** Mean and sample variance (divisor n − 1) in two passes, which keeps precision for large, close values. */
export function meanVar(xs: readonly number[]): { n: number; mean: number; variance: number } {
  const n = xs.length;
  let sum = 0;
  for (const x of xs) sum += x;
  const mean = sum / n;
  let ss = 0;
  for (const x of xs) ss += (x - mean) ** 2;
  return { n, mean, variance: n > 1 ? ss / (n - 1) : 0 };
}

/** Throws unless every value is a finite number; `what` names the sample in the message. */
export function requireFinite(xs: readonly number[], what: string): void {
  const i = xs.findIndex((x) => typeof x !== 'number' || !Number.isFinite(x));
  if (i >= 0) throw new RegressInputError('ERG_REGRESS_BAD_SAMPLE', `${what}[${i}] must be a finite number, got ${String(xs[i])}`);
}
