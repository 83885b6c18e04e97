import { z } from 'zod';

/**
 * A run's lifecycle: pending → submitting → queued → running → completing → one terminal state.
 * `submitting` exists so that a crash between "decided to submit" and "sbatch answered" is
 * visible, and the run can be matched to its job by name instead of being submitted twice.
 */
export const RunState = z.enum([
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
]);
export type RunState = z.infer<typeof RunState>;

/** States a run never leaves. */
export const TERMINAL_RUN_STATES = ['completed', 'failed', 'cancelled', 'timeout', 'node_fail', 'oom'] as const satisfies readonly RunState[];
export type TerminalRunState = (typeof TERMINAL_RUN_STATES)[number];

export function isTerminalRunState(state: RunState): state is TerminalRunState {
  return (TERMINAL_RUN_STATES as readonly RunState[]).includes(state);
}
