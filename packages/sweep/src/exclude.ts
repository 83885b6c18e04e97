import { canonicalValue, type ParamValue } from '@erg/spec';
import type { Axis, ParameterSpace } from './axes';

/**
 * An exclude entry compiled against the axes: for each axis it constrains, the positions it
 * matches. A configuration is excluded when its position on every constrained axis is listed —
 * i.e. each exclude entry is a box in the grid, which is what lets the size check count
 * excluded configurations without building them.
 */
export type ExcludeBox = ReadonlyMap<number, ReadonlySet<number>>;

/**
 * Compiles exclude entries; an entry that can match nothing (unknown name or value) is dropped.
 * Each value is looked up in an index of the axes (name → value → positions), so the cost is
 * linear in the size of the spec, not in entries × axis lengths.
 */
export function compileExcludes(axes: readonly Axis[], exclude: ParameterSpace['exclude']): ExcludeBox[] {
  const where = new Map<string, { axis: number; positions: Map<string, number[]> }>();
  axes.forEach((axis, a) =>
    axis.names.forEach((name, k) => {
      const positions = new Map<string, number[]>();
      axis.tuples.forEach((tuple, j) => {
        const value = tuple[k];
        if (value === undefined) return;
        const key = canonicalValue(value);
        const list = positions.get(key);
        if (list) list.push(j);
        else positions.set(key, [j]);
      });
      where.set(name, { axis: a, positions });
    }),
  );
  const boxes: ExcludeBox[] = [];
  entries: for (const entry of exclude) {
    // An empty entry would be a box covering everything; the spec refuses it, and so does this.
    if (Object.keys(entry).length === 0) continue;
    const box = new Map<number, Set<number>>();
    for (const [name, given] of Object.entries(entry)) {
      const at = where.get(name);
      if (!at) continue entries;
      const positions = new Set<number>();
      for (const v of Array.isArray(given) ? given : [given]) {
        for (const j of at.positions.get(canonicalValue(v as ParamValue)) ?? []) positions.add(j);
      }
      const previous = box.get(at.axis);
      const merged = previous ? new Set([...positions].filter((j) => previous.has(j))) : positions;
      if (merged.size === 0) continue entries;
      box.set(at.axis, merged);
    }
    boxes.push(box);
  }
  return boxes;
}
