import { z } from 'zod';
import { Identifier } from './param-value';
import { MAX_REGEX_CHARS, type UserRegex } from './user-regex';

export const MetricReduce = z.enum(['last', 'first', 'min', 'max', 'mean', 'sum', 'count']);
export type MetricReduce = z.infer<typeof MetricReduce>;

/**
 * Why a metric's compiled regex cannot give its values, or null: the value is its first capture
 * group, so only `count` (which counts matches) works without one. Checked when a spec comes in
 * (regex-checks.ts), with RE2's own refusals (user-regex.ts).
 */
export function metricRegexProblem(regex: UserRegex, reduce: MetricReduce): string | null {
  if (regex.groupCount() === 0 && reduce !== 'count') {
    return `needs a capture group around the number, e.g. 'loss=([0-9.]+)' (only reduce: count works without one)`;
  }
  return null;
}

/** A figure of merit read from the workload's output, one value per matching line, then reduced. */
export const Metric = z.strictObject({
  name: Identifier,
  /** RE2 syntax (user-regex.ts), checked when a spec comes in: a stored spec keeps the regex it was created with. */
  regex: z.string().min(1).max(MAX_REGEX_CHARS),
  reduce: MetricReduce.default('last'),
  source: z.enum(['stdout', 'stderr']).default('stdout'),
  unit: z.string().max(32).optional(),
  /**
   * The metric counts work done by the run (steps, samples, tokens): erg then reports energy
   * per unit of it (J/step, …).
   */
  work: z.boolean().default(false),
});
export type Metric = z.infer<typeof Metric>;

/** Most metrics of a spec. */
export const MAX_METRICS = 64;

export const Metrics = z
  .array(Metric)
  .max(MAX_METRICS)
  .superRefine((metrics, ctx) => {
    const first = new Map<string, number>();
    metrics.forEach((metric, i) => {
      const seen = first.get(metric.name);
      if (seen === undefined) first.set(metric.name, i);
      else {
        ctx.addIssue({
          code: 'custom',
          path: [i, 'name'],
          message: `metric "${metric.name}" is already defined at metrics[${seen}]; metric names must be unique`,
          params: { code: 'duplicate_metric' },
        });
      }
    });
  })
  .default([]);
