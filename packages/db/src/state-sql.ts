import type { RunState } from '@erg/spec';

/**
 * A set of run states from @erg/spec as a SQL list, `('queued', 'running')`, to inline in a
 * statement: the sets are constants, so the statement's text (and its plan) never varies.
 */
export function stateListSql(states: readonly RunState[]): string {
  return `(${states.map((s) => `'${s}'`).join(', ')})`;
}
