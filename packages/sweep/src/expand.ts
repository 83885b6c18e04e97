import type { ParamValue } from '@erg/spec';
import { axesOf, combinationCount, type Axis, type ParameterSpace } from './axes';
import { configurationKey } from './configuration-key';
import { compileExcludes, isExcluded } from './exclude';

/** One point of the parameter space. */
export interface Configuration {
  /** configurationKey(parameters); `default` when the campaign has no parameters. */
  key: string;
  /** Values by name: grid parameters in declaration order, then zip groups in order. */
  parameters: Record<string, ParamValue>;
}

/** One run to create: a configuration and which repetition of it (1-based). */
export interface RunSlot {
  configKey: string;
  repetition: number;
}

/** Beyond this many points countConfigurations refuses to enumerate the axes that excludes touch. */
export const COUNT_ENUMERATION_LIMIT = 10_000_000;

/**
 * Calls `visit` with the position on each axis for every point of the grid, the last axis
 * varying fastest (an odometer), without allocating per point.
 */
function forEachPosition(lengths: readonly number[], visit: (positions: readonly number[]) => void): void {
  if (lengths.some((n) => n === 0)) return;
  const positions = lengths.map(() => 0);
  for (;;) {
    visit(positions);
    let a = lengths.length - 1;
    while (a >= 0 && (positions[a] as number) + 1 === lengths[a]) positions[a--] = 0;
    if (a < 0) return;
    positions[a] = (positions[a] as number) + 1;
  }
}

function parametersAt(axes: readonly Axis[], positions: readonly number[]): Record<string, ParamValue> {
  const entries: Array<[string, ParamValue]> = [];
  axes.forEach((axis, a) => {
    const tuple = axis.tuples[positions[a] as number] as ParamValue[];
    axis.names.forEach((name, k) => entries.push([name, tuple[k] as ParamValue]));
  });
  return Object.fromEntries(entries);
}

/**
 * Every configuration of a validated spec, in a deterministic order: the grid parameters in
 * declaration order with the last varying fastest, each zip group one further axis, then
 * excludes removed. A space without parameters has one configuration, keyed `default`.
 */
export function expandConfigurations(space: ParameterSpace): Configuration[] {
  const axes = axesOf(space);
  const boxes = compileExcludes(axes, space.exclude);
  const out: Configuration[] = [];
  forEachPosition(
    axes.map((axis) => axis.tuples.length),
    (positions) => {
      if (isExcluded(boxes, positions)) return;
      const parameters = parametersAt(axes, positions);
      out.push({ key: configurationKey(parameters), parameters });
    },
  );
  return out;
}

/**
 * How many configurations expandConfigurations would return, without building them: the product
 * of axis lengths, less what excludes remove. Only the axes that excludes touch are enumerated;
 * throws a RangeError when even those exceed COUNT_ENUMERATION_LIMIT points.
 */
export function countConfigurations(space: ParameterSpace): number {
  const axes = axesOf(space);
  const boxes = compileExcludes(axes, space.exclude);
  if (boxes.length === 0) return combinationCount(axes);
  const touched = [...new Set(boxes.flatMap((box) => [...box.keys()]))].sort((x, y) => x - y);
  const untouched = combinationCount(axes.filter((_, a) => !touched.includes(a)));
  const lengths = touched.map((a) => axes[a]?.tuples.length ?? 0);
  const points = lengths.reduce((p, n) => p * n, 1);
  if (points > COUNT_ENUMERATION_LIMIT) {
    throw new RangeError(`excludes span ${points} combinations, more than ${COUNT_ENUMERATION_LIMIT} to count`);
  }
  // Boxes re-indexed to the touched axes only.
  const local = boxes.map((box) => new Map([...box].map(([a, allowed]) => [touched.indexOf(a), allowed])));
  let kept = 0;
  forEachPosition(lengths, (positions) => {
    if (!isExcluded(local, positions)) kept += 1;
  });
  return kept * untouched;
}

/** The runs of a campaign, configuration-major: every repetition of the first configuration, then the next. */
export function expandRuns(configurations: ReadonlyArray<Pick<Configuration, 'key'>>, repetitions: number): RunSlot[] {
  const runs: RunSlot[] = [];
  for (const { key } of configurations) {
    for (let repetition = 1; repetition <= repetitions; repetition += 1) runs.push({ configKey: key, repetition });
  }
  return runs;
}
