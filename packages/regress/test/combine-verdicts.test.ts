import { type Verdict, campaignVerdict } from '../src';

const v = (status: Verdict['status'], change: number, reason?: Verdict['reason']): Verdict => ({
  metric: 'energy',
  status,
  ...(reason ? { reason } : {}),
  change,
  ci95: null,
  p: null,
  nBaseline: 5,
  nCandidate: 5,
  cvBaseline: 0.02,
  cvCandidate: 0.02,
});

describe('campaignVerdict', () => {
  it('is regressed if any verdict regressed, worst first', () => {
    const r = campaignVerdict([
      { key: 'a', verdicts: [v('regressed', 0.07), v('pass', 0)] },
      { key: 'b', verdicts: [v('inconclusive', 0.3, 'too_noisy'), v('regressed', 0.2)] },
      { key: 'c', verdicts: [v('improved', -0.1)] },
    ]);
    expect(r.status).toBe('regressed');
    expect(r.counts).toEqual({ pass: 1, regressed: 2, improved: 1, inconclusive: 1 });
    expect(r.worst.map((w) => [w.key, w.verdict.change])).toEqual([['b', 0.2], ['a', 0.07]]);
  });

  it('is inconclusive before improved, listing the reasons most frequent first', () => {
    const r = campaignVerdict([
      { key: 'a', verdicts: [v('improved', -0.1), v('inconclusive', 0, 'too_few_repetitions')] },
      { key: 'b', verdicts: [v('inconclusive', 0, 'too_noisy'), v('inconclusive', 0, 'too_noisy')] },
    ]);
    expect(r.status).toBe('inconclusive');
    expect(r.reasons).toEqual(['too_noisy', 'too_few_repetitions']);
    expect(r.worst).toHaveLength(3);
  });

  it('is improved when nothing regressed or is inconclusive, biggest drop first', () => {
    const r = campaignVerdict([{ key: 'a', verdicts: [v('improved', -0.1), v('pass', 0), v('improved', -0.3)] }]);
    expect(r.status).toBe('improved');
    expect(r.worst.map((w) => w.verdict.change)).toEqual([-0.3, -0.1]);
  });

  it('passes when every verdict passes', () => {
    expect(campaignVerdict([{ key: 'a', verdicts: [v('pass', 0.01), v('pass', -0.02)] }])).toEqual({
      status: 'pass',
      counts: { pass: 2, regressed: 0, improved: 0, inconclusive: 0 },
      reasons: [],
      worst: [],
    });
  });

  it('is inconclusive with no verdicts at all rather than passing', () => {
    expect(campaignVerdict([])).toMatchObject({ status: 'inconclusive', reasons: ['no_verdicts'] });
    expect(campaignVerdict([{ key: 'a', verdicts: [] }])).toMatchObject({ status: 'inconclusive', reasons: ['no_verdicts'] });
  });
});
