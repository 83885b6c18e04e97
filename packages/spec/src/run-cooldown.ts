import { z } from 'zod';
import { TimeWindow } from './time-window';

/**
 * A run's cooldown (the spec's `cooldown` block, design.ts): how long its job waited, after its
 * agents were ready and before its idle baseline and workload, for its nodes to be back near idle,
 * and each node's record as its agent wrote it (`<node>.cooled.json`, apps/agent's
 * cooldown-watch.ts). docs/experiments.md, "Cooldown", explains the criteria.
 */

/** One node's wait before a run (the spec's cooldown block), as its agent recorded it. */
export const NodeCooldown = z
  .object({
    node: z.string(),
    waitedS: z.number().describe("seconds from the node's agent taking its first sample to the node counting as cool (or maxWaitS)"),
    reached: z.boolean().describe('false: maxWaitS passed first'),
    criterion: z.enum(['idle_baseline', 'settled']).describe("idle_baseline: within powerMargin of the node's idle power erg measured before; settled: no baseline known, two consecutive means agreed"),
    powerW: z.number().nullable().describe('mean power over the last settleS when the wait ended, by the energy selection rules; null: no power reading over it'),
    referenceW: z.number().nullable().describe("the node's idle power it was compared with; null when settled"),
    maxGpuTempC: z.number().nullable().describe("the hottest GPU's mean temperature over the last settleS; null: no GPU temperature sensor"),
    referenceTempC: z.number().nullable().describe("the highest of the GPUs' idle temperatures it was compared with; null: none known"),
    gpus: z
      .array(z.object({ gpu: z.int(), tempC: z.number(), referenceTempC: z.number().nullable() }))
      .describe("each GPU's mean temperature over the last settleS and its idle temperature: with both, it counted as cool within tempMarginC of it"),
  })
  .meta({ id: 'NodeCooldown' });
export type NodeCooldown = z.infer<typeof NodeCooldown>;

/** A run's cooldown: outside its time-to-solution, which starts after it. */
export const RunCooldown = z
  .object({
    waitedS: z.number().describe("how long the job waited, by its own clock, from every agent being ready to every node's record (or its deadline, maxWaitS + 5 s); where the job recorded no wait, the longest over the nodes"),
    reached: z.boolean().describe("every node of the job cooled before maxWaitS (a node without a record did not)"),
    window: TimeWindow.nullable().describe('the wait as the job script measured it, before the idle baseline and the workload; null: it recorded none'),
    nodes: z.array(NodeCooldown),
  })
  .meta({ id: 'RunCooldown' });
export type RunCooldown = z.infer<typeof RunCooldown>;
