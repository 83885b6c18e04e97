/**
 * A metric's reduction as a running fold: O(1) memory whatever the number of matches (never an
 * array of values, never `Math.min(...values)`, whose spread overflows the stack at ~100,000).
 * A fold is a plain object, so it can cross to a worker thread and back with each chunk of output.
 *
 * Semantics (docs/campaign-spec.md § metrics): each match's first capture is converted with
 * `Number()`; empty or non-finite captures, and those beyond ±MAX_METRIC_MAGNITUDE (no figure of
 * merit is that large; a sum of two 1e308 is Infinity), are skipped; `count` counts every match,
 * numeric or not.
 */
import { MAX_METRIC_MAGNITUDE, type CampaignSpec } from '@erg/spec';

export type Reduce = CampaignSpec['metrics'][number]['reduce'];

export interface MetricFold {
  reduce: Reduce;
  /** Matches seen, numeric or not (a `last` fold sees only what settles each batch: regex-worker.ts). */
  matches: number;
  /** Numeric captures seen. */
  values: number;
  first: number | null;
  last: number | null;
  min: number;
  max: number;
  sum: number;
}

export function newFold(reduce: Reduce): MetricFold {
  return { reduce, matches: 0, values: 0, first: null, last: null, min: Infinity, max: -Infinity, sum: 0 };
}

/** Adds one match, given its first capture (undefined when the group did not take part). */
export function foldMatch(fold: MetricFold, capture: string | undefined): void {
  fold.matches++;
  if (capture === undefined || capture.trim() === '') return;
  const value = Number(capture);
  if (!Number.isFinite(value) || Math.abs(value) > MAX_METRIC_MAGNITUDE) return;
  fold.values++;
  if (fold.first === null) fold.first = value;
  fold.last = value;
  if (value < fold.min) fold.min = value;
  if (value > fold.max) fold.max = value;
  fold.sum += value;
}

/**
 * True once more matches cannot change the result *in the order they are fed*: a `first` metric
 * has its value. (A `last` metric scanned backwards is settled by its scanner, block by block.)
 */
export function isSettled(fold: MetricFold): boolean {
  return fold.reduce === 'first' && fold.first !== null;
}

/** The metric's value: null when no numeric match was seen (absence is not a measurement), except `count`. */
export function foldResult(fold: MetricFold): number | null {
  if (fold.reduce === 'count') return fold.matches;
  if (fold.values === 0) return null;
  switch (fold.reduce) {
    case 'first': return fold.first;
    case 'last': return fold.last;
    case 'min': return fold.min;
    case 'max': return fold.max;
    case 'sum': return fold.sum;
    case 'mean': return fold.sum / fold.values;
  }
}
