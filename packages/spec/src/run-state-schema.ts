import { z } from 'zod';
import { RUN_STATES, UNFINISHED_RUN_STATES } from './run-state';

/** A run's state, validated (the lifecycle and the state sets are in run-state.ts). */
export const RunState = z.enum(RUN_STATES);
export type RunState = z.infer<typeof RunState>;

/** A state before a terminal one, validated (e.g. the queue view's `state` filter). */
export const UnfinishedRunState = z.enum(UNFINISHED_RUN_STATES);
export type UnfinishedRunState = z.infer<typeof UnfinishedRunState>;
