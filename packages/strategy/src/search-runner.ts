import type { SearchCandidate, SearchObservation, SearchOptions, SearchSettings, SearchStep } from './search';
import { searchStep } from './search';

/**
 * How a search's step is run: inline (searchStep itself), or off the event loop by a host that has
 * worker threads (the scheduler's worker pool, apps/scheduler/src/search-offload.ts). This is the
 * contract between them: the step's arguments as one value a worker can take, the function the
 * worker calls, the budget a step may take, and the one failure a runner reports as final.
 */

/** Runs one search step; the scheduler's runs it in a worker thread, under SEARCH_STEP_BUDGET_MS. */
export type SearchStepRunner = (...args: Parameters<typeof searchStep>) => ReturnType<typeof searchStep> | Promise<ReturnType<typeof searchStep>>;

/**
 * What a SearchStepRunner throws for a step that would fail again on the same input (it ran past
 * its budget, or its worker ran out of memory): the search stops with the reason (search-step.ts).
 * Any other error rolls the step back for a later one.
 */
export class SearchStepFailed extends Error {}

/** searchStep's arguments, as one value (what a worker thread is sent). */
export interface SearchStepInput {
  settings: SearchSettings;
  candidates: readonly SearchCandidate[];
  observations: readonly SearchObservation[];
  options: SearchOptions;
}

/** Worker time one search step may take: ten times the slowest measured (100,000 candidates, 300 results). */
export const SEARCH_STEP_BUDGET_MS = 10_000;

/** What a worker thread runs for a SearchStepInput. */
export function runSearchStepInput(input: SearchStepInput): SearchStep {
  return searchStep(input.settings, input.candidates, input.observations, input.options);
}
