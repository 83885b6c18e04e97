import { z } from 'zod';

/** A time interval in Unix milliseconds: a workload's window, an idle baseline's, a cooldown's wait. */
export const TimeWindow = z.object({ startMs: z.number(), endMs: z.number() }).meta({ id: 'TimeWindow' });
export type TimeWindow = z.infer<typeof TimeWindow>;
