import { z } from 'zod';

/**
 * Regression verdicts: what counts as a regression (the policy and its defaults), one verdict
 * per configuration and metric, and one per campaign. @erg/regress decides them with these
 * types; the API serves them with these schemas; the CLI prints them.
 */

/** The figures a verdict is given on. */
export const VerdictMetric = z.enum(['time', 'energy']);
export type VerdictMetric = z.infer<typeof VerdictMetric>;

export const VerdictStatus = z.enum(['pass', 'regressed', 'improved', 'inconclusive']);
export type VerdictStatus = z.infer<typeof VerdictStatus>;

/** Why a verdict is inconclusive. */
export const InconclusiveReason = z.enum(['too_few_repetitions', 'too_noisy']);
export type InconclusiveReason = z.infer<typeof InconclusiveReason>;

/** Why a whole campaign is inconclusive: a configuration's reason, or no verdicts at all. */
export const CampaignInconclusiveReason = z.enum([...InconclusiveReason.options, 'no_verdicts']);
export type CampaignInconclusiveReason = z.infer<typeof CampaignInconclusiveReason>;

/**
 * What counts as a regression; every field is a fraction, not a percentage. The defaults:
 * slower or costlier by more than 5 % at p < 0.05, with at least 3 repetitions per side (Welch
 * needs 2; 3 gives a usable spread) and a coefficient of variation of at most 25 %.
 */
export const RegressionPolicy = z
  .object({
    threshold: z.number().min(0).max(10).default(0.05).describe('relative change that counts, e.g. 0.05 = 5 %'),
    alpha: z.number().gt(0).lt(1).default(0.05).describe('significance level of the one-sided Welch test'),
    minRepetitions: z.int().min(2).max(1000).default(3).describe('fewest repetitions per side for a verdict'),
    maxCv: z.number().gt(0).max(10).default(0.25).describe('largest coefficient of variation per side for a verdict'),
  })
  .strict()
  .meta({ id: 'RegressionPolicy' });
export type RegressionPolicyInput = z.input<typeof RegressionPolicy>;
export type RegressionPolicyOutput = z.output<typeof RegressionPolicy>;

/** The policy with every default: what a suite or a verdict request that names none is judged by. */
export const DEFAULT_REGRESSION_POLICY: Readonly<RegressionPolicyOutput> = Object.freeze(RegressionPolicy.parse({}));

export const MetricVerdict = z
  .object({
    metric: VerdictMetric,
    status: VerdictStatus,
    reason: InconclusiveReason.optional().describe('set exactly when status is inconclusive'),
    change: z.number().nullable().describe('mean(candidate) / mean(baseline) − 1; null when either side is empty'),
    ci95: z.tuple([z.number(), z.number()]).nullable().describe('95 % interval of the change (delta method on log means); null when a side has fewer than 2 values'),
    p: z.number().nullable().describe('one-sided Welch p-value in the direction of the change; null when a side has fewer than 2 values'),
    nBaseline: z.number(),
    nCandidate: z.number(),
    cvBaseline: z.number().nullable().describe('std / mean of the baseline; null when it is empty'),
    cvCandidate: z.number().nullable().describe('std / mean of the candidate; null when it is empty'),
  })
  .meta({ id: 'MetricVerdict' });
export type MetricVerdict = z.infer<typeof MetricVerdict>;

const StatusCounts = z.object({ pass: z.number(), regressed: z.number(), improved: z.number(), inconclusive: z.number() });

/** One verdict for a campaign's configurations, as @erg/regress's campaignVerdict decides it. */
export const CampaignVerdict = z.object({
  status: VerdictStatus,
  counts: StatusCounts.describe('verdicts per status, over all configurations and metrics'),
  reasons: z.array(CampaignInconclusiveReason).describe('why the campaign is inconclusive, most frequent first'),
  worst: z.array(z.object({ key: z.string(), verdict: MetricVerdict })).describe('the verdicts that decided the status'),
});
export type CampaignVerdict = z.infer<typeof CampaignVerdict>;

/** GET /v1/campaigns/:id/verdict (keys in the order the answer has always had them: the serializer follows the schema). */
export const CampaignVerdictView = z.object({
  campaignId: z.string(),
  baselineId: z.string(),
  policy: z.object({ threshold: z.number(), alpha: z.number(), minRepetitions: z.number(), maxCv: z.number() }),
  ...CampaignVerdict.shape,
  configurations: z.array(z.object({ key: z.string(), verdicts: z.array(MetricVerdict) })),
  onlyInCandidate: z.array(z.string()),
  onlyInBaseline: z.array(z.string()),
}).meta({ id: 'CampaignVerdict' });
export type CampaignVerdictView = z.infer<typeof CampaignVerdictView>;
