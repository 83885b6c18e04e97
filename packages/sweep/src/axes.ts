import type { CampaignSpec, ParamValue } from '@erg/spec';

/** The part of a campaign that defines its configurations. */
export type ParameterSpace = Pick<CampaignSpec, 'parameters' | 'zip' | 'exclude'>;

/**
 * One dimension of the space. A grid parameter is an axis of one name; a zip group is one axis
 * whose positions carry a value for each of its names.
 */
export interface Axis {
  names: string[];
  /** `tuples[position][i]` is the value of `names[i]` at that position. */
  tuples: ParamValue[][];
}

/** The axes in expansion order: grid parameters in declaration order, then zip groups in order. */
export function axesOf(space: Pick<ParameterSpace, 'parameters' | 'zip'>): Axis[] {
  const axes: Axis[] = Object.entries(space.parameters).map(([name, values]) => ({
    names: [name],
    tuples: values.map((value) => [value]),
  }));
  space.zip.forEach((group, i) => {
    const names = Object.keys(group);
    const lists = Object.values(group);
    const length = lists[0]?.length ?? 0;
    if (lists.some((list) => list.length !== length)) {
      throw new RangeError(`zip[${i}] has lists of different lengths; validate the spec before expanding it`);
    }
    axes.push({ names, tuples: Array.from({ length }, (_, j) => lists.map((list) => list[j] as ParamValue)) });
  });
  return axes;
}

/** The product of the axis lengths: the number of configurations before excludes. May exceed 2^53 (then approximate). */
export function combinationCount(axes: readonly Axis[]): number {
  return axes.reduce((product, axis) => product * axis.tuples.length, 1);
}

/** Describes an axis for people: `sp` or `zip(micro_batch, seq_len)`. */
export function axisLabel(axis: Axis): string {
  return axis.names.length === 1 ? (axis.names[0] ?? '') : `zip(${axis.names.join(', ')})`;
}
