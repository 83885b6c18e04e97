import type { RunNodeRecord } from '@erg/db';
import { runNodeOf } from '../src/run-node';

const reported = (...nodes: string[]): RunNodeRecord[] => nodes.map((node) => ({ node, fingerprintId: null, fingerprintClassId: null, fingerprint: null, power: null }));

describe('runNodeOf', () => {
  it('is the one node its agents reported from, whatever Slurm calls the allocation', () => {
    expect(runNodeOf(reported('gh-001'), 'gh-001')).toBe('gh-001');
    expect(runNodeOf(reported('gh-001', 'gh-001'), null)).toBe('gh-001');
  });
  it("counts a multi-node run under Slurm's node list, else its nodes' names joined", () => {
    expect(runNodeOf(reported('gh-002', 'gh-001'), 'gh-[001-002]')).toBe('gh-[001-002]');
    expect(runNodeOf(reported('gh-002', 'gh-001'), null)).toBe('gh-001,gh-002');
  });
  it("falls back to Slurm's node list, and is null when neither is known", () => {
    expect(runNodeOf(undefined, 'gh-003')).toBe('gh-003');
    expect(runNodeOf([], null)).toBeNull();
  });
});
