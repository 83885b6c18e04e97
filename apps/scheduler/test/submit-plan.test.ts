import { planSubmissions, type Prepared } from '../src/submit';

const WORK = '/scratch/erg';

function prepared(campaignId: string, id: string, resourceLines: string[] = ['#SBATCH --nodes=1', '#SBATCH --time=00:10:00']): Prepared {
  return {
    run: { id, campaignId, configurationKey: id, parameters: {}, repetition: 1, position: 0 },
    runDir: `${WORK}/${campaignId}/${id}`,
    files: [],
    jobScript: '',
    resourceLines,
  };
}

describe('planning submissions', () => {
  test('runs of one campaign with the same resources share an array, in claim order', () => {
    const plan = planSubmissions(WORK, ['a', 'b', 'c'].map((id) => prepared('c1', id)), 1001);
    expect(plan).toHaveLength(1);
    expect(plan[0]).toMatchObject({ kind: 'array' });
    expect(plan[0]!.members.map((m) => m.run.id)).toEqual(['a', 'b', 'c']);
    expect(plan[0]!.scriptPath).toMatch(/^\/scratch\/erg\/c1\/\.arrays\/[0-9a-f-]{36}\/array\.sh$/);
  });

  test('different resources, or another campaign, make another submission', () => {
    const plan = planSubmissions(
      WORK,
      [prepared('c1', 'a'), prepared('c1', 'b', ['#SBATCH --nodes=2']), prepared('c2', 'c'), prepared('c1', 'd'), prepared('c2', 'e')],
      1001,
    );
    const groups = plan.map((s) => [s.kind, s.members.map((m) => m.run.id).join('')]);
    expect(groups).toEqual([['array', 'ad'], ['job', 'b'], ['array', 'ce']]);
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
