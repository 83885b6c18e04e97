import { mapSlurmState, normalizeSlurmState } from '../src';

describe('mapSlurmState', () => {
  it.each([
    ['PENDING', 'queued'],
    ['REQUEUED', 'queued'],
    ['REQUEUE_HOLD', 'queued'],
    ['SUSPENDED', 'queued'],
    ['CONFIGURING', 'running'],
    ['RUNNING', 'running'],
    ['COMPLETING', 'completing'],
    ['COMPLETED', 'completed'],
    ['FAILED', 'failed'],
    ['CANCELLED', 'cancelled'],
    ['CANCELLED by 0', 'cancelled'],
    ['CANCELLED by 1000', 'cancelled'],
    ['TIMEOUT', 'timeout'],
    ['DEADLINE', 'timeout'],
    ['NODE_FAIL', 'node_fail'],
    ['BOOT_FAIL', 'node_fail'],
    ['OUT_OF_MEMORY', 'oom'],
    ['PREEMPTED', 'failed'],
    ['RUNNING+', 'running'],
    ['completed', 'completed'],
  ])('%s → %s', (state, runState) => {
    expect(mapSlurmState(state)).toBe(runState);
  });

  it.each(['REVOKED', 'SOMETHING_NEW', ''])('%j → null (unknown: keep polling, do not guess)', (state) => {
    expect(mapSlurmState(state)).toBeNull();
  });

  it('normalises decorated states', () => {
    expect(normalizeSlurmState(' CANCELLED by 0 ')).toBe('CANCELLED');
  });
});
