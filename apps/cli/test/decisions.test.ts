import { colors, decisionsReport, type CampaignDecisions } from '@erg/cli';
import { CampaignDecisions as Schema } from '@erg/spec';
import { CAMPAIGN_ID, erg, routes } from './helpers';

const plain = colors(false);

/** An adaptive campaign that dropped one configuration and settled the others (a body the API's schema accepts). */
function decided(): CampaignDecisions {
  return {
    campaignId: CAMPAIGN_ID,
    strategy: { kind: 'adaptive', minRepetitions: 2, maxRepetitions: 5, targetRelativeHalfWidth: 0.05, confidence: 0.95, objectives: ['time', 'energy'] },
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

  test('from the API; --json passes the body through', async () => {
    const api = routes({ [`GET /v1/campaigns/${CAMPAIGN_ID}/decisions`]: { status: 200, body: decided() } });
    const out = await erg(['decisions', CAMPAIGN_ID], { api });
    expect(out.code).toBe(0);
    expect(out.stdout).toBe(decisionsReport(decided(), plain));
    const json = await erg(['decisions', CAMPAIGN_ID, '--json'], { api });
    expect(JSON.parse(json.stdout)).toEqual(decided());
  });
});
