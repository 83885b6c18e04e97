// The results answer is written a configuration at a time, each kept as JSON while its summary is
// the same object (results-answer.ts resultsBytes): it must be the JSON value z.encode gives for the
// whole answer, on the first read and on later ones where the front moved or one run changed.
import { z } from 'zod';
import type { ConfigurationEnergyRow } from '@erg/db';
import { campaignFiguresOf, type CampaignFigureInputs } from '@erg/results';
import { CampaignResults } from '@erg/spec';
import { resultsBytes } from '../src/results-answer';

const row = (key: string, a: number, repetition: number, timeS: number, energyJ: number): ConfigurationEnergyRow => ({
  key, parameters: { a }, position: a, runId: `00000000-0000-4000-8000-${String(a * 10 + repetition).padStart(12, '0')}`, repetition, metrics: { steps: 100 }, nodeList: null,
  result: { timeS, energyJ, edpJs: timeS * energyJ, ed2pJs2: timeS * timeS * energyJ, avgPowerW: energyJ / timeS, coverage: 1, components: { gpu: energyJ / 2 }, flags: [] },
});
const inputsOf = (rows: ConfigurationEnergyRow[]): CampaignFigureInputs => ({ rows, runNodes: new Map(), context: null, phaseRows: [], movementRows: [] });
const answerOf = (inputs: CampaignFigureInputs) => ({ campaignId: 'c1', ...campaignFiguresOf(inputs) }) as CampaignResults;
const whole = (answer: CampaignResults) => JSON.parse(JSON.stringify(z.encode(CampaignResults, answer)));

/** The answer's bytes as text. */
const resultsJson = (answer: CampaignResults) => new TextDecoder().decode(resultsBytes(answer));

describe('resultsBytes', () => {
  test('is the whole answer encoded, on a first read and after a change moved the front', () => {
    // Three configurations: 1 fast and costly, 2 slow and frugal (both on the front), 3 dominated.
    const rows = [1, 2, 3].flatMap((a) => [0, 1, 2].map((r) => row(`a=${a}`, a, r, [10, 20, 25][a - 1]! + r * 0.1, [300, 200, 320][a - 1]! + r)));
    const first = answerOf(inputsOf(rows));
    expect(JSON.parse(resultsJson(first))).toEqual(whole(first));
    expect(first.paretoFront).toEqual(['a=1', 'a=2']);
    // Configuration 3's runs measured again, so much faster and more frugal that it alone is optimal:
    // the unchanged rows are the same objects (as the results worker keeps them), their summaries too.
    const changed = rows.map((r) => (r.key === 'a=3' ? row('a=3', 3, r.repetition!, 1 + r.repetition!, 10) : r));
    const second = answerOf(inputsOf(changed));
    expect(second.configurations[0]).toBe(first.configurations[0]);
    expect(second.paretoFront).toEqual(['a=3']);
    expect(second.configurations[0]!.paretoOptimal).toBe(false);
    const json = resultsJson(second);
    expect(JSON.parse(json)).toEqual(whole(second));
    expect(JSON.parse(json).configurations.map((c: { paretoOptimal: boolean }) => c.paretoOptimal)).toEqual([false, false, true]);
  });
});
