import { isTerminalRunState, RunState, TERMINAL_RUN_STATES } from '../src';

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
});
