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

/** How a sequential suite spreads its false-regression rate (alpha) and its futility rate (beta) over its looks. */
export const SpendingFunction = z.enum(['pocock', 'obrien-fleming']);
export type SpendingFunction = z.infer<typeof SpendingFunction>;

/**
 * Sequential testing for a suite (issue 16): a run starts with `minRepetitions` per configuration
 * and adds one repetition at a time to the configurations still undecided, up to `maxRepetitions`.
 * Each look tests at the share of alpha the spending function assigns it (Lan–DeMets), so over all
 * looks the false-regression rate stays ≤ alpha (@erg/regress's sequentialVerdictFor).
 */
export const SequentialPolicy = z
  .object({
    maxRepetitions: z.int().min(3).max(1000).describe('most repetitions per configuration; the run starts with minRepetitions and adds one per look while undecided'),
    spending: SpendingFunction.default('obrien-fleming').describe('how alpha is spread over the looks that may declare a regression: obrien-fleming (little early, most at the maximum) or pocock (more evenly)'),
    beta: z.number().gt(0).lt(0.5).default(0.1).describe('futility: a look stops with pass once a regression of detect or more is ruled out at this one-sided level'),
    detect: z.number().gt(0).max(10).optional().describe('the regression a run must catch, e.g. 0.1 = 10 %; default twice the threshold'),
  })
  .strict()
  .meta({ id: 'SequentialPolicy' });
export type SequentialPolicyOutput = z.output<typeof SequentialPolicy>;

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
    sequential: SequentialPolicy.optional().describe('absent: every run has its template\'s repetitions (the fixed design); set: sequential testing, for suites'),
  })
  .strict()
  .superRefine((policy, ctx) => {
    if (policy.sequential && policy.sequential.maxRepetitions <= policy.minRepetitions) {
      ctx.addIssue({
        code: 'custom', path: ['sequential', 'maxRepetitions'],
        message: `must be more than minRepetitions (${policy.minRepetitions}): a sequential run adds repetitions from minRepetitions up to maxRepetitions; remove sequential for a fixed number`,
      });
    }
    if (policy.sequential?.detect !== undefined && policy.sequential.detect <= policy.threshold) {
      ctx.addIssue({
        code: 'custom', path: ['sequential', 'detect'],
        message: `must be more than threshold (${policy.threshold}): futility stops once a regression of detect is ruled out; leave it out for twice the threshold`,
      });
    }
  })
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

/**
 * Why a configuration's sequential test stopped: a boundary crossed (regressed or improved), a
 * regression beyond the threshold ruled out (pass), the maximum reached (the verdict there is
 * final), or a baseline no repetition of the candidate can help (too few or too noisy).
 */
export const SequentialStop = z.enum(['boundary', 'regression_ruled_out', 'max_repetitions', 'baseline_unusable']);
export type SequentialStop = z.infer<typeof SequentialStop>;

/** Why a sequential suite run stopped adding repetitions. */
export const SequentialRunStop = z.enum(['regressed', 'decided', 'max_repetitions', 'runs_failed', 'campaign_cancelled', 'no_baseline']);
export type SequentialRunStop = z.infer<typeof SequentialRunStop>;

/** A sequential suite run's looks: where it stands, what it cost against the fixed design, why it stopped. */
export const SequentialRunView = z
  .object({
    look: z.number().describe('looks taken: 0 until the first repetitions have ended, then one more each time the runs were judged'),
    maxRepetitions: z.number(),
    spending: SpendingFunction,
    runsUsed: z.number().describe('runs the campaign has (every state)'),
    runsFixed: z.number().describe('runs the fixed design would have: configurations × maxRepetitions'),
    stop: SequentialRunStop.nullable().describe('null while the run may still add repetitions; regressed: a boundary was crossed; decided: every configuration decided before the maximum; max_repetitions: some reached it; runs_failed / campaign_cancelled: runs did not complete; no_baseline: the first run, at the maximum, becomes the baseline'),
    configurations: z
      .array(
        z.object({
          key: z.string(),
          repetitions: z.number().describe('repetitions scheduled for this configuration so far'),
          stop: SequentialStop.nullable().describe('why its test stopped; null: still undecided (at the last look, or when the run stopped for another configuration)'),
          level: z.number().describe('the one-sided significance level its latest look tested at (its share of alpha)'),
        }),
      )
      .describe('per configuration at the latest look'),
  })
  .meta({ id: 'SequentialRun' });
export type SequentialRunView = z.infer<typeof SequentialRunView>;
