import { z } from 'zod';
import { DEFAULT_OBJECTIVES, Objective, OBJECTIVES } from './carbon-cost';

/**
 * How a campaign spends its runs (issue 16). `grid` (the default): every configuration
 * `repetitions` times. `adaptive`: every configuration starts with `minRepetitions`, then more
 * runs go only where they change a decision — until its 95 % intervals are within
 * `targetRelativeHalfWidth`, or its place on the Pareto front of `objectives` is settled with
 * `confidence`; a configuration dominated with confidence is dropped (racing); the campaign stops
 * when nothing is undecided, at `maxRepetitions` per configuration, or at its budget.
 * @erg/strategy makes the decisions; docs/adaptive.md says how and with what confidence.
 */

/**
 * The two objectives a Pareto front is decided on, different from each other: a front of time
 * against time is one objective, and every configuration but the fastest would be "dominated".
 */
const ObjectivePair = z
  .tuple([Objective, Objective])
  .refine(([a, b]) => a !== b, {
    error: (iss) => `"${(iss.input as string[])[1]}" is objectives[0] already: a Pareto front needs two different objectives, of ${OBJECTIVES.join(', ')}`,
    path: [1],
    params: { code: 'duplicate_value' },
  })
  .default([...DEFAULT_OBJECTIVES]);

/** What an adaptive campaign may spend at most; every field optional, all that are given hold. */
export const StrategyBudget = z
  .strictObject({
    maxRuns: z.int().min(1).max(1_000_000).optional().describe('runs, failed ones included'),
    maxNodeHours: z.number().positive().max(1e9).optional().describe("node-hours: each run's time × its nodes"),
    maxEnergyKWh: z.number().positive().max(1e9).optional().describe("kWh of the runs' measured energy"),
  })
  .meta({ id: 'StrategyBudget' });
export type StrategyBudget = z.infer<typeof StrategyBudget>;

export const AdaptiveStrategy = z
  .strictObject({
    kind: z.literal('adaptive'),
    minRepetitions: z.int().min(2).max(100).default(2).describe('runs every configuration gets before any decision about it (at least 2: a spread needs two)'),
    maxRepetitions: z.int().min(2).max(1000).default(10).describe('runs no configuration goes beyond'),
    targetRelativeHalfWidth: z
      .number()
      .gt(0)
      .max(1)
      .default(0.05)
      .describe("a configuration is precise once its 95 % intervals' half-widths are at most this fraction of its means (0.05: ±5 %)"),
    confidence: z.number().min(0.5).max(0.999).default(0.95).describe('confidence of every drop and settle decision'),
    objectives: ObjectivePair.describe('the two objectives whose Pareto front the decisions are about (two different ones)'),
    budget: StrategyBudget.optional(),
    screening: z
      .boolean()
      .default(false)
      .describe('drop a configuration after its first run when one with its first runs dominates it with confidence, judged with the spread pooled over configurations (docs/adaptive.md#screening)'),
  })
  .meta({ id: 'AdaptiveStrategy' });
export type AdaptiveStrategy = z.infer<typeof AdaptiveStrategy>;

export const GridStrategy = z.strictObject({ kind: z.literal('grid') }).meta({ id: 'GridStrategy' });
export type GridStrategy = z.infer<typeof GridStrategy>;

/**
 * For spaces too large to run whole (thousands of configurations): a multi-objective search
 * (@erg/strategy's searchStep, docs/search.md) that runs a space-filling first design, then
 * proposes the configurations a surrogate of the results expects to improve the front most, in
 * batches sized to the runs it may have in flight, until its run budget is spent.
 */
export const SearchStrategy = z
  .strictObject({
    kind: z.literal('search'),
    repetitions: z.int().min(1).max(100).default(1).describe('runs of every configuration the search tries'),
    initialConfigurations: z.int().min(1).max(10_000).optional().describe('configurations of the space-filling first design (default: a fifth of the budget, at least 4)'),
    parallel: z
      .int()
      .min(1)
      .max(10_000)
      .optional()
      .describe('runs in flight at once: each batch fills the free ones (default 4)'),
    seed: z.int().min(0).max(2 ** 31 - 1).default(1).describe('the same seed and results give the same proposals'),
    objectives: ObjectivePair.describe('the two objectives whose Pareto front it searches (two different ones)'),
    budget: z.strictObject(
      { ...StrategyBudget.shape, maxRuns: z.int({ error: (iss) => (iss.input === undefined ? 'required: a search ends when its runs are spent (e.g. maxRuns: 200)' : undefined) }).min(1).max(1_000_000).describe('runs, failed ones included: the search ends when they are spent') },
      { error: (iss) => (iss.input === undefined ? 'required: a search ends at its budget; set strategy.budget.maxRuns (e.g. 200)' : undefined) },
    ),
  })
  .meta({ id: 'SearchStrategy' });
export type SearchStrategy = z.infer<typeof SearchStrategy>;

export const STRATEGY_KINDS = ['grid', 'adaptive', 'search'] as const;
export type StrategyKind = (typeof STRATEGY_KINDS)[number];

/**
 * `strategy: adaptive` (every parameter at its default), `strategy: { kind: adaptive, … }`, or
 * `grid` (the default when absent).
 */
export const Strategy = z
  .preprocess(
    (v) => (typeof v === 'string' ? { kind: v } : v),
    z.discriminatedUnion('kind', [GridStrategy, AdaptiveStrategy, SearchStrategy], {
      error: (iss) =>
        iss.code === 'invalid_union' ? `kind must be one of ${STRATEGY_KINDS.join(', ')} (or strategy: ${STRATEGY_KINDS.join(' | ')})` : undefined,
    }),
  )
  .default({ kind: 'grid' });
export type Strategy = z.output<typeof Strategy>;

/**
 * What the size limit is about: the most runs a campaign of `configurations` may use under its
 * strategy — for a search, its budget or the configurations it stores, whichever is more.
 */
export function maxRunsOf(strategy: Strategy, configurations: number, repetitions: number): number {
  if (strategy.kind === 'grid') return configurations * repetitions;
  if (strategy.kind === 'search') return Math.max(configurations, strategy.budget.maxRuns);
  const most = configurations * strategy.maxRepetitions;
  return strategy.budget?.maxRuns === undefined ? most : Math.min(most, strategy.budget.maxRuns);
}

/**
 * The runs a campaign is created with: every repetition of the grid, an adaptive campaign's
 * first `minRepetitions` (one with screening), or none for a search (its first step proposes the first design). Both
 * strategies add the rest as results land, so they start open.
 */
export function initialRuns(spec: { repetitions: number; strategy: Strategy }): { repetitions: number; strategyOpen: boolean } {
  // Screening gives every configuration one run first: its further first runs depend on what they show.
  if (spec.strategy.kind === 'adaptive') return { repetitions: spec.strategy.screening ? 1 : spec.strategy.minRepetitions, strategyOpen: true };
  if (spec.strategy.kind === 'search') return { repetitions: 0, strategyOpen: true };
  return { repetitions: spec.repetitions, strategyOpen: false };
}

export const DECISION_STATUSES = ['sampling', 'dropped', 'front', 'precise', 'exhausted'] as const;

/** One configuration's decision (campaign_decisions, made by @erg/strategy's plan). */
export const ConfigurationDecisionView = z
  .object({
    key: z.string(),
    status: z.enum(DECISION_STATUSES).describe('sampling: wants more runs; dropped: dominated with confidence; front: settled on the Pareto front; precise: intervals within the target; exhausted: reached maxRepetitions undecided'),
    n: z.number().describe('its runs with figures when decided (now, while sampling)'),
    reason: z.string().describe('why, in a sentence with the p-value or the interval widths'),
    by: z.string().nullable().describe('dropped: the configuration that dominates it'),
    p: z.number().nullable(),
    relativeHalfWidth: z.tuple([z.number(), z.number()]).nullable().describe('its 95 % intervals’ half-widths relative to the means, per objective; null below 2 runs'),
    decidedAt: z.string(),
    runsUsed: z.number().describe('runs the campaign had used when this was decided'),
  })
  .meta({ id: 'ConfigurationDecision' });
export type ConfigurationDecisionView = z.infer<typeof ConfigurationDecisionView>;

/** GET /v1/campaigns/:id/decisions: what an adaptive campaign decided, and what it spent against a grid. */
export const CampaignDecisions = z
  .object({
    campaignId: z.string(),
    strategy: z.union([GridStrategy, AdaptiveStrategy, SearchStrategy]),
    open: z.boolean().describe('whether the strategy may still add runs'),
    stop: z.string().nullable().describe('why it stopped adding runs; null while open'),
    runsUsed: z.number().describe('runs so far, every state'),
    gridRuns: z.number().describe('what the full grid would run: at maxRepetitions (adaptive), every configuration of the space at strategy.repetitions (search), its runs (the grid itself)'),
    undecided: z.array(z.string()).describe('configurations still sampling (a search: those with runs in flight)'),
    budget: z
      .object({ maxRuns: z.number().nullable(), runsLeft: z.number().nullable() })
      .describe('the run budget and what is left of it; null: none set'),
    decisions: z.array(ConfigurationDecisionView).describe('per configuration, in the campaign’s order; none for a grid; a search: the configurations it tried, where each stands now (front, dropped: dominated, sampling: in flight)'),
  })
  .meta({ id: 'CampaignDecisions' });
export type CampaignDecisions = z.infer<typeof CampaignDecisions>;
