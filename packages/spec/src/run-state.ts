/**
 * A run's lifecycle: pending → submitting → queued → running → completing → one terminal state.
 * `submitting` exists so that a crash between "decided to submit" and "sbatch answered" is
 * visible, and the run can be matched to its job by name instead of being submitted twice.
 *
 * The state sets below are the only ones: every package (the database's transitions and
 * concurrency limits, the API's queue, the CLI, the web app) takes them from here. This module
 * has no dependencies (no zod), so the web app's bundle imports it as `@erg/spec/run-state`;
 * the zod schemas of the states are in run-state-schema.ts.
 */
export const RUN_STATES = [
  'pending',
  'submitting',
  'queued',
  'running',
  'completing',
  'completed',
  'failed',
  'cancelled',
  'timeout',
  'node_fail',
  'oom',
] as const;
export type RunState = (typeof RUN_STATES)[number];

/** States a run never leaves. */
export const TERMINAL_RUN_STATES = ['completed', 'failed', 'cancelled', 'timeout', 'node_fail', 'oom'] as const satisfies readonly RunState[];
export type TerminalRunState = (typeof TERMINAL_RUN_STATES)[number];

export function isTerminalRunState(state: RunState): state is TerminalRunState {
  return (TERMINAL_RUN_STATES as readonly RunState[]).includes(state);
}

/** Every state before a terminal one: the run is not over yet (what the queue shows). */
export const UNFINISHED_RUN_STATES = ['pending', 'submitting', 'queued', 'running', 'completing'] as const satisfies readonly RunState[];
export type UnfinishedRunState = (typeof UNFINISHED_RUN_STATES)[number];

export function isUnfinishedRunState(state: RunState): state is UnfinishedRunState {
  return (UNFINISHED_RUN_STATES as readonly RunState[]).includes(state);
}

/**
 * States in which a run holds a place on its cluster: claimed for submission, or its job in
 * Slurm. What `max_concurrent_runs` counts, and what a cancel hands to scancel.
 */
export const RUN_STATES_HOLDING_A_SLOT = ['submitting', 'queued', 'running', 'completing'] as const satisfies readonly UnfinishedRunState[];
export type SlotHoldingRunState = (typeof RUN_STATES_HOLDING_A_SLOT)[number];

/**
 * States in which a run's Slurm job is in the cluster's queue, or about to be (claimed for
 * submission): what a site's MaxSubmitJobs counts, and so what a cluster's `max_queued_jobs`
 * counts. A `completing` run's job has left Slurm's queue already.
 */
export const RUN_STATES_IN_SLURM_QUEUE = ['submitting', 'queued', 'running'] as const satisfies readonly SlotHoldingRunState[];

/** The states Slurm reports for a job that has not ended (squeue, sacct): what a poll records. */
export const SLURM_PROGRESS_RUN_STATES = ['queued', 'running', 'completing'] as const satisfies readonly SlotHoldingRunState[];
export type SlurmProgressRunState = (typeof SLURM_PROGRESS_RUN_STATES)[number];

/**
 * Every move of the lifecycle, by the state it leaves (a terminal state has none):
 * - pending → submitting (claimed), cancelled (its campaign's cancel), completed | failed (an
 *   imported run finished by hand);
 * - submitting → queued (sbatch answered, or a job carrying the run was found), pending (Slurm
 *   certainly has no job for it), failed (sbatch refused it);
 * - queued, running, completing → as Slurm reports the job, and to a terminal state when it ends.
 *   A job goes back to the queue when Slurm requeues it (from running or completing) or
 *   suspends it (shown as queued: its workload is not progressing); it never goes from
 *   completing back to running without being queued again, so a poll that says so is stale
 *   (sacct lagging behind squeue).
 */
export const RUN_STATE_TRANSITIONS = {
  pending: ['submitting', 'cancelled', 'completed', 'failed'],
  submitting: ['queued', 'pending', 'failed'],
  queued: ['running', 'completing', ...TERMINAL_RUN_STATES],
  running: ['queued', 'completing', ...TERMINAL_RUN_STATES],
  completing: ['queued', ...TERMINAL_RUN_STATES],
  completed: [],
  failed: [],
  cancelled: [],
  timeout: [],
  node_fail: [],
  oom: [],
} as const satisfies Record<RunState, readonly RunState[]>;

/** Whether the lifecycle allows a run in `from` to move to `to` (staying where it is is not a move). */
export function isRunStateTransition(from: RunState, to: RunState): boolean {
  return (RUN_STATE_TRANSITIONS[from] as readonly RunState[]).includes(to);
}
