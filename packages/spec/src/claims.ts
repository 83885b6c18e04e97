import { z } from 'zod';
import { RunOrder } from './design';

/**
 * What a campaign's results claim, and how sure they are (issue 26): the design the runs
 * followed, each comparison with the interval of the ratio of the two configurations' means and
 * whether it is distinguishable after Holm's adjustment over every comparison made, the
 * validity of its runs, and the effect of the nodes they ran on. @erg/energy computes them
 * (claims.ts, validity.ts, node-effects.ts); docs/experiments.md explains them.
 */

/** The objectives a comparison can be on: those the results rank configurations by. */
export const ClaimObjective = z.enum(['time', 'energy', 'edp', 'carbon', 'cost']);
export type ClaimObjective = z.infer<typeof ClaimObjective>;

/**
 * One comparison of two configurations on one objective: the ratio mean(other) / mean(reference)
 * with its interval at the campaign's confidence (delta method on the log of the ratio of means,
 * Welch–Satterthwaite degrees of freedom — the same statistic as regression verdicts), its
 * two-sided p-value, and Holm's adjusted p-value over every comparison of the campaign.
 */
export const Comparison = z
  .object({
    id: z.string().describe('a stable name for this comparison within the results, e.g. "time:a|b"'),
    objective: ClaimObjective,
    reference: z.string().describe('the entry the claim favours (e.g. the fastest)'),
    other: z.string().describe('the entry it is compared with'),
    ratio: z.number().nullable().describe('mean(other) / mean(reference); null when a mean is missing or not positive'),
    interval: z
      .tuple([z.number(), z.number()])
      .nullable()
      .describe("the ratio's interval at the campaign's confidence (this comparison's own, not adjusted); null with fewer than 2 runs on a side"),
    p: z.number().nullable().describe('two-sided p-value of "the means are equal"; null when it cannot be tested'),
    pAdjusted: z.number().nullable().describe("Holm's adjustment of p over the campaign's comparisons (the family); null when not tested"),
    distinguishable: z.boolean().describe('pAdjusted below 1 − confidence: the difference is a finding; false: the two are tied'),
    n: z.tuple([z.int(), z.int()]).describe('runs counted for reference and other (paired: the blocks both have, each side)'),
    paired: z
      .boolean()
      .describe("compared block by block: the campaign's run order has blocks (repetition r of every configuration ran side by side) and at least 2 blocks have both; drift between blocks then cancels"),
    note: z.string().nullable().describe('why it could not be tested, where it could not'),
  })
  .meta({ id: 'Comparison' });
export type Comparison = z.infer<typeof Comparison>;

/** The best entry on one objective, and who it cannot be told apart from. */
export const RankClaim = z
  .object({
    objective: ClaimObjective,
    best: z.string().describe('least mean (the point estimate, as `best`)'),
    tiedWith: z.array(z.string()).describe('entries whose difference from the best is not distinguishable: the best is not ranked above them'),
    distinguishable: z.boolean().describe('true: the best is distinguishably better than every other entry'),
    comparisons: z.array(z.string()).describe('ids of the comparisons behind this claim (best against each other entry)'),
  })
  .meta({ id: 'RankClaim' });
export type RankClaim = z.infer<typeof RankClaim>;

/**
 * An entry's place on the Pareto front, under uncertainty: `front` — on the front of the means;
 * `tied_with_front` — dominated on the means, but not distinguishably from its closest dominator
 * (it may belong on the front); `dominated` — distinguishably dominated by `against`.
 */
export const ParetoClaim = z
  .object({
    id: z.string(),
    status: z.enum(['front', 'tied_with_front', 'dominated']),
    against: z.string().nullable().describe('the front member it was compared with (its closest dominator); null for front members'),
    tiedWith: z.array(z.string()).describe('front members: the neighbours on the front it cannot be told apart from on either objective'),
    comparisons: z.array(z.string()).describe('ids of the comparisons behind this claim'),
  })
  .meta({ id: 'ParetoClaim' });
export type ParetoClaim = z.infer<typeof ParetoClaim>;

/** The trade-off between the fastest and the most frugal entry, with its uncertainty. */
export const TradeoffClaim = z
  .object({
    fastest: z.string(),
    mostFrugal: z.string(),
    time: z.string().describe('id of the comparison of their times'),
    energy: z.string().describe('id of the comparison of their energies'),
    distinguishable: z.boolean().describe('both differences are distinguishable: choosing one over the other is a real trade-off'),
    statement: z.string().describe('the trade-off in a sentence, with both intervals, or why it is not one'),
  })
  .meta({ id: 'TradeoffClaim' });
export type TradeoffClaim = z.infer<typeof TradeoffClaim>;

export const CampaignClaims = z
  .object({
    confidence: z.number().describe("the campaign's design.confidence"),
    method: z.string().describe('how each comparison was tested and the family adjusted, in words'),
    family: z.int().describe('comparisons that could be tested: the size of the Holm family'),
    comparisons: z.array(Comparison),
    ranks: z.array(RankClaim).describe('time, energy and edp (and carbon, cost where the entries have them)'),
    pareto: z.array(ParetoClaim).describe('one per entry with a point on the front objectives'),
    tradeoff: TradeoffClaim.nullable(),
    distinguishable: z.boolean().describe('at least one comparison is distinguishable'),
    summary: z.string().describe('the findings in a sentence: "no distinguishable difference between the 2 configurations at 95 % …" when none is'),
    truncated: z.boolean().describe('true when the entries were more than the claims cover (the MAX_CLAIM_ENTRIES with the most runs, by mean time)'),
  })
  .meta({ id: 'CampaignClaims' });
export type CampaignClaims = z.infer<typeof CampaignClaims>;

/** The run order the campaign's runs followed. */
export const CampaignDesignView = z
  .object({
    order: RunOrder,
    seed: z.int().nullable().describe('the seed of the randomized order; null for orders without one'),
    confidence: z.number(),
    nodes: z.array(z.string()).nullable().describe('the nodes runs were balanced over (design.nodes); null: Slurm chose'),
    note: z.string().describe('the order in words, e.g. "randomized complete blocks (seed 1234): repetition r of every configuration forms block r, in a random order per block"'),
  })
  .meta({ id: 'CampaignDesign' });
export type CampaignDesignView = z.infer<typeof CampaignDesignView>;

/** The gates a run's measurement is checked against (see the spec's validity block). */
export const VALIDITY_CHECKS = ['sample_share', 'longest_gap', 'sampling_interval', 'clock_offset', 'clock_spread', 'counter_agreement', 'idle_stability'] as const;
export const ValidityCheckName = z.enum(VALIDITY_CHECKS);
export type ValidityCheckName = z.infer<typeof ValidityCheckName>;

/** One gate of one run: its worst value over the nodes and sensors it applies to. */
export const ValidityCheck = z
  .object({
    check: ValidityCheckName,
    status: z.enum(['pass', 'fail', 'not_measured']).describe('not_measured: nothing to judge (no such sensor pair, no idle baseline, telemetry from the spool without a clock reading)'),
    value: z.number().nullable().describe('the worst value (a share, seconds, a ratio, ms, a relative difference, a CV)'),
    limit: z.number().describe("the spec's threshold"),
    where: z.string().nullable().describe('the node and sensor of the worst value, e.g. "node1 gpu0.power"'),
    detail: z.string().describe('the check in a sentence'),
  })
  .meta({ id: 'ValidityCheck' });
export type ValidityCheck = z.infer<typeof ValidityCheck>;

export const RunValidity = z
  .object({
    valid: z.boolean().describe('every gate passed or was not measured'),
    checks: z.array(ValidityCheck),
    reasons: z.array(z.string()).describe('one sentence per failed gate; empty when valid'),
    excluded: z
      .boolean()
      .describe("true: invalid, and the campaign's validity.excludeInvalid leaves it out of every figure that counts runs (results, adaptive decisions, suite verdicts)"),
  })
  .meta({ id: 'RunValidity' });
export type RunValidity = z.infer<typeof RunValidity>;

/** A campaign's validity: whether its results can be published as they are. */
export const CampaignValidity = z
  .object({
    publishable: z.boolean().describe('every completed run passed its gates (or was left out by excludeInvalid) and every claim rests on valid runs'),
    runs: z.int().describe('completed runs checked'),
    valid: z.int(),
    invalid: z.int(),
    unchecked: z.int().describe('completed runs without validity (figures computed by an older erg, or none yet)'),
    excluded: z.int().describe('invalid runs left out of the figures (validity.excludeInvalid, or ?valid=only)'),
    failures: z.partialRecord(ValidityCheckName, z.int()).describe('runs failing each gate'),
    note: z.string(),
  })
  .meta({ id: 'CampaignValidity' });
export type CampaignValidity = z.infer<typeof CampaignValidity>;

/** How a node's runs differ from their configurations' means. */
export const NodeEffect = z
  .object({
    node: z.string().describe('the node (a multi-node run counts under its node list, e.g. "gh-[001-002]")'),
    runs: z.int(),
    time: z.object({ mean: z.number().nullable(), interval: z.tuple([z.number(), z.number()]).nullable() }).describe("mean relative residual of time: run / its configuration's mean − 1, with its interval"),
    energy: z.object({ mean: z.number().nullable(), interval: z.tuple([z.number(), z.number()]).nullable() }),
    distinguishable: z.boolean().describe('an interval excludes 0: this node measures differently from the others'),
  })
  .meta({ id: 'NodeEffect' });
export type NodeEffect = z.infer<typeof NodeEffect>;

export const CampaignNodes = z
  .object({
    nodes: z.int().describe('distinct nodes (or node lists) the counted runs ran on'),
    effects: z.array(NodeEffect),
    confounded: z
      .array(z.object({ key: z.string(), node: z.string(), runs: z.int() }))
      .describe('configurations whose counted runs (at least 2) all ran on one node while the campaign used several: their figures cannot be told apart from that node\'s effect'),
    note: z.string(),
  })
  .meta({ id: 'CampaignNodes' });
export type CampaignNodes = z.infer<typeof CampaignNodes>;

// A run's cooldown (NodeCooldown, RunCooldown) lives in run-cooldown.ts: the run view (api.ts) shows
// it too, and importing it alone there keeps the API document's order of schemas as it was.
export { NodeCooldown, RunCooldown } from './run-cooldown';
