// @erg/suites — regression suites: a campaign template run on demand or on a cron schedule,
// each run judged against a baseline (a campaign's verdict, campaign-verdict.ts, which GET
// /v1/campaigns/:id/verdict also shows), the verdict announced by webhook.
export { SuiteError, type SuiteErrorCode } from './errors';
export { validateSuite, validateSuiteText, type ValidSuite, type ValidateSuiteResult } from './validate';
export { cronIssue, isTimeZone, nextRunAt } from './cron';
export { applySchedule, removeSchedule, syncSchedules, schedulerIdOf } from './schedule';
export { triggerSuite, type TriggerDeps, type TriggerOptions } from './trigger';
export { initialSequentialState, judgeSuiteRun, judgeFinishedSuiteRuns, lookAtSuiteRun, type SequentialState } from './judge';
export { campaignVerdictView, sequentialCampaignVerdict } from './campaign-verdict';
export { suiteView, suiteRunView } from './views';
export {
  webhookBody, deliverWebhook, failureMessage, signature, viewerDeliveryError, WebhookError, WEBHOOK_EVENT, INTERNAL_FAILURE, NO_WEBHOOK_FAILURE,
  type DeliveryOptions, type Resolver, type WebhookFailure,
} from './webhook';
export { checkWebhookUrl, compilePolicy, DEFAULT_WEBHOOK_POLICY, policyIssues, webhookUrlIssues, type CompiledPolicy } from './webhook-policy';
export { cutSecretFromYaml } from './secret-text';
