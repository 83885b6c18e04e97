import { campaignClaims, type RunFigures } from '@erg/energy';
import { claimsLevelText, claimsLines, confidenceText, nodeEffectRows, paretoDetailLines, paretoStatusText, rankLines, ratioText, residualText, TIED_SHOWN } from '../src';

const run = (timeS: number, energyJ: number): RunFigures => ({ timeS, energyJ, edpJs: timeS * energyJ, ed2pJs2: null, avgPowerW: null, metrics: {} });
const three = (t: number, e: number, spread = 0.01) => [run(t, e), run(t * (1 + spread), e * (1 + spread)), run(t * (1 - spread), e * (1 - spread))];

describe('claims in words', () => {
  it('a ratio with its interval to three figures; without an interval, not tested', () => {
    expect(ratioText({ ratio: 1.1, interval: [1.0834, 1.1172] })).toBe('×1.10 [1.08, 1.12]');
    expect(ratioText({ ratio: 2, interval: null })).toBe('×2.00 (not tested)');
    expect(ratioText({ ratio: null, interval: null })).toBe('no ratio');
    expect(ratioText({ ratio: 123.4, interval: [110.2, 140] })).toBe('×123 [110, 140]');
    expect(confidenceText(0.95)).toBe('95 %');
    expect(confidenceText(0.995)).toBe('99.5 %');
    expect(claimsLevelText({ confidence: 0.9, family: 1 })).toBe('90 %, Holm over 1 comparison');
  });

  it('a best tied with others names them closest first, each with its ratio over the best; a clear best names its closest', () => {
    const claims = campaignClaims(
      [{ id: 'far', runs: three(103, 50, 0.03) }, { id: 'best', runs: three(100, 50, 0.03) }, { id: 'near', runs: three(100.5, 50, 0.03) }, { id: 'slow', runs: three(150, 50, 0.01) }],
      { confidence: 0.95, objectives: ['time', 'energy'] },
    )!;
    const time = rankLines(claims).find((r) => r.objective === 'time')!;
    expect(time.text).toMatch(/^best, tied with near ×1\.00\d? \[0\.\d+, 1\.\d+\] Holm p 1\.0, far ×1\.03 \[/);
    expect(time.text).not.toContain('slow');
    const clear = campaignClaims([{ id: 'a', runs: three(100, 50) }, { id: 'b', runs: three(150, 80) }, { id: 'c', runs: three(200, 90) }], { confidence: 0.95, objectives: ['time', 'energy'] })!;
    expect(rankLines(clear)[0]).toMatchObject({ label: 'Fastest', best: 'a', text: expect.stringMatching(/^a, ahead of every other \(closest b ×1\.50 \[1\.\d+, 1\.\d+\] Holm p < 0\.001\)$/) });
    expect(paretoStatusText(clear, 'a')).toBe('front');
    expect(paretoStatusText(clear, 'b')).toBe('dominated by a');
    expect(paretoStatusText(clear, 'nobody')).toBe('');
    expect(paretoDetailLines(clear)).toEqual([expect.stringMatching(/^b: dominated by a — time ×1\.50 \[.*\] Holm p < 0\.001, energy ×1\.60 \[.*\] Holm p < 0\.001$/), expect.stringMatching(/^c: dominated by a — /)]);
    expect(claimsLines(clear)[0]).toBe(`Summary: ${clear.summary}.`);
  });

  it(`names at most ${TIED_SHOWN} tied entries and counts the rest`, () => {
    const entries = Array.from({ length: TIED_SHOWN + 3 }, (_, i) => ({ id: `e${i}`, runs: three(100 + i * 0.1, 50) }));
    const claims = campaignClaims(entries, { confidence: 0.95, objectives: ['time', 'energy'] })!;
    expect(rankLines(claims)[0]!.text).toMatch(/ and 2 more$/);
  });

  it('node residuals as signed percentages with their interval', () => {
    expect(residualText({ mean: 0.052, interval: [0.04, 0.064] })).toBe('+5.2 % [+4.0 %, +6.4 %]');
    expect(residualText({ mean: -0.02, interval: null })).toBe('-2.0 %');
    expect(residualText({ mean: null, interval: null })).toBe('—');
    expect(nodeEffectRows({ effects: [{ node: 'n1', runs: 3, time: { mean: 0, interval: [-0.01, 0.01] }, energy: { mean: null, interval: null }, distinguishable: false }] })).toEqual([
      ['n1', '3', '±0.0 % [-1.0 %, +1.0 %]', '—', 'no'],
    ]);
  });
});
