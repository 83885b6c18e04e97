import { ErgError } from '@erg/spec/errors';

/**
 * The last check before a run's figures are stored: every number in them is finite. JSON has no
 * Infinity or NaN (JSON.stringify writes null where the schema promises a number, and the API's
 * answer then fails its own response schema: a 500), and the run_energy columns would keep them.
 * The inputs are bounded where they enter (sample values, counter ranges, windows, metrics), so a
 * figure that is not finite is a bug in the arithmetic, named here with its path rather than stored.
 */

/** Why a run's figures were not stored: the paths of the numbers in them that are not finite. */
export class NonFiniteFiguresError extends ErgError<'ERG_FIGURES_NOT_FINITE'> {
  constructor(
    readonly runId: string,
    readonly paths: readonly string[],
  ) {
    super('ERG_FIGURES_NOT_FINITE', `run ${runId}: its energy figures were not stored: ${paths.join(', ')} ${paths.length === 1 ? 'is' : 'are'} not a finite number`);
  }
}

/** The paths (`nodes[0].energyJ`) of the first `limit` numbers in `value` that are not finite; walked without recursion. */
export function nonFinitePaths(value: unknown, limit = 5): string[] {
  const found: string[] = [];
  const stack: Array<[unknown, string]> = [[value, '']];
  while (stack.length > 0 && found.length < limit) {
    const [current, path] = stack.pop()!;
    if (typeof current === 'number') {
      if (!Number.isFinite(current)) found.push(path || '(root)');
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push([current[i], `${path}[${i}]`]);
    } else if (current instanceof Float64Array) {
      for (let i = 0; i < current.length; i++) if (!Number.isFinite(current[i]!)) { found.push(`${path}[${i}]`); break; }
    } else if (typeof current === 'object' && current !== null) {
      const entries = Object.entries(current);
      for (let i = entries.length - 1; i >= 0; i--) stack.push([entries[i]![1], path ? `${path}.${entries[i]![0]}` : entries[i]![0]]);
    }
  }
  return found;
}
