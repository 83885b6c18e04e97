import type { RunNodeRecord } from '@erg/db';

/**
 * The node a run ran on, as the node effects count it: the one node its agents reported from; a
 * multi-node run counts under Slurm's node list for it (e.g. "gh-[001-002]"), or its nodes' names
 * joined by commas where Slurm's list is not known; a run no agent reported from, under Slurm's
 * node list. Null: neither is known (an imported run without nodes).
 */
export function runNodeOf(reported: readonly RunNodeRecord[] | undefined, slurmNodeList: string | null): string | null {
  const names = [...new Set((reported ?? []).map((n) => n.node))].sort();
  if (names.length === 1) return names[0]!;
  if (slurmNodeList) return slurmNodeList;
  return names.length > 0 ? names.join(',') : null;
}
