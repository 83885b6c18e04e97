import { z } from 'zod';

// Its own module: results.ts (configurations) and phases.ts (phases per configuration) both
// summarise repetitions, and results.ts also carries the phases.
/** Repetitions of one figure summarised (see @erg/energy's summarize). */
export const Summary = z
  .object({
    n: z.number().describe('values counted (runs that measured this figure)'),
    mean: z.number().nullable().describe('null only when n = 0, as are std, ci95, min and max'),
    std: z.number().nullable().describe('sample standard deviation (divisor n − 1); 0 when n = 1'),
    ci95: z.tuple([z.number(), z.number()]).nullable().describe('two-sided 95 % Student-t interval of the mean; [mean, mean] when n = 1'),
    cv: z.number().nullable().describe('coefficient of variation std / |mean|; null when n = 0 or the mean is 0'),
    min: z.number().nullable(),
    max: z.number().nullable(),
  })
  .meta({ id: 'Summary' });
export type Summary = z.infer<typeof Summary>;
