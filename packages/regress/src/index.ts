// @erg/regress — pure regression verdicts for CI: Welch's t-test, relative change with its
// 95 % interval, a verdict per configuration and metric, and one verdict per campaign; and the
// sequential design (alpha spending over looks) for suites that add repetitions while undecided.
export { type RegressErrorCode, RegressInputError } from './errors';
export { type WelchResult, welch } from './welch';
export { type ChangeUnavailableReason, type LogRatio, logRatioOfMeans, type RelativeChange, relativeChange } from './relative-change';
export { normalCdf, normalQuantile } from './normal';
export {
  DEFAULT_POLICY,
  type InconclusiveReason,
  type Metric,
  type RegressionPolicy,
  type Verdict,
  type VerdictStatus,
  verdictFor,
} from './verdict';
export { type CampaignInconclusiveReason, type CampaignVerdict, campaignVerdict } from './combine-verdicts';
export {
  type ConfigurationLook, decideLook, efficacyLevel, efficacyLooks, equalVarianceDf, type LookDecision, regressionRuledOut, type SequentialPolicy, type SequentialRegressionPolicy,
  type SequentialRunStop, type SequentialStop, type SequentialVerdict, sequentialVerdictFor, spent, type SpendingFunction,
} from './sequential';
