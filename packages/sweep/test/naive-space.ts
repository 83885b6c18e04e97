import type { ParamValue } from '@erg/spec';
import { axesOf, type ParameterSpace } from '../src/axes';
import { compileExcludes, type ExcludeBox } from '../src/exclude';
import { configurationKey } from '../src/configuration-key';

/**
 * The reference the fast SpaceIndex is checked against: walk every point of the grid (an
 * odometer, the last axis fastest) and test it against every box. Only for small spaces.
 */
function isExcluded(boxes: readonly ExcludeBox[], positions: readonly number[]): boolean {
  return boxes.some((box) => {
    for (const [a, allowed] of box) if (!allowed.has(positions[a] ?? -1)) return false;
    return true;
  });
}

export function naiveConfigurations(space: ParameterSpace): Array<{ key: string; parameters: Record<string, ParamValue> }> {
  const axes = axesOf(space);
  const boxes = compileExcludes(axes, space.exclude);
  const lengths = axes.map((axis) => axis.tuples.length);
  const out: Array<{ key: string; parameters: Record<string, ParamValue> }> = [];
  if (lengths.some((n) => n === 0)) return out;
  const positions = lengths.map(() => 0);
  for (;;) {
    if (!isExcluded(boxes, positions)) {
      const entries: Array<[string, ParamValue]> = [];
      axes.forEach((axis, a) => axis.names.forEach((name, k) => entries.push([name, axis.tuples[positions[a]!]![k]!])));
      const parameters = Object.fromEntries(entries);
      out.push({ key: configurationKey(parameters), parameters });
    }
    let a = lengths.length - 1;
    while (a >= 0 && positions[a]! + 1 === lengths[a]) positions[a--] = 0;
    if (a < 0) return out;
    positions[a] = positions[a]! + 1;
  }
}
