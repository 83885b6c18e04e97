import { colors, decisionsReport, strategyText, type CampaignDecisions } from '@erg/cli';
import { CampaignDecisions as Schema } from '@erg/spec';
import { CAMPAIGN_ID, erg, routes } from './helpers';

const plain = colors(false);

/** An adaptive campaign that dropped one configuration and settled the others (a body the API's schema accepts). */
function decided(): CampaignDecisions {
  return {
    campaignId: CAMPAIGN_ID,
    strategy: { kind: 'adaptive', minRepetitions: 2, maxRepetitions: 5, targetRelativeHalfWidth: 0.05, confidence: 0.95, objectives: ['time', 'energy'], screening: false },
    open: false, stop: 'every configuration is decided after 9 runs', runsUsed: 9, gridRuns: 15, undecided: [],
    budget: { maxRuns: null, runsLeft: null },
    decisions: [
      { key: 'iterations=4000000', status: 'precise', n: 4, reason: 'iterations=4000000 settled after 4 runs: its 95 % intervals are within ±5.0 % (time ±3.1 %, energy ±3.3 %)', by: null, p: null, relativeHalfWidth: [0.031, 0.033], decidedAt: '2026-12-01T20:30:00.000Z', runsUsed: 8 },
      { key: 'iterations=4400000', status: 'exhausted', n: 3, reason: 'iterations=4400000 reached 5 runs undecided', by: null, p: null, relativeHalfWidth: [0.06, 0.07], decidedAt: '2026-12-01T20:31:00.000Z', runsUsed: 9 },
      { key: 'iterations=32000000', status: 'dropped', n: 2, reason: 'iterations=32000000 dropped after 2 runs: dominated by iterations=4000000 on time and energy, p < 0.001', by: 'iterations=4000000', p: 2e-5, relativeHalfWidth: [0.2, 0.2], decidedAt: '2026-12-01T20:29:00.000Z', runsUsed: 6 },
    ],
  };
}

test("the fixture is a body the API's schema accepts", () => {
  expect(Schema.parse(decided())).toEqual(decided());
});

describe('erg decisions', () => {
  test('the strategy, the runs against the grid, why it stopped, and each configuration with its reason', () => {
    const text = decisionsReport(decided(), plain);
    expect(text).toContain('Strategy  adaptive: 2–5 repetitions, ±5.0 % target, confidence 95.0 %, front of time and energy');
    expect(text).toContain("Runs      9 of the grid's 15 at 5 repetitions (40.0 % fewer)");
    expect(text).toContain('State     stopped: every configuration is decided after 9 runs');
    expect(text).toMatch(/^iterations=32000000\s+dropped\s+2\s+iterations=32000000 dropped after 2 runs: dominated by iterations=4000000 on time and energy, p < 0\.001$/m);
  });

  test('an open campaign says what is undecided; a grid says it has no decisions', () => {
    const open = { ...decided(), open: true, stop: null, undecided: ['iterations=4400000'] };
    expect(decisionsReport(open, plain)).toContain('State     deciding: 1 configuration undecided');
    const grid = { ...decided(), strategy: { kind: 'grid' as const }, decisions: [] };
    expect(decisionsReport(grid, plain)).toBe(`Campaign ${CAMPAIGN_ID} runs the full grid (strategy grid): 9 runs, no decisions to show.\n`);
  });

  test('a search: its settings, the runs against the whole space, what is in flight, and where each configuration tried stands', () => {
    const search: CampaignDecisions = {
      ...decided(),
      strategy: { kind: 'search', repetitions: 1, parallel: 4, seed: 7, objectives: ['time', 'energy'], budget: { maxRuns: 12 } },
      open: true, stop: null, runsUsed: 6, gridRuns: 1000, undecided: ['b=2', 'b=3'], budget: { maxRuns: 12, runsLeft: 6 },
      decisions: [
        { key: 'b=1', status: 'front', n: 1, reason: 'b=1 on the observed front after 1 run(s): no configuration tried is better on both time and energy (time 1.00, energy 50.0)', by: null, p: null, relativeHalfWidth: null, decidedAt: '2026-12-01T20:30:00.000Z', runsUsed: 4 },
        { key: 'b=2', status: 'sampling', n: 0, reason: 'b=2: proposed by the search, 1 run(s) in flight', by: null, p: null, relativeHalfWidth: null, decidedAt: '2026-12-01T20:30:00.000Z', runsUsed: 4 },
      ],
    };
    expect(Schema.parse(search)).toEqual(search);
    const text = decisionsReport(search, plain);
    expect(text).toContain('Strategy  search: 1 run per configuration tried, up to 4 in flight, seed 7, front of time and energy');
    expect(text).toContain("Runs      6 of the whole space's 1000 (2 configurations tried, 99.4 % fewer)");
    expect(text).toContain('Budget    12 runs, 6 left');
    expect(text).toContain('State     searching: 2 configurations in flight');
    expect(text).toMatch(/^b=1\s+front\s+1\s+b=1 on the observed front after 1 run\(s\)/m);
    expect(decisionsReport({ ...search, decisions: [] }, plain)).toContain("Nothing tried yet: the first design is proposed at the scheduler's next step.");
    // erg watch's few words.
    expect(strategyText(search)).toBe("search: 2 in flight, 2 tried, 1 on the front, 6 of the space's 1000 runs");
    expect(strategyText({ ...search, open: false, stop: 'the budget of 12 runs is spent' })).toBe("search: the budget of 12 runs is spent, 2 tried, 1 on the front, 6 of the space's 1000 runs");
  });

  test('from the API; --json passes the body through', async () => {
    const api = routes({ [`GET /v1/campaigns/${CAMPAIGN_ID}/decisions`]: { status: 200, body: decided() } });
    const out = await erg(['decisions', CAMPAIGN_ID], { api });
    expect(out.code).toBe(0);
    expect(out.stdout).toBe(decisionsReport(decided(), plain));
    const json = await erg(['decisions', CAMPAIGN_ID, '--json'], { api });
    expect(JSON.parse(json.stdout)).toEqual(decided());
  });
});
