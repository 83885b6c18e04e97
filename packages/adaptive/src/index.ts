// @erg/adaptive — the decisions of adaptive campaigns (issue 16): pure functions of the runs'
// figures, shared by the scheduler, the API's views and the simulation bench.
export { logSample, pooledVariance, varianceOf, type LogSample, type Pooled } from './log-stats';
export {
  plan, type AdaptiveSettings, type ConfigurationDecision, type ConfigurationRuns, type ConfigurationStatus, type ObjectiveNames, type Plan, type PlanOptions, type Spent,
} from './plan';
export { hypervolume2d, searchStep, type SearchCandidate, type SearchObservation, type SearchOptions, type SearchSettings, type SearchStep } from './search';
