import type { ParamValue } from '@erg/spec';
import type { Axis, ParameterSpace } from './axes';
import { configurationKey } from './configuration-key';
import { SpaceIndex } from './space-index';

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

function parametersAt(axes: readonly Axis[], positions: readonly number[]): Record<string, ParamValue> {
  const entries: Array<[string, ParamValue]> = [];
  axes.forEach((axis, a) => {
    const tuple = axis.tuples[positions[a] as number] as ParamValue[];
    axis.names.forEach((name, k) => entries.push([name, tuple[k] as ParamValue]));
  });
  return Object.fromEntries(entries);
}

/** The configurations an index keeps, in its order (see expandConfigurations). */
export function configurationsOf(index: SpaceIndex): Configuration[] {
  const out: Configuration[] = [];
  index.forEachKept((positions) => {
    const parameters = parametersAt(index.axes, positions);
    out.push({ key: configurationKey(parameters), parameters });
  });
  return out;
}

/**
 * Every configuration of a validated spec, in a deterministic order: the grid parameters in
 * declaration order with the last varying fastest, each zip group one further axis, then
 * excludes removed. A space without parameters has one configuration, keyed `default`.
 * Only subtrees that keep configurations are walked (see SpaceIndex); check the size first
 * (checkCampaignSize), since the result is materialised.
 */
export function expandConfigurations(space: ParameterSpace): Configuration[] {
  return configurationsOf(new SpaceIndex(space));
}

/**
 * How many configurations expandConfigurations would return, without building them. Throws
 * SpaceTooComplexError when the excludes need more than SPACE_WORK_BUDGET steps to count.
 */
export function countConfigurations(space: ParameterSpace): number {
  return new SpaceIndex(space).count();
}

/** The runs of a campaign, configuration-major: every repetition of the first configuration, then the next. */
export function expandRuns(configurations: ReadonlyArray<Pick<Configuration, 'key'>>, repetitions: number): RunSlot[] {
  const runs: RunSlot[] = [];
  for (const { key } of configurations) {
    for (let repetition = 1; repetition <= repetitions; repetition += 1) runs.push({ configKey: key, repetition });
  }
  return runs;
}
