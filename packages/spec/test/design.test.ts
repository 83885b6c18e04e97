import { CampaignSpec, runOrderNote } from '../src';
import { issueAt, issuesOf, minimal, specOf } from './helpers';

describe('the design block: run order and node balance', () => {
  it('defaults to randomized complete blocks without a seed (erg draws one when the campaign is created)', () => {
    expect(specOf(minimal).design).toEqual({ order: 'randomized-blocks', confidence: 0.95 });
  });

  it('keeps an order, a seed and nodes it was given', () => {
    expect(specOf({ ...minimal, design: { order: 'blocks', seed: 7, nodes: ['n1', 'n2'] } }).design).toEqual({ order: 'blocks', seed: 7, confidence: 0.95, nodes: ['n1', 'n2'] });
  });

  it('refuses an unknown order and a seed out of range, naming the field', () => {
    const issues = issuesOf({ ...minimal, design: { order: 'as-listed', seed: -1 } });
    expect(issueAt(issues, 'design.order').message).toMatch(/randomized-blocks/);
    expect(issueAt(issues, 'design.seed').message).toMatch(/0|small/);
  });

  it('design_conflict: node balance needs runs of one node', () => {
    const issue = issueAt(issuesOf({ ...minimal, resources: { nodes: 2 }, design: { nodes: ['n1', 'n2'] } }), 'design.nodes');
    expect(issue.code).toBe('design_conflict');
    expect(issue.message).toBe(
      'node balance pins each run to one of the 2 nodes listed, but each run asks for resources.nodes: 2; set resources.nodes to 1, or remove design.nodes and let Slurm place the runs',
    );
  });

  it('design_conflict: node balance needs execution: slurm', () => {
    const issue = issueAt(issuesOf({ name: 'imported', execution: 'import', design: { nodes: ['n1', 'n2'] } }), 'design.nodes');
    expect(issue.code).toBe('design_conflict');
    expect(issue.message).toMatch(/remove design.nodes, or use execution: slurm/);
  });

  it('checks node balance while another field is broken too (every problem in one answer)', () => {
    const issues = issuesOf({ ...minimal, repetitions: 0, resources: { nodes: 4 }, design: { nodes: ['a', 'b'] } });
    expect(issueAt(issues, 'design.nodes').code).toBe('design_conflict');
    expect(issueAt(issues, 'repetitions').code).not.toBe('design_conflict');
  });

  it('accepts node balance over single-node runs, and the schema applies the same rule', () => {
    expect(specOf({ ...minimal, design: { nodes: ['a', 'b'] } }).design.nodes).toEqual(['a', 'b']);
    const direct = CampaignSpec.safeParse({ ...minimal, resources: { nodes: 3 }, design: { nodes: ['a', 'b'] } });
    expect(direct.success).toBe(false);
  });

  it('says the order in a sentence for the results', () => {
    expect(runOrderNote({ order: 'randomized-blocks', seed: 1234 })).toMatch(/^randomized complete blocks \(seed 1234\): repetition r of every configuration forms block r/);
    expect(runOrderNote({ order: 'configuration-major', seed: null })).toMatch(/drift while the campaign ran shows as a difference between configurations/);
  });
});
