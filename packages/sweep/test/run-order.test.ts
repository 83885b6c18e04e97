import fc from 'fast-check';
import { MAX_DESIGN_SEED } from '@erg/spec';
import { addedRunOrder, blockOrder, campaignRunOrder, nodeForRun, settleDesign, type OrderDesign } from '../src';
import { SeededStream } from '../src/seeded-stream';

// The fixed vectors below were computed outside erg: the C reference of xoshiro128** (gcc), and a
// Python transcription of the seeding, the rejection draw and Fisher–Yates (docs/experiments.md).
// A change to any of them changes every stored campaign's order for its seed: they must not move.

const randomized = (seed: number): OrderDesign => ({ order: 'randomized-blocks', seed });
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('the seeded stream', () => {
  test('is xoshiro128**: the reference outputs for the states (1, 2, 3, 4) and (deadbeef, 01234567, 89abcdef, feedface)', () => {
    const a = new SeededStream([1, 2, 3, 4]);
    expect(range(8).map(() => a.nextWord())).toEqual([11520, 0, 5927040, 70819200, 2031721883, 1637235492, 1287239034, 3734860849]);
    const b = new SeededStream([0xdeadbeef, 0x01234567, 0x89abcdef, 0xfeedface]);
    expect(range(8).map(() => b.nextWord())).toEqual([2576977298, 1162350735, 3441682048, 1347432117, 3370940770, 2425394401, 2995947402, 4086362962]);
  });

  test('is seeded by SplitMix32 from (seed, block): fixed first words', () => {
    const words = (seed: number, block: number) => {
      const s = SeededStream.of(seed, block);
      return range(5).map(() => s.nextWord());
    };
    expect(words(1234, 1)).toEqual([2358006812, 1574752377, 1793710628, 1493501939, 2263086314]);
    expect(words(1234, 2)).toEqual([3488950294, 1155342026, 2413755079, 2922365132, 1072306622]);
    expect(words(0, 1)).toEqual([2639375342, 3274559122, 3467335147, 824295497, 1770530429]);
  });

  test('draws integers below n in range, and refuses what it cannot draw', () => {
    const s = SeededStream.of(7, 1);
    for (const n of [1, 2, 3, 1000, 2 ** 31, 2 ** 32]) {
      for (let k = 0; k < 50; k++) {
        const x = s.below(n);
        expect(Number.isInteger(x) && x >= 0 && x < n).toBe(true);
      }
    }
    expect(() => s.below(0)).toThrow(RangeError);
    expect(() => s.below(2 ** 32 + 1)).toThrow(RangeError);
    expect(() => new SeededStream([0, 0, 0, 0])).toThrow(/not all zero/);
    expect(() => SeededStream.of(-1, 1)).toThrow(RangeError);
  });

  test('draws each residue about equally often (no modulo bias for n = 3)', () => {
    const s = SeededStream.of(99, 1);
    const counts = [0, 0, 0];
    for (let k = 0; k < 30_000; k++) counts[s.below(3)]!++;
    // 10,000 expected each; 5 standard deviations (≈ 408) would be an astronomically rare miss.
    for (const c of counts) expect(Math.abs(c - 10_000)).toBeLessThan(408);
  });
});

describe('the order of a block', () => {
  test('randomized-blocks: fixed orders for fixed seeds and blocks', () => {
    expect(blockOrder(range(10), 1, randomized(1234))).toEqual([1, 8, 7, 5, 0, 9, 6, 4, 3, 2]);
    expect(blockOrder(range(10), 2, randomized(1234))).toEqual([3, 0, 5, 9, 6, 8, 1, 7, 2, 4]);
    expect(blockOrder(range(10), 1, randomized(1235))).toEqual([3, 6, 4, 8, 1, 9, 5, 7, 2, 0]);
    expect(blockOrder(range(10), 1, randomized(0))).toEqual([0, 6, 1, 9, 7, 5, 8, 3, 4, 2]);
    expect(blockOrder(range(6), 3, randomized(MAX_DESIGN_SEED))).toEqual([0, 5, 3, 1, 4, 2]);
  });

  test('a block of added runs: the same seed and set give the same order, however the set is listed', () => {
    expect(blockOrder([7, 2, 9, 4], 2, randomized(1234))).toEqual([2, 4, 9, 7]);
    expect(blockOrder([4, 9, 2, 7], 2, randomized(1234))).toEqual([2, 4, 9, 7]);
  });

  test('is a permutation of its configurations, for any seed', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MAX_DESIGN_SEED }), fc.integer({ min: 1, max: 50 }), fc.uniqueArray(fc.nat(10_000), { maxLength: 200 }), (seed, r, members) => {
        const order = blockOrder(members, r, randomized(seed));
        expect([...order].sort((a, b) => a - b)).toEqual([...members].sort((a, b) => a - b));
      }),
    );
  });

  test('blocks: the listed order; configuration-major: the listed order too', () => {
    expect(blockOrder([3, 1, 2], 5, { order: 'blocks' })).toEqual([1, 2, 3]);
    expect(blockOrder([3, 1, 2], 5, { order: 'configuration-major' })).toEqual([1, 2, 3]);
  });

  test('another seed gives another order (almost always: 200 seeds, 20 configurations, no two alike)', () => {
    const seen = new Set(range(200).map((seed) => blockOrder(range(20), 1, randomized(seed)).join(',')));
    expect(seen.size).toBe(200);
  });

  test('the first place is uniform over the configurations across seeds (a shuffle, not a rotation)', () => {
    const first = [0, 0, 0, 0];
    for (let seed = 0; seed < 4000; seed++) first[blockOrder(range(4), 1, randomized(seed))[0]!]!++;
    // 1,000 expected each; 6 standard deviations ≈ 164.
    for (const c of first) expect(Math.abs(c - 1000)).toBeLessThan(164);
  });

  test('a randomized order without its seed is a programming error, not a silent order', () => {
    expect(() => blockOrder([0, 1], 1, { order: 'randomized-blocks' })).toThrow(/needs its seed/);
    expect(() => blockOrder([0, 1], 1, randomized(MAX_DESIGN_SEED + 1))).toThrow(RangeError);
  });
});

describe("a campaign's run order", () => {
  const all = (c: number, r: number, design: OrderDesign) => [...campaignRunOrder(c, r, design)];

  test('randomized-blocks: block r is repetition r of every configuration, blocks in turn, each shuffled by (seed, r)', () => {
    expect(all(4, 3, randomized(42)).map((x) => [x.configuration, x.repetition])).toEqual([
      [3, 1], [0, 1], [1, 1], [2, 1],
      [2, 2], [3, 2], [1, 2], [0, 2],
      [1, 3], [2, 3], [3, 3], [0, 3],
    ]);
  });

  test('randomized-blocks has complete blocks for any size and seed; the same seed gives the same order', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MAX_DESIGN_SEED }), fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 6 }), (seed, c, reps) => {
        const runs = all(c, reps, randomized(seed));
        expect(runs).toHaveLength(c * reps);
        for (let r = 1; r <= reps; r++) {
          const block = runs.slice((r - 1) * c, r * c);
          expect(block.every((x) => x.repetition === r)).toBe(true);
          expect(block.map((x) => x.configuration).sort((a, b) => a - b)).toEqual(range(c));
          expect(block.map((x) => x.configuration)).toEqual(blockOrder(range(c), r, randomized(seed)));
        }
        expect(all(c, reps, randomized(seed))).toEqual(runs);
      }),
    );
  });

  test('blocks: 1 2 3 1 2 3', () => {
    expect(all(3, 2, { order: 'blocks' }).map((x) => `${x.configuration}.${x.repetition}`)).toEqual(['0.1', '1.1', '2.1', '0.2', '1.2', '2.2']);
  });

  test("configuration-major reproduces erg's old positions exactly: run p is repetition p mod R + 1 of configuration ⌊p / R⌋", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 1, max: 8 }), (c, reps) => {
        const runs = all(c, reps, { order: 'configuration-major' });
        expect(runs).toEqual(range(c * reps).map((p) => ({ configuration: Math.floor(p / reps), repetition: (p % reps) + 1 })));
      }),
    );
  });

  test('streams 100,000 runs of 50,000 configurations cheaply (a generator, one block at a time)', () => {
    let n = 0;
    let last = -1;
    for (const run of campaignRunOrder(50_000, 2, randomized(9))) {
      n++;
      last = run.repetition;
    }
    expect([n, last]).toEqual([100_000, 2]);
  });

  test('no configurations or repetitions: no runs', () => {
    expect(all(0, 3, randomized(1))).toEqual([]);
    expect(all(3, 0, { order: 'blocks' })).toEqual([]);
  });
});

describe('the order of added runs', () => {
  test('randomized-blocks: blocks by repetition, ascending, each in its block order', () => {
    const adds = [
      { configuration: 9, after: 1, runs: 1 },
      { configuration: 2, after: 1, runs: 2 },
      { configuration: 7, after: 1, runs: 2 },
      { configuration: 4, after: 1, runs: 1 },
    ];
    const order = addedRunOrder(adds, randomized(1234));
    expect(order.filter((x) => x.repetition === 2).map((x) => x.configuration)).toEqual(blockOrder([2, 4, 7, 9], 2, randomized(1234)));
    expect(order.map((x) => x.repetition)).toEqual([2, 2, 2, 2, 3, 3]);
    expect(order.slice(0, 4).map((x) => x.configuration)).toEqual([2, 4, 9, 7]);
    expect(order.slice(4).map((x) => x.configuration)).toEqual(blockOrder([2, 7], 3, randomized(1234)));
  });

  test('an add of every configuration at repetition r is the campaign order of block r', () => {
    const adds = range(10).map((configuration) => ({ configuration, after: 1, runs: 1 }));
    expect(addedRunOrder(adds, randomized(1234)).map((x) => x.configuration)).toEqual([3, 0, 5, 9, 6, 8, 1, 7, 2, 4]);
  });

  test('configurations at different repetitions: the lower block first', () => {
    const order = addedRunOrder([{ configuration: 0, after: 4, runs: 1 }, { configuration: 1, after: 2, runs: 1 }], { order: 'blocks' });
    expect(order).toEqual([{ configuration: 1, repetition: 3 }, { configuration: 0, repetition: 5 }]);
  });

  test('configuration-major: each configuration together, in listed order', () => {
    const order = addedRunOrder([{ configuration: 5, after: 0, runs: 2 }, { configuration: 1, after: 3, runs: 2 }], { order: 'configuration-major' });
    expect(order).toEqual([{ configuration: 1, repetition: 4 }, { configuration: 1, repetition: 5 }, { configuration: 5, repetition: 1 }, { configuration: 5, repetition: 2 }]);
  });

  test('a configuration listed twice counts once; no runs, none', () => {
    expect(addedRunOrder([{ configuration: 1, after: 0, runs: 1 }, { configuration: 1, after: 0, runs: 1 }], { order: 'blocks' })).toEqual([{ configuration: 1, repetition: 1 }]);
    expect(addedRunOrder([{ configuration: 1, after: 0, runs: 0 }], randomized(3))).toEqual([]);
  });
});

describe('node balance (a Latin square)', () => {
  const nodes = ['n1', 'n2', 'n3'];

  test('configuration i of block r runs on nodes[(i + r − 1) mod N]', () => {
    expect(range(4).map((i) => nodeForRun(nodes, i, 1))).toEqual(['n1', 'n2', 'n3', 'n1']);
    expect(range(4).map((i) => nodeForRun(nodes, i, 2))).toEqual(['n2', 'n3', 'n1', 'n2']);
  });

  test('each block spreads its configurations over the nodes; over N blocks each configuration visits every node once', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 8 }), fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 5 }), (n, c, start) => {
        const names = range(n).map((k) => `node${k}`);
        for (let r = start; r < start + n; r++) {
          const perNode = new Map<string, number>();
          for (let i = 0; i < c; i++) perNode.set(nodeForRun(names, i, r), (perNode.get(nodeForRun(names, i, r)) ?? 0) + 1);
          // Every node gets ⌊C/N⌋ or ⌈C/N⌉ of the block's configurations.
          for (const name of names) expect([Math.floor(c / n), Math.ceil(c / n)]).toContain(perNode.get(name) ?? 0);
        }
        for (let i = 0; i < c; i++) {
          const visited = range(n).map((k) => nodeForRun(names, i, start + k));
          expect(new Set(visited).size).toBe(n);
        }
      }),
    );
  });

  test('is the same whatever order the block runs in: it depends on the configuration, not its place', () => {
    const order = [...campaignRunOrder(6, 3, randomized(5))];
    for (const run of order) expect(nodeForRun(nodes, run.configuration, run.repetition)).toBe(nodes[(run.configuration + run.repetition - 1) % 3]);
  });
});

describe('settling the seed', () => {
  test('a randomized order without a seed gets the drawn one; a given seed is kept; other orders have none', () => {
    expect(settleDesign({ order: 'randomized-blocks' }, () => 77)).toEqual({ order: 'randomized-blocks', seed: 77 });
    expect(settleDesign({ order: 'randomized-blocks', seed: 5 }, () => 77)).toEqual({ order: 'randomized-blocks', seed: 5 });
    expect(settleDesign({ order: 'blocks', seed: 5 }, () => 77)).toEqual({ order: 'blocks', seed: null });
    expect(settleDesign({ order: 'configuration-major' }, () => 77)).toEqual({ order: 'configuration-major', seed: null });
    expect(() => settleDesign({ order: 'randomized-blocks' }, () => -1)).toThrow(RangeError);
  });
});
