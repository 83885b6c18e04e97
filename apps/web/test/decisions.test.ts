import { decisionsSummary, isAdaptive, orderedDecisions, STATUS_TEXT, type CampaignDecisions } from '@erg/web';

const decision = (key: string, status: CampaignDecisions['decisions'][number]['status']) => ({
  key, status, n: 2, reason: `${key} ${status}`, by: null, p: null, relativeHalfWidth: null, decidedAt: '2026-12-01T20:00:00.000Z', runsUsed: 6,
});
const adaptive = (over: Partial<CampaignDecisions> = {}): CampaignDecisions => ({
  campaignId: 'c', open: false, stop: 'every configuration is decided after 9 runs', runsUsed: 9, gridRuns: 15, undecided: [], budget: { maxRuns: null, runsLeft: null },
  strategy: { kind: 'adaptive', minRepetitions: 2, maxRepetitions: 5, targetRelativeHalfWidth: 0.05, confidence: 0.95, objectives: ['time', 'energy'], screening: false },
  decisions: [decision('a', 'precise'), decision('b', 'dropped'), decision('c', 'sampling'), decision('d', 'front')],
  ...over,
});

describe('decisions', () => {
  test('only an adaptive or a search spec has decisions', () => {
    expect(isAdaptive({ strategy: { kind: 'adaptive' } })).toBe(true);
    expect(isAdaptive({ strategy: { kind: 'search' } })).toBe(true);
    expect(isAdaptive({ strategy: { kind: 'grid' } })).toBe(false);
    expect(isAdaptive({})).toBe(false);
    expect(isAdaptive(undefined)).toBe(false);
  });

  test('the summary: strategy, runs against the grid, and why it stopped or what is undecided', () => {
    expect(decisionsSummary(adaptive())).toEqual({
      strategy: 'adaptive: 2–5 repetitions, intervals within ±5.0 %, confidence 95.0 %, front of time and energy',
      runs: "9 of the grid's 15 runs at 5 repetitions (40.0 % fewer)",
      state: 'stopped: every configuration is decided after 9 runs',
    });
    const open = decisionsSummary(adaptive({ open: true, stop: null, undecided: ['c'], budget: { maxRuns: 12, runsLeft: 3 } }));
    expect(open.state).toBe('deciding: 1 undecided (c)');
    expect(open.runs).toBe("9 of the grid's 15 runs at 5 repetitions (40.0 % fewer); budget 12 runs, 3 left");
  });

  test('a search: its settings, the runs against the whole space, and what is in flight', () => {
    const search = adaptive({
      open: true, stop: null, runsUsed: 6, gridRuns: 1000, undecided: ['c'], budget: { maxRuns: 12, runsLeft: 6 },
      strategy: { kind: 'search', repetitions: 1, parallel: 4, seed: 7, objectives: ['time', 'energy'], budget: { maxRuns: 12 } },
    });
    expect(decisionsSummary(search)).toEqual({
      strategy: 'search: 1 run(s) per configuration tried, seed 7, front of time and energy',
      runs: "6 of the whole space's 1000 runs, 4 configurations tried (99.4 % fewer); budget 12 runs, 6 left",
      state: 'searching: 1 in flight',
    });
    expect(decisionsSummary({ ...search, open: false, stop: 'the budget of 12 runs is spent' }).state).toBe('stopped: the budget of 12 runs is spent');
  });

  test('open decisions first, then dropped, then settled; every status has words', () => {
    expect(orderedDecisions(adaptive().decisions).map((d) => d.key)).toEqual(['c', 'b', 'd', 'a']);
    expect(Object.keys(STATUS_TEXT).sort()).toEqual(['dropped', 'exhausted', 'front', 'precise', 'sampling']);
  });
});
