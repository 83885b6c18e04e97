/**
 * Maps Slurm job states onto erg's run lifecycle
 * (`pending → submitting → queued → running → completing → completed | failed | cancelled |
 * timeout | node_fail | oom`). Slurm's own names come from squeue `%T` and sacct `State`.
 */

import type { RunState } from '@erg/spec';

/** The run states a Slurm job can put a run in (`pending` and `submitting` are erg's own). */
export type SlurmRunState = Exclude<RunState, 'pending' | 'submitting'>;

const STATE_MAP: Readonly<Record<string, SlurmRunState>> = {
  PENDING: 'queued',
  // Requeued/held jobs will run again later: from erg's side they are waiting in the queue.
  REQUEUED: 'queued',
  REQUEUE_FED: 'queued',
  REQUEUE_HOLD: 'queued',
  RESV_DEL_HOLD: 'queued',
  SPECIAL_EXIT: 'queued',
  // A suspended/stopped job holds its allocation but does no work; it resumes later, so the run is
  // not over. It is shown as queued because its workload is not making progress.
  SUSPENDED: 'queued',
  STOPPED: 'queued',
  CONFIGURING: 'running',
  POWER_UP_NODE: 'running',
  RUNNING: 'running',
  RESIZING: 'running',
  SIGNALING: 'running',
  COMPLETING: 'completing',
  STAGE_OUT: 'completing',
  COMPLETED: 'completed',
  FAILED: 'failed',
  CANCELLED: 'cancelled',
  TIMEOUT: 'timeout',
  // DEADLINE: the job hit its --deadline; like TIMEOUT it ran out of allowed time.
  DEADLINE: 'timeout',
  NODE_FAIL: 'node_fail',
  BOOT_FAIL: 'node_fail',
  OUT_OF_MEMORY: 'oom',
  // PREEMPTED (without requeue; with requeue Slurm reports REQUEUED instead): the workload was
  // killed before it finished through no decision of the researcher, so the run's measurement is
  // incomplete. That is a failed attempt, not a user cancellation, and not a node fault.
  PREEMPTED: 'failed',
};

/**
 * Slurm state → erg run state, or null for a state erg does not know (e.g. REVOKED in a
 * federation); callers keep polling rather than guess. Accepts sacct's decorated forms such as
 * `CANCELLED by 1000` and flags such as `RUNNING+`.
 */
export function mapSlurmState(state: string): SlurmRunState | null {
  const base = normalizeSlurmState(state);
  return STATE_MAP[base] ?? null;
}

/** `CANCELLED by 0` → `CANCELLED`, `completed+` → `COMPLETED`. */
export function normalizeSlurmState(state: string): string {
  const first = state.trim().split(/\s+/)[0] ?? '';
  return first.replace(/\+$/, '').toUpperCase();
}
