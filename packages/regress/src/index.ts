// @erg/regress — pure regression verdicts for CI: Welch's t-test, relative change with its
// 95 % interval, a verdict per configuration and metric, and one verdict per campaign.
export { type RegressErrorCode, RegressInputError } from './errors';
export { type WelchResult, welch } from './welch';
export { type ChangeUnavailableReason, type RelativeChange, relativeChange } from './relative-change';
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
