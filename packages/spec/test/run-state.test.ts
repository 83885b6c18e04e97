import {
  isRunStateTransition, isTerminalRunState, RUN_STATE_TRANSITIONS, RUN_STATES_HOLDING_A_SLOT, RunState, SLURM_PROGRESS_RUN_STATES,
  TERMINAL_RUN_STATES, UNFINISHED_RUN_STATES,
} from '../src';

describe('RunState', () => {
  it('lists the lifecycle in order', () => {
    expect(RunState.options).toEqual([
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
  });

  it('knows which states are terminal', () => {
    expect([...TERMINAL_RUN_STATES]).toEqual(['completed', 'failed', 'cancelled', 'timeout', 'node_fail', 'oom']);
    expect(RunState.options.filter(isTerminalRunState)).toEqual([...TERMINAL_RUN_STATES]);
    expect(isTerminalRunState('completing')).toBe(false);
  });

  it('refuses an unknown state', () => {
    expect(RunState.safeParse('done').success).toBe(false);
  });

  it('splits into unfinished and terminal states, each state in exactly one', () => {
    expect([...UNFINISHED_RUN_STATES, ...TERMINAL_RUN_STATES].sort()).toEqual([...RunState.options].sort());
    expect(UNFINISHED_RUN_STATES.filter((s) => isTerminalRunState(s))).toEqual([]);
  });

  it('a run holds a place on its cluster from its claim until its job ends, not while pending', () => {
    expect([...RUN_STATES_HOLDING_A_SLOT]).toEqual(['submitting', 'queued', 'running', 'completing']);
    expect([...SLURM_PROGRESS_RUN_STATES]).toEqual(['queued', 'running', 'completing']);
  });
});

describe('RUN_STATE_TRANSITIONS', () => {
  it('follows the lifecycle forward, and only Slurm requeues and suspends move a run back to the queue', () => {
    const backward: string[] = [];
    for (const from of RunState.options) {
      for (const to of RUN_STATE_TRANSITIONS[from]) {
        if (RunState.options.indexOf(to) < RunState.options.indexOf(from)) backward.push(`${from} → ${to}`);
      }
    }
    expect(backward).toEqual(['submitting → pending', 'running → queued', 'completing → queued']);
  });

  it('a terminal state is never left, and every unfinished state can still end', () => {
    for (const state of TERMINAL_RUN_STATES) expect(RUN_STATE_TRANSITIONS[state]).toEqual([]);
    for (const state of UNFINISHED_RUN_STATES) expect(RUN_STATE_TRANSITIONS[state].some((to) => isTerminalRunState(to))).toBe(true);
  });

  it('a completing run does not run again without being queued again; staying put is not a move', () => {
    expect(isRunStateTransition('completing', 'running')).toBe(false);
    expect(isRunStateTransition('completing', 'queued')).toBe(true);
    expect(isRunStateTransition('completed', 'running')).toBe(false);
    expect(isRunStateTransition('running', 'running')).toBe(false);
    expect(isRunStateTransition('pending', 'queued')).toBe(false);
  });
});
