// @erg/strategy — campaigns whose strategy adds runs (`strategy: adaptive` and `strategy: search`),
// whole: the pure decisions (plan.ts: which configuration needs another repetition, which is
// dominated with confidence, when to stop; search.ts: which untried configurations to propose
// next, from a surrogate of the results), one step of either under the campaign's row lock
// (step.ts, search-step.ts: what the campaign's figures say → the decisions stored, the runs added),
// how a search step is run off the event loop (search-runner.ts), and the decisions view of
// GET /v1/campaigns/:id/decisions. Its SQL is @erg/db's (strategy.ts); the scheduler hosts the
// worker threads.
export { logSample, pooledVariance, varianceOf, type LogSample, type Pooled } from './log-stats';
export {
  plan, type AdaptiveSettings, type ConfigurationDecision, type ConfigurationRuns, type ConfigurationStatus, type ObjectiveNames, type Plan, type PlanOptions, type Spent,
} from './plan';
export { hypervolume2d, searchStep, type SearchCandidate, type SearchObservation, type SearchOptions, type SearchSettings, type SearchStep } from './search';
export { adaptCampaign, type AdaptOptions } from './step';
export type { AdaptStep } from './observed';
export { DEFAULT_SEARCH_PARALLEL, initialDesignOf, searchParallel } from './search-step';
export { runSearchStepInput, SEARCH_STEP_BUDGET_MS, SearchStepFailed, type SearchStepInput, type SearchStepRunner } from './search-runner';
export { campaignDecisionsView } from './decisions-view';
