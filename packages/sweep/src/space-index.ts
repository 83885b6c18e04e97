import { ErgError } from '@erg/spec/errors';
import { axesOf, type Axis, type ParameterSpace } from './axes';
import { compileExcludes } from './exclude';

/**
 * Counting and listing the configurations a parameter space keeps after its excludes, in time
 * that grows with the structure of the excludes rather than with configurations × excludes.
 *
 * Glossary
 * - box: a compiled exclude entry (exclude.ts): per constrained axis, the positions it matches.
 * - active boxes: on the way down the axes (in order), the boxes that every position chosen so
 *   far lies in. A box is *closed* when the axis just chosen is the last one it constrains and
 *   it is still active: every configuration below is excluded.
 * - node: the positions still to choose (from `axis` on) together with the active boxes. Two
 *   prefixes with the same active boxes have the same configurations below them, so nodes are
 *   memoised on (axis, active boxes) and each is computed once.
 *
 * A node's positions on its axis fall into groups: those no active box constrains (one child:
 * the unconstrained boxes stay active), those a closing box matches (excluded), and one group
 * per distinct set of matching boxes. Work per node is the size of its active set plus the
 * positions its constraining boxes list — never the axis length times the number of boxes.
 *
 * The work is still exponential for pathological excludes (many overlapping boxes over many
 * axes), so it is metered in steps and refused beyond a budget (SpaceTooComplexError).
 */

/**
 * Steps (memo entries, box-position pairs visited, box ids copied) one index may take: about
 * 40 ms on one core of the development machine (docs/benchmarks.md), far more than real campaigns need.
 */
export const SPACE_WORK_BUDGET = 250_000;

/** The excludes' structure needs more work than the budget to count; the spec should use fewer, simpler excludes. */
export class SpaceTooComplexError extends ErgError<'ERG_SWEEP_TOO_COMPLEX'> {
  constructor(readonly budget: number) {
    super('ERG_SWEEP_TOO_COMPLEX', `the excludes overlap in too many ways to count the configurations within ${budget.toLocaleString('en-US')} steps`);
  }
}

interface SpaceNode {
  /** Configurations below this node. A float: astronomically large spaces are approximate (or Infinity). */
  readonly count: number;
  /** The node below each position some active box constrains (EXCLUDED for a closed box). */
  readonly constrained: ReadonlyMap<number, SpaceNode>;
  /** The node below every other position. */
  readonly free: SpaceNode | null;
  /** Built on the first expansion through this node: the positions with configurations below, in order. */
  kept?: { positions: number[]; children: SpaceNode[] };
}

const EMPTY: ReadonlyMap<number, SpaceNode> = new Map();
const EXCLUDED: SpaceNode = { count: 0, constrained: EMPTY, free: null };
/** Below the last axis: one configuration, the prefix itself. */
const LEAF: SpaceNode = { count: 1, constrained: EMPTY, free: null };

/**
 * A memo key for a list of box ids: one UTF-16 code unit per id (the spec allows at most 1,000
 * exclude entries), which is several times cheaper to build and hash than decimal text.
 */
function idsKey(ids: readonly number[]): string {
  return String.fromCharCode(...ids);
}

/** `total + k × count`, without 0 × Infinity turning into NaN. */
function addTimes(total: number, k: number, count: number): number {
  return k === 0 || count === 0 ? total : total + k * count;
}

/** Union of two ascending lists of distinct box ids. */
function mergeSorted(x: readonly number[], y: readonly number[]): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < x.length || j < y.length) {
    if (j >= y.length || (i < x.length && (x[i] as number) < (y[j] as number))) out.push(x[i++] as number);
    else out.push(y[j++] as number);
  }
  return out;
}

export class SpaceIndex {
  readonly axes: readonly Axis[];
  /** Per box, its allowed positions by axis. */
  private readonly allowed: ReadonlyArray<ReadonlyMap<number, ReadonlySet<number>>>;
  /** Per box, the last axis it constrains: where it closes. */
  private readonly lastAxis: readonly number[];
  private readonly memo = new Map<string, SpaceNode>();
  private steps = 0;
  private rootNode: SpaceNode | undefined;

  constructor(
    space: ParameterSpace,
    private readonly budget: number = SPACE_WORK_BUDGET,
  ) {
    this.axes = axesOf(space);
    this.allowed = compileExcludes(this.axes, space.exclude);
    // idsKey writes one code unit per id: more ids would collide. The spec allows 1,000 entries.
    if (this.allowed.length > 0xffff || this.axes.length > 0xffff) throw new RangeError('too many exclude entries or axes to index');
    this.lastAxis = this.allowed.map((box) => Math.max(...box.keys()));
  }

  /** How many configurations the space keeps. Throws SpaceTooComplexError beyond the budget. */
  count(): number {
    return this.root().count;
  }

  /** Steps spent so far (for tests and benchmarks). */
  get work(): number {
    return this.steps;
  }

  /**
   * Calls `visit` with the position on each axis of every configuration kept, the last axis
   * varying fastest. Only subtrees with configurations are entered, so the cost follows the
   * output. `positions` is reused between calls: copy what you keep.
   */
  forEachKept(visit: (positions: readonly number[]) => void): void {
    const root = this.root();
    if (root.count === 0) return;
    const positions = this.axes.map(() => 0);
    const walk = (node: SpaceNode, a: number): void => {
      if (a === this.axes.length) {
        visit(positions);
        return;
      }
      const kept = this.keptOf(node, a);
      for (let i = 0; i < kept.positions.length; i++) {
        positions[a] = kept.positions[i] as number;
        walk(kept.children[i] as SpaceNode, a + 1);
      }
    };
    walk(root, 0);
  }

  private root(): SpaceNode {
    this.rootNode ??= this.node(
      0,
      this.allowed.map((_, b) => b),
    );
    return this.rootNode;
  }

  private spend(n: number): void {
    this.steps += n;
    if (this.steps > this.budget) throw new SpaceTooComplexError(this.budget);
  }

  /** The node choosing a position on axis `a` with `active` (ascending box ids) still matching. */
  private node(a: number, active: readonly number[]): SpaceNode {
    if (a === this.axes.length) return LEAF;
    const key = String.fromCharCode(a) + idsKey(active);
    const known = this.memo.get(key);
    if (known) return known;
    this.spend(1 + active.length);
    const length = (this.axes[a] as Axis).tuples.length;
    const constraining: number[] = [];
    const unconstrained: number[] = [];
    for (const b of active) (this.allowed[b]!.has(a) ? constraining : unconstrained).push(b);

    const free = this.node(a + 1, unconstrained);
    if (constraining.length === 0) {
      const node: SpaceNode = { count: addTimes(0, length, free.count), constrained: EMPTY, free };
      this.memo.set(key, node);
      return node;
    }
    // Which constraining boxes match each position they list (ascending, since `active` is).
    const matching = new Map<number, number[]>();
    const closed = new Set<number>();
    for (const b of constraining) {
      const positions = this.allowed[b]!.get(a)!;
      this.spend(positions.size);
      const closes = this.lastAxis[b] === a;
      for (const j of positions) {
        if (closes) closed.add(j);
        else {
          const list = matching.get(j);
          if (list) list.push(b);
          else matching.set(j, [b]);
        }
      }
    }
    const constrained = new Map<number, SpaceNode>();
    const byBoxes = new Map<string, SpaceNode>();
    for (const [j, boxes] of matching) {
      if (closed.has(j)) continue;
      const boxesKey = idsKey(boxes);
      let child = byBoxes.get(boxesKey);
      if (!child) {
        const childActive = unconstrained.length === 0 ? boxes : mergeSorted(unconstrained, boxes);
        this.spend(childActive.length);
        child = this.node(a + 1, childActive);
        byBoxes.set(boxesKey, child);
      }
      constrained.set(j, child);
    }
    for (const j of closed) constrained.set(j, EXCLUDED);
    let count = addTimes(0, length - constrained.size, free.count);
    for (const child of constrained.values()) count = addTimes(count, 1, child.count);
    const node: SpaceNode = { count, constrained, free };
    this.memo.set(key, node);
    return node;
  }

  private keptOf(node: SpaceNode, a: number): NonNullable<SpaceNode['kept']> {
    if (node.kept) return node.kept;
    const kept: NonNullable<SpaceNode['kept']> = { positions: [], children: [] };
    const length = (this.axes[a] as Axis).tuples.length;
    for (let j = 0; j < length; j++) {
      const child = node.constrained.get(j) ?? node.free;
      if (child && child.count > 0) {
        kept.positions.push(j);
        kept.children.push(child);
      }
    }
    node.kept = kept;
    return kept;
  }
}
