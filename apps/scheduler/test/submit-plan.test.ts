import { resourceDirectiveLines } from '@erg/slurm';
import { CampaignSpec } from '@erg/spec';
import { campaignRunOrder } from '@erg/sweep';
import { pinnedNode, planSubmissions, sbatchLoops, type Prepared } from '../src/submit';

const WORK = '/scratch/erg';

const LINES = ['#SBATCH --nodes=1', '#SBATCH --time=00:10:00'];

function prepared(campaignId: string, id: string, resourceLines: string[] = LINES, node: string | null = null): Prepared {
  return {
    run: { id, campaignId, configurationKey: id, parameters: {}, repetition: 1, position: 0, configurationPosition: 0 },
    runDir: `${WORK}/${campaignId}/${id}`,
    files: [],
    jobScript: '',
    resourceLines: node === null ? resourceLines : [...resourceLines, `#SBATCH --nodelist=${node}`],
    node,
  };
}

const groupsOf = (plan: ReturnType<typeof planSubmissions>) => plan.map((s) => [s.kind, s.members.map((m) => m.run.id).join('')]);

describe('planning submissions', () => {
  test('runs of one campaign with the same resources share an array, in claim order', () => {
    const plan = planSubmissions(WORK, ['a', 'b', 'c'].map((id) => prepared('c1', id)), 1001);
    expect(plan).toHaveLength(1);
    expect(plan[0]).toMatchObject({ kind: 'array' });
    expect(plan[0]!.members.map((m) => m.run.id)).toEqual(['a', 'b', 'c']);
    expect(plan[0]!.scriptPath).toMatch(/^\/scratch\/erg\/c1\/\.arrays\/[0-9a-f-]{36}\/array\.sh$/);
  });

  test('another campaign makes another submission; campaigns do not break each other\'s arrays', () => {
    const plan = planSubmissions(WORK, [prepared('c1', 'a'), prepared('c2', 'c'), prepared('c1', 'd'), prepared('c2', 'e')], 1001);
    expect(groupsOf(plan)).toEqual([['array', 'ad'], ['array', 'ce']]);
  });

  test('runs with other resources in between close an array: no task runs before a run placed ahead of it', () => {
    // gpuFreq templated per configuration: a randomized order alternates the lines.
    const high = [...LINES, '#SBATCH --gpu-freq=high'];
    const low = [...LINES, '#SBATCH --gpu-freq=low'];
    const plan = planSubmissions(
      WORK,
      [prepared('c1', 'a', high), prepared('c1', 'b', high), prepared('c1', 'c', low), prepared('c1', 'd', high), prepared('c1', 'e', low), prepared('c1', 'f', low)],
      1001,
    );
    expect(groupsOf(plan)).toEqual([['array', 'ab'], ['job', 'c'], ['job', 'd'], ['array', 'ef']]);
    // Submitted in this order, every run is numbered (and, at equal priority, started) after the runs before it.
    expect(plan.flatMap((s) => s.members.map((m) => m.run.id)).join('')).toBe('abcdef');
  });

  test('runs pinned to different nodes never compete: one array per node, each in run order', () => {
    const plan = planSubmissions(
      WORK,
      [prepared('c1', 'a', LINES, 'n1'), prepared('c1', 'b', LINES, 'n2'), prepared('c1', 'c', LINES, 'n2'), prepared('c1', 'd', LINES, 'n1'), prepared('c1', 'e', LINES, 'n3')],
      1001,
    );
    expect(groupsOf(plan)).toEqual([['array', 'ad'], ['array', 'bc'], ['job', 'e']]);
    expect(plan.map((s) => s.members[0]!.resourceLines.at(-1))).toEqual(['#SBATCH --nodelist=n1', '#SBATCH --nodelist=n2', '#SBATCH --nodelist=n3']);
  });

  test('arrays hold at most MaxArraySize tasks; a run left alone is a job of its own', () => {
    const plan = planSubmissions(WORK, ['a', 'b', 'c', 'd', 'e'].map((id) => prepared('c1', id)), 2);
    expect(plan.map((s) => [s.kind, s.members.length])).toEqual([['array', 2], ['array', 2], ['job', 1]]);
    expect(new Set(plan.map((s) => s.scriptPath)).size).toBe(3);
  });

  test('no arrays where the cluster has none (MaxArraySize 0 or 1), or where it is not known', () => {
    for (const max of [0, 1, null, undefined]) {
      const plan = planSubmissions(WORK, ['a', 'b'].map((id) => prepared('c1', id)), max);
      expect(plan.map((s) => [s.kind, s.scriptPath])).toEqual([
        ['job', `${WORK}/c1/a/job.sh`],
        ['job', `${WORK}/c1/b/job.sh`],
      ]);
    }
  });
});

describe('the sbatch loops', () => {
  const plan = (ids: string[][]) =>
    ids.map((members) => ({ scriptPath: `/w/${members.join('')}`, members: members.map((id) => prepared(id.slice(0, 2), id)) }));

  test("a campaign's submissions stay in one loop, in plan order (Slurm numbers them in run order)", () => {
    expect(sbatchLoops(plan([['c1a'], ['c1b'], ['c1c'], ['c1d']]), 4)).toEqual([['/w/c1a', '/w/c1b', '/w/c1c', '/w/c1d']]);
  });

  test('campaigns spread over the loops, each to the one with the fewest submissions so far', () => {
    const loops = sbatchLoops(plan([['c1a'], ['c1b'], ['c2a'], ['c3a'], ['c3b'], ['c3c'], ['c4a']]), 2);
    expect(loops).toEqual([['/w/c1a', '/w/c1b', '/w/c4a'], ['/w/c2a', '/w/c3a', '/w/c3b', '/w/c3c']]);
  });

  test('no submissions, no loops; at least one loop otherwise', () => {
    expect(sbatchLoops([], 4)).toEqual([]);
    expect(sbatchLoops(plan([['c1a']]), 0)).toEqual([['/w/c1a']]);
  });
});

describe('node balance through the plan (design.nodes; the local clusters have one node, so no e2e)', () => {
  const spec = CampaignSpec.parse({ name: 'balanced', cluster: 'local', run: 'true', parameters: { c: [0, 1, 2, 3] }, repetitions: 3, design: { seed: 7, nodes: ['n1', 'n2', 'n3'] } });
  const runs = [...campaignRunOrder(4, 3, spec.design)].map((r, position) => ({ ...r, id: `r${position}`, position }));
  const prepare = (r: (typeof runs)[number]): Prepared => {
    const node = pinnedNode(spec, { configurationPosition: r.configuration, repetition: r.repetition });
    return {
      run: { id: r.id, campaignId: 'c1', configurationKey: `c=${r.configuration}`, parameters: { c: r.configuration }, repetition: r.repetition, position: r.position, configurationPosition: r.configuration },
      runDir: `${WORK}/c1/${r.id}`, files: [], jobScript: '',
      resourceLines: resourceDirectiveLines({ spec, parameters: { c: r.configuration }, ...(node ? { node } : {}) }),
      node,
    };
  };

  test('each run is pinned by the Latin square; each node gets one array, its tasks in run order', () => {
    const plan = planSubmissions(WORK, runs.map(prepare), 1001);
    expect(plan.map((s) => [s.kind, s.members[0]!.node]).sort()).toEqual([['array', 'n1'], ['array', 'n2'], ['array', 'n3']]);
    for (const s of plan) {
      const node = s.members[0]!.node!;
      expect(s.members.every((m) => m.node === node && m.resourceLines.includes(`#SBATCH --nodelist=${node}`))).toBe(true);
      expect(s.members.map((m) => m.run.position)).toEqual([...s.members.map((m) => m.run.position)].sort((a, b) => a - b));
      for (const m of s.members) expect(node).toBe(['n1', 'n2', 'n3'][(m.run.configurationPosition + m.run.repetition - 1) % 3]);
    }
    expect(plan.flatMap((s) => s.members)).toHaveLength(12);
  });

  test('over the 3 blocks every configuration ran once on each node', () => {
    const visits = new Map<number, Set<string>>();
    for (const p of runs.map(prepare)) visits.set(p.run.configurationPosition, (visits.get(p.run.configurationPosition) ?? new Set()).add(p.node!));
    expect([...visits.values()].map((v) => [...v].sort())).toEqual(Array(4).fill(['n1', 'n2', 'n3']));
  });

  test('without design.nodes no run is pinned', () => {
    expect(pinnedNode(CampaignSpec.parse({ name: 'x', cluster: 'local', run: 'true' }), { configurationPosition: 3, repetition: 2 })).toBeNull();
  });
});
