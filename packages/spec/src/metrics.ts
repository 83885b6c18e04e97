import { z } from 'zod';
import { Identifier } from './param-value';

export const MetricReduce = z.enum(['last', 'first', 'min', 'max', 'mean', 'sum', 'count']);
export type MetricReduce = z.infer<typeof MetricReduce>;

/** How many capture groups a regex source has, or an error message when it does not compile. */
export function regexCaptureGroups(source: string): number | string {
  try {
    // An empty alternative makes every regex match "", which reveals its group count.
    const match = new RegExp(`${source}|`).exec('');
    return (match?.length ?? 1) - 1;
  } catch (err) {
    return (err as Error).message;
  }
}

/** A figure of merit read from the workload's output, one value per matching line, then reduced. */
export const Metric = z
  .strictObject({
    name: Identifier,
    regex: z.string().min(1).max(1000),
    reduce: MetricReduce.default('last'),
    source: z.enum(['stdout', 'stderr']).default('stdout'),
    unit: z.string().max(32).optional(),
    /**
     * The metric counts work done by the run (steps, samples, tokens): erg then reports energy
     * per unit of it (J/step, …).
     */
    work: z.boolean().default(false),
  })
  .superRefine((metric, ctx) => {
    const groups = regexCaptureGroups(metric.regex);
    if (typeof groups === 'string') {
      ctx.addIssue({
        code: 'custom',
        path: ['regex'],
        message: `not a valid regular expression: ${groups}`,
        params: { code: 'invalid_regex' },
      });
    } else if (groups === 0 && metric.reduce !== 'count') {
      ctx.addIssue({
        code: 'custom',
        path: ['regex'],
        message: `needs a capture group around the number, e.g. 'loss=([0-9.]+)' (only reduce: count works without one)`,
        params: { code: 'invalid_regex' },
      });
    }
  });
export type Metric = z.infer<typeof Metric>;

export const Metrics = z
  .array(Metric)
  .max(64)
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
