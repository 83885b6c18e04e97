import { z } from 'zod';
import { CampaignView, ClusterName } from './api';
import { CampaignVerdictView, DEFAULT_REGRESSION_POLICY, RegressionPolicy, SequentialRunView, SpendingFunction } from './verdict';
import { CampaignSpec } from './campaign';
import { allowHostsList } from './host-policy';

/**
 * Suites: a named campaign template run on demand (what CI calls) or on a cron schedule, every
 * run judged against a baseline. These schemas shape the requests and responses of /v1/suites.
 */

export const SuiteName = ClusterName;

export const SuiteSchedule = z
  .object({
    cron: z
      .string()
      .min(1)
      .max(120)
      .describe('five fields (minute hour day-of-month month day-of-week) or six with seconds first, e.g. "0 2 * * *" for 02:00 every day'),
    timezone: z.string().min(1).max(64).default('UTC').describe('IANA time zone the cron expression is read in, e.g. Europe/Berlin'),
  })
  .strict()
  .meta({ id: 'SuiteSchedule' });

export const BaselinePolicy = z
  .discriminatedUnion('policy', [
    z.object({ policy: z.literal('last-passing') }).strict(),
    z.object({ policy: z.literal('pinned'), campaignId: z.uuid({ error: 'the id of the campaign every run is compared against' }) }).strict(),
  ])
  .meta({ id: 'BaselinePolicy' });

/**
 * Where a project's suites may send webhooks, set by an admin (PUT /v1/projects/{name}/webhook-policy).
 * By default: https only, and only to public addresses — never loopback, private, link-local,
 * multicast or reserved ones, checked on the address a name resolves to at delivery time.
 */
export const WebhookPolicy = z
  .object({
    allowHttp: z.boolean().default(false).describe('true: http:// webhook URLs are accepted too (the delivery is then readable and changeable on the way)'),
    allowHosts: allowHostsList(
      'internal hosts webhooks may reach although their addresses are not public: host names (exact, or *.suffix for any name below it), ' +
        'IP addresses or CIDR blocks. A name listed here may resolve to any address; any other name only to public ones or ones inside a listed block.',
    ),
  })
  .strict()
  .meta({ id: 'WebhookPolicy' });
export type WebhookPolicy = z.output<typeof WebhookPolicy>;

export const WebhookPolicyView = WebhookPolicy.extend({ project: z.string() }).meta({ id: 'WebhookPolicyView' });

export const SuiteWebhook = z
  .object({
    url: z
      .url({ protocol: /^https?$/, error: 'an https URL to POST the verdict to' })
      .max(2048)
      .describe('https by default (http only where the project\'s webhook policy allows it); no user:password@ — sign with secret instead'),
    secret: z
      .string()
      .min(16, { error: 'at least 16 characters: it keys the HMAC-SHA256 signature in X-Erg-Signature' })
      .max(256)
      .optional()
      .describe('write-only: signs each delivery (X-Erg-Signature: sha256=<hex HMAC of the body>)'),
  })
  .strict()
  .meta({ id: 'SuiteWebhook' });

/** Everything of a suite but its campaign template, which @erg/sweep validates with the size limits. */
export const SuiteFields = z
  .object({
    name: SuiteName,
    description: z.string().max(2000).optional(),
    campaign: z.unknown(),
    schedule: SuiteSchedule.nullable().default(null).describe('null: the suite runs only when triggered'),
    baseline: BaselinePolicy.default({ policy: 'last-passing' }),
    regression: RegressionPolicy.default({ ...DEFAULT_REGRESSION_POLICY }),
    webhook: SuiteWebhook.nullable().default(null).describe('POSTed with the verdict when a run of the suite finishes'),
  })
  .strict();
export type SuiteFields = z.output<typeof SuiteFields>;

/** The request body (for the OpenAPI document and the client's types): SuiteFields with the template typed. */
export const SuiteCreate = SuiteFields.extend({
  campaign: CampaignSpec.describe('the campaign every run submits; validated like POST /v1/campaigns (execution must be slurm)'),
}).meta({ id: 'SuiteCreate' });

export const SuiteRunStatus = z.enum(['running', 'pass', 'regressed', 'improved', 'inconclusive']);

export const SuiteRunView = z
  .object({
    id: z.string(),
    suite: z.string(),
    campaignId: z.string(),
    trigger: z.enum(['manual', 'schedule']),
    baselineId: z.string().nullable().describe('the campaign this run is judged against; null when the suite had no passing run yet'),
    status: SuiteRunStatus.describe('running until the campaign has finished'),
    reasons: z
      .array(z.string())
      .describe('why: no_baseline (first run: passes and becomes the baseline), runs_failed, campaign_cancelled, too_few_repetitions, too_noisy, no_verdicts'),
    campaign: CampaignView,
    verdict: CampaignVerdictView.nullable(),
    createdAt: z.string(),
    finishedAt: z.string().nullable(),
    webhook: z
      .object({
        status: z.enum(['pending', 'delivered', 'failed']),
        attempts: z.number(),
        lastError: z.string().nullable(),
        deliveredAt: z.string().nullable(),
      })
      .nullable(),
    sequential: SequentialRunView.nullable().describe('a sequential suite\'s looks (regression.sequential); null for the fixed design'),
  })
  .meta({ id: 'SuiteRun' });
export type SuiteRunView = z.infer<typeof SuiteRunView>;

export const SuiteView = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    cluster: z.string().nullable(),
    campaign: z.unknown().describe('the campaign template as validated, defaults applied'),
    schedule: z
      .object({ cron: z.string(), timezone: z.string(), nextRunAt: z.string().nullable().describe('next trigger time, ISO 8601 UTC') })
      .nullable(),
    baseline: z.object({ policy: z.enum(['last-passing', 'pinned']), campaignId: z.string().nullable() }),
    regression: z.object({
      threshold: z.number(), alpha: z.number(), minRepetitions: z.number(), maxCv: z.number(),
      sequential: z.object({ maxRepetitions: z.number(), spending: SpendingFunction, beta: z.number(), detect: z.number().optional() }).optional().describe('absent: the fixed design'),
    }),
    webhook: z.object({ url: z.string(), signed: z.boolean() }).nullable(),
    lastRun: z
      .object({ id: z.string(), campaignId: z.string(), status: SuiteRunStatus, createdAt: z.string(), finishedAt: z.string().nullable() })
      .nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Suite' });
export type SuiteView = z.infer<typeof SuiteView>;


/** GET /v1/suites. */
export const SuiteList = z.object({ items: z.array(SuiteView) }).meta({ id: 'SuiteList' });

/** GET /v1/suites/:name/runs: one page of a suite's runs, newest first, and how many there are. */
export const SuiteRunPage = z.object({ items: z.array(SuiteRunView), total: z.number() }).meta({ id: 'SuiteRunPage' });
