import { canonicalValue, type ParamValue } from '@erg/spec';
import type { Axis, ParameterSpace } from './axes';

/**
 * An exclude entry compiled against the axes: for each axis it constrains, the positions it
 * matches. A configuration is excluded when its position on every constrained axis is listed —
 * i.e. each exclude entry is a box in the grid, which is what lets the size check count
 * excluded configurations without building them.
 */
export type ExcludeBox = ReadonlyMap<number, ReadonlySet<number>>;

/** Compiles exclude entries; an entry that can match nothing (unknown name or value) is dropped. */
export function compileExcludes(axes: readonly Axis[], exclude: ParameterSpace['exclude']): ExcludeBox[] {
  const where = new Map<string, [axis: number, column: number]>();
  axes.forEach((axis, a) => axis.names.forEach((name, k) => where.set(name, [a, k])));
  const boxes: ExcludeBox[] = [];
  entries: for (const entry of exclude) {
    // An empty entry would be a box covering everything; the spec refuses it, and so does this.
    if (Object.keys(entry).length === 0) continue;
    const box = new Map<number, Set<number>>();
    for (const [name, given] of Object.entries(entry)) {
      const at = where.get(name);
      if (!at) continue entries;
      const [a, k] = at;
      const wanted = new Set((Array.isArray(given) ? given : [given]).map((v: ParamValue) => canonicalValue(v)));
      const positions = new Set<number>();
      axes[a]?.tuples.forEach((tuple, j) => {
        const value = tuple[k];
        if (value !== undefined && wanted.has(canonicalValue(value))) positions.add(j);
      });
      const previous = box.get(a);
      const merged = previous ? new Set([...positions].filter((j) => previous.has(j))) : positions;
      if (merged.size === 0) continue entries;
      box.set(a, merged);
    }
    boxes.push(box);
  }
  return boxes;
}

/** Whether the configuration at `positions` (one per axis) falls in any box. */
export function isExcluded(boxes: readonly ExcludeBox[], positions: readonly number[]): boolean {
  return boxes.some((box) => {
    for (const [a, allowed] of box) if (!allowed.has(positions[a] ?? -1)) return false;
    return true;
  });
}
