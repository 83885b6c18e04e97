import { MAX_DESIGN_SEED, type RunOrder } from '@erg/spec';
import { SeededStream } from './seeded-stream';

/**
 * The order a campaign's runs go to the cluster in (issue 26; docs/experiments.md, "Run order").
 * Whatever drifts while a campaign runs — another tenant, the room's temperature, the facility's
 * power — is spread over the configurations by the order, instead of becoming one configuration's
 * effect.
 *
 * Words: a configuration is named by its index in the campaign's listed configurations (its
 * `position`, expandConfigurations' order), a repetition by its number r ≥ 1. Block r is
 * repetition r of every configuration that gets one; blocks follow each other (r ascending).
 *   randomized-blocks    each block in a random order: Fisher–Yates (Durstenfeld's, from the last
 *                        place down) over the block's configurations in listed order, drawing from
 *                        the stream of (seed, r) (seeded-stream.ts). A block of added runs (a subset
 *                        of the configurations getting repetition r) is shuffled the same way, so
 *                        the same seed and the same set give the same order.
 *   blocks               each block in listed order (1 2 3 1 2 3 …).
 *   configuration-major  every repetition of a configuration, then the next (1 1 1 2 2 2 …): the
 *                        order erg used before issue 26, which turns drift into a configuration
 *                        effect.
 * Node balance (design.nodes, N names): configuration i of block r runs on nodes[(i + r − 1) mod N]
 * — a Latin square: each block spreads its configurations over the nodes, and over N consecutive
 * blocks each configuration runs once on every node.
 *
 * Cost: a block is shuffled when it starts (one Int32Array of its size), and the campaign's order
 * is a generator, so 100,000 runs are made a chunk at a time (createCampaign) in O(configurations)
 * memory.
 */

/** The part of a campaign's design that decides its run order. `seed` is needed by randomized-blocks only. */
export interface OrderDesign {
  order: RunOrder;
  seed?: number | null | undefined;
}

/** One run in a campaign's order: its configuration's index in the listed configurations, and its repetition (1-based). */
export interface OrderedRun {
  configuration: number;
  repetition: number;
}

/** Runs to add to some configurations: repetitions after+1 … after+runs of `configuration`. */
export interface RunsToAdd {
  configuration: number;
  after: number;
  runs: number;
}

/**
 * The design with its seed settled: a randomized order without one gets `draw()` (the caller's
 * source: node:crypto's randomInt when a campaign is created); a given seed is kept. Orders
 * without randomness have no seed (null), whatever the spec said.
 */
export function settleDesign(design: OrderDesign, draw: () => number): { order: RunOrder; seed: number | null } {
  if (design.order !== 'randomized-blocks') return { order: design.order, seed: null };
  const seed = design.seed ?? draw();
  checkSeed(seed);
  return { order: design.order, seed };
}

/**
 * The order of one block: the configurations getting repetition `repetition`, each once, in the
 * design's order. Same design, repetition and set: the same order, whatever order the set came in.
 */
export function blockOrder(configurations: readonly number[], repetition: number, design: OrderDesign): number[] {
  const block = Int32Array.from(configurations).sort();
  if (design.order === 'randomized-blocks') shuffle(block, streamOf(design, repetition));
  return Array.from(block);
}

/**
 * Every run of a campaign of `configurations` configurations and `repetitions` repetitions, in the
 * design's order; position p is the p-th run yielded. configuration-major gives exactly the
 * positions erg gave before: run p is repetition p mod R + 1 of configuration ⌊p / R⌋.
 */
export function* campaignRunOrder(configurations: number, repetitions: number, design: OrderDesign): Generator<OrderedRun> {
  checkCount('configurations', configurations);
  checkCount('repetitions', repetitions);
  if (design.order === 'configuration-major') {
    for (let configuration = 0; configuration < configurations; configuration++) {
      for (let repetition = 1; repetition <= repetitions; repetition++) yield { configuration, repetition };
    }
    return;
  }
  for (let repetition = 1; repetition <= repetitions; repetition++) {
    const block = new Int32Array(configurations);
    for (let i = 0; i < configurations; i++) block[i] = i;
    if (design.order === 'randomized-blocks') shuffle(block, streamOf(design, repetition));
    for (const configuration of block) yield { configuration, repetition };
  }
}

/**
 * The order of runs added to a campaign (an adaptive campaign's further repetitions, a search's
 * proposals, a sequential suite's next look): grouped into blocks by repetition, blocks ascending,
 * each in blockOrder; configuration-major: each configuration's runs together, configurations in
 * listed order. A configuration listed twice counts once (its first entry).
 */
export function addedRunOrder(adds: readonly RunsToAdd[], design: OrderDesign): OrderedRun[] {
  const seen = new Set<number>();
  const unique = adds.filter((a) => !seen.has(a.configuration) && seen.add(a.configuration));
  for (const a of unique) {
    checkCount('configuration', a.configuration);
    checkCount('after', a.after);
    checkCount('runs', a.runs);
  }
  if (design.order === 'configuration-major') {
    return [...unique]
      .sort((a, b) => a.configuration - b.configuration)
      .flatMap((a) => Array.from({ length: a.runs }, (_, k) => ({ configuration: a.configuration, repetition: a.after + k + 1 })));
  }
  const blocks = new Map<number, number[]>();
  for (const a of unique) {
    for (let repetition = a.after + 1; repetition <= a.after + a.runs; repetition++) {
      const block = blocks.get(repetition);
      if (block) block.push(a.configuration);
      else blocks.set(repetition, [a.configuration]);
    }
  }
  return [...blocks.keys()]
    .sort((a, b) => a - b)
    .flatMap((repetition) => blockOrder(blocks.get(repetition)!, repetition, design).map((configuration) => ({ configuration, repetition })));
}

/** The node a run is pinned to under node balance: configuration i of block r on nodes[(i + r − 1) mod N]. */
export function nodeForRun(nodes: readonly string[], configuration: number, repetition: number): string {
  if (nodes.length === 0) throw new RangeError('node balance needs at least one node');
  checkCount('configuration', configuration);
  if (!Number.isInteger(repetition) || repetition < 1) throw new RangeError(`a repetition is an integer from 1, got ${repetition}`);
  return nodes[(configuration + repetition - 1) % nodes.length]!;
}

/** Durstenfeld's Fisher–Yates: place i (from the last down to 1) takes a uniform pick of places 0 … i. */
function shuffle(block: Int32Array, stream: SeededStream): void {
  for (let i = block.length - 1; i > 0; i--) {
    const j = stream.below(i + 1);
    const t = block[i]!;
    block[i] = block[j]!;
    block[j] = t;
  }
}

function streamOf(design: OrderDesign, repetition: number): SeededStream {
  const { seed } = design;
  if (seed === undefined || seed === null) throw new RangeError('a randomized-blocks order needs its seed (settleDesign draws one when the campaign is created)');
  checkSeed(seed);
  return SeededStream.of(seed, repetition);
}

function checkSeed(seed: number): void {
  if (!Number.isInteger(seed) || seed < 0 || seed > MAX_DESIGN_SEED) throw new RangeError(`a design seed is an integer in 0…${MAX_DESIGN_SEED}, got ${seed}`);
}

function checkCount(what: string, n: number): void {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`${what} must be a non-negative integer, got ${n}`);
}
