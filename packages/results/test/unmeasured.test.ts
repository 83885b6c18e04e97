import type { ConfigurationEnergyRow } from '@erg/db';
import { campaignFiguresOf, type CampaignFigureInputs } from '../src/campaign-figures';
import { countUnmeasured } from '../src/unmeasured';

/** A configuration's row: without a run (never tried), or one completed run with these figures. */
function row(key: string, position: number, run?: { id: string; repetition: number; timeS: number; energyJ: number | null }): ConfigurationEnergyRow {
  const result = run && { timeS: run.timeS, energyJ: run.energyJ, edpJs: null, ed2pJs2: null, avgPowerW: null, coverage: 1, components: {}, flags: [] };
  return {
    key, parameters: { a: position }, position, runId: run?.id ?? null, repetition: run?.repetition ?? null, metrics: run ? {} : null, result: result ?? null, nodeList: null,
  };
}

const inputs: CampaignFigureInputs = {
  rows: [
    row('a=0', 0, { id: 'r1', repetition: 1, timeS: 10, energyJ: 100 }),
    row('a=0', 0, { id: 'r2', repetition: 2, timeS: 11, energyJ: 105 }),
    row('a=1', 1),
    row('a=2', 2, { id: 'r3', repetition: 1, timeS: 5, energyJ: 200 }),
    row('a=3', 3),
    // Measured, but without energy: it stays listed, excluded from the front for that.
    row('a=4', 4, { id: 'r4', repetition: 1, timeS: 7, energyJ: null }),
  ],
  runNodes: new Map(),
  context: null,
  phaseRows: [],
  movementRows: [],
};

describe('countUnmeasured', () => {
  test("a search's candidates without a completed run are counted, not listed; every figure stays as it was", () => {
    const full = campaignFiguresOf(inputs);
    const answer = countUnmeasured(full, 'search', '/v1/campaigns/c/configurations?measured=false');
    expect(answer.unmeasured).toEqual({ configurations: 2, list: '/v1/campaigns/c/configurations?measured=false' });
    expect(answer.configurations.map((c) => c.key)).toEqual(['a=0', 'a=2', 'a=4']);
    expect(answer.configurations).toEqual(full.configurations.filter((c) => c.n > 0));
    expect(full.excluded.map((e) => e.key)).toEqual(['a=1', 'a=3', 'a=4']);
    expect(answer.excluded).toEqual(full.excluded.filter((e) => e.key === 'a=4'));
    const { configurations: _c, excluded: _e, unmeasured: _u, ...rest } = answer;
    const { configurations: _fc, excluded: _fe, ...fullRest } = full;
    expect(rest).toEqual(fullRest);
  });

  test('grouped by fingerprint, an untried candidate is its one entry of unknown class', () => {
    const full = campaignFiguresOf(inputs, { groupBy: 'fingerprint' });
    const answer = countUnmeasured(full, 'search', 'list');
    expect(answer.unmeasured?.configurations).toBe(2);
    expect(answer.configurations.map((c) => c.id)).toEqual(['a=0@none', 'a=2@none', 'a=4@none']);
    expect(answer.excluded.map((e) => e.key)).toEqual(['a=4@none']);
  });

  test('grid and adaptive campaigns keep every configuration, and say nothing of unmeasured ones', () => {
    const full = campaignFiguresOf(inputs);
    for (const strategy of ['grid', 'adaptive', undefined] as const) {
      const answer = countUnmeasured(full, strategy, 'list');
      expect(answer).toBe(full);
      expect('unmeasured' in answer).toBe(false);
    }
  });
});
