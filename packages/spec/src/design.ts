import { z } from 'zod';
import { MAX_DESIGN_SEED, RunOrder } from './run-order';

/**
 * The experiment around the arithmetic (issue 26): in what order a campaign's runs go to the
 * cluster, on which nodes, how sure its claims must be, which runs count as valid measurements,
 * and whether a node cools down before each run. docs/experiments.md says why each default is
 * what it is.
 *
 * Glossary:
 *   block        repetition r of every configuration (of those that get one): the unit of the run
 *                order. Blocks follow each other; inside a block the order is the design's.
 *   run order    `randomized-blocks` (default): each block in a seeded random order;
 *                `blocks`: each block in the configurations' listed order (1 2 3 1 2 3 …);
 *                `configuration-major`: every repetition of the first configuration, then the
 *                next (1 1 1 2 2 2 …) — the order erg used before, which turns drift into a
 *                configuration effect.
 *   seed         the randomized order's seed; drawn when the campaign is created unless the spec
 *                gives one, stored with the campaign and shown. The same seed and configurations
 *                give the same order.
 *   node balance where the spec names nodes, each run is pinned to one of them so that every
 *                block spreads its configurations over the nodes (a Latin square: configuration i
 *                of block r runs on node (i + r) mod N).
 *   claim        a comparison the results make (fastest, most frugal, lowest EDP, a Pareto
 *                membership, the trade-off) with the interval of the ratio of the two means and
 *                whether the difference is distinguishable at `confidence`, Holm-adjusted over
 *                every claim of the campaign.
 *   validity     per run: whether its measurement meets the gates (gaps, kept samples, interval,
 *                clocks, counter vs integrated power, idle stability). A campaign is publishable
 *                when every counted run is valid.
 *   cooldown     before each run, a wait until the node's power (and GPU temperature, where
 *                known) is back within a margin of the node's idle baseline, or a maximum time.
 */

// The order's names live in run-order.ts, which the API's campaign view imports alone (so that the
// API document keeps its order of schemas).
export { MAX_DESIGN_SEED, RUN_ORDERS, RunOrder } from './run-order';

/** The confidence of a campaign's claims when its spec sets none (design.confidence). */
export const DEFAULT_CONFIDENCE = 0.95;

/** A Slurm node name as `--nodelist` takes one (no host-list ranges: one name per entry). */
const NODE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export const Design = z
  .strictObject({
    order: RunOrder.default('randomized-blocks').describe(
      'randomized-blocks: repetition r of every configuration forms block r, each block in a seeded random order; blocks: each block in the listed order; configuration-major: all repetitions of one configuration, then the next',
    ),
    seed: z
      .int()
      .min(0)
      .max(MAX_DESIGN_SEED)
      .optional()
      .describe('seed of the randomized order; absent: erg draws one when the campaign is created and stores it (the campaign shows it)'),
    confidence: z
      .number()
      .min(0.5)
      .max(0.999)
      .default(DEFAULT_CONFIDENCE)
      .describe('confidence of every claim the results make (fastest, most frugal, Pareto membership, trade-off), Holm-adjusted over the claims'),
    nodes: z
      .array(z.string().regex(NODE_NAME, { error: 'a Slurm node name: letters, digits and . _ -, at most 128 characters' }))
      .min(2)
      .max(1024)
      .refine((names) => new Set(names).size === names.length, { error: 'names a node twice; list each node once', params: { code: 'duplicate_node' } })
      .optional()
      .describe('nodes to balance the runs over: each single-node run is pinned (--nodelist) so that every block spreads its configurations across them (a Latin square)'),
  })
  .prefault({})
  .meta({ id: 'Design' });
export type Design = z.infer<typeof Design>;

/**
 * The validity gates of a run's measurement. Defaults follow NVIDIA's srt-slurm publishability
 * rules where it has one (gaps ≤ 3 s, ≥ 95 % of sample intervals kept, clocks agreeing) and
 * erg's accuracy goals otherwise (docs/energy-measurement: integrated power within 2 % of the
 * NVML counter on long windows; 5 % leaves room for windows near the 10 s floor).
 */
export const Validity = z
  .strictObject({
    maxGapS: z.number().positive().max(3600).default(3).describe('longest stretch without a sample of any sensor the energy uses, in seconds'),
    minSampleShare: z
      .number()
      .min(0)
      .max(1)
      .default(0.95)
      .describe('share of the sample intervals expected at telemetry.intervalMs that were kept, per sensor the energy uses'),
    maxIntervalRatio: z
      .number()
      .min(1)
      .max(1000)
      .default(1.5)
      .describe('achieved median sampling interval ÷ requested telemetry.intervalMs, per sensor the energy uses'),
    maxClockOffsetMs: z
      .number()
      .positive()
      .max(3_600_000)
      .default(1000)
      .describe("largest offset between a node agent's clock and erg's server, and between the agents of one run, in ms"),
    maxCounterDisagreement: z
      .number()
      .positive()
      .max(10)
      .default(0.05)
      .describe('largest relative difference between an energy counter and its integrated power where a sensor has both (e.g. gpu0.energy and gpu0.power)'),
    maxIdleCv: z
      .number()
      .positive()
      .max(100)
      .default(0.1)
      .describe("largest coefficient of variation of the node's power over the idle baseline (with telemetry.idleBaselineS > 0)"),
    excludeInvalid: z
      .boolean()
      .default(false)
      .describe('leave runs that fail a gate out of the results (they are listed in runsLeftOut); false: they count, flagged `invalid`'),
  })
  .prefault({})
  .meta({ id: 'Validity' });
export type Validity = z.infer<typeof Validity>;

/** A wait before each run until its nodes are back near idle. */
export const Cooldown = z
  .strictObject({
    powerMargin: z
      .number()
      .min(0)
      .max(10)
      .default(0.1)
      .describe("relative margin over the node's idle power: 0.1 waits until power is within 10 % of it"),
    tempMarginC: z
      .number()
      .min(0)
      .max(100)
      .default(5)
      .describe("where GPU temperature is known: wait until every GPU is within this many °C of its idle temperature"),
    settleS: z
      .number()
      .min(1)
      .max(600)
      .default(5)
      .describe('the power compared is the mean over the last settleS seconds; without a known idle baseline, the node has cooled once two consecutive such means agree within powerMargin'),
    maxWaitS: z.number().min(1).max(3600).default(120).describe('the longest wait; a run that starts without having cooled says so'),
  })
  .meta({ id: 'Cooldown' });
export type Cooldown = z.infer<typeof Cooldown>;
