// The study report's pure parts: marginal means, round ticks, and the HTML of fixture results —
// self-contained, escaped, every figure captioned with its n, absent sections said to be absent.
// (apps/cli/test/report.int.test.ts renders it from a real API in Chromium and as PDF.)
import { marginalMeans, reportHtml, type StudyReportInput } from '@erg/cli';
import { linearScale, niceTicks } from '../src/study-report/svg';
import { resultsWithMovement } from './fixtures/data-movement';
import { resultsWithPhases } from './fixtures/phases';
import { resultsFixture } from './fixtures/results';
import type { CampaignResults } from '../src/api-types';

function input(results: CampaignResults, over: Partial<StudyReportInput> = {}): StudyReportInput {
  return {
    campaign: {
      id: results.campaignId, name: 'study <&> "one"', cluster: 'local', owner: 'admin', state: 'completed', totalRuns: 15, runCounts: { completed: 15 },
      createdAt: '2026-12-04T10:00:00.000Z', spec: { name: 'study', run: 'echo "<script>alert(1)</script>"' },
    },
    results, byFingerprint: null, ergVersion: '0.1.0', generatedAt: '2026-12-04T12:00:00.000Z', ...over,
  };
}

const figures = (html: string) => [...html.matchAll(/<figure data-figure="([a-z]+)"/g)].map((m) => m[1]);

describe('marginalMeans', () => {
  test('per value, the mean of the configuration means that have it; numbers in order; one-valued parameters left out', () => {
    const c = (key: string, parameters: Record<string, unknown>, time: number, energy: number, n = 3) =>
      ({ key, parameters, n, timeS: { mean: time }, energyJ: { mean: energy } }) as never;
    const effects = marginalMeans([c('a', { p: 2, q: 'x', r: 1 }, 10, 100), c('b', { p: 1, q: 'x', r: 1 }, 20, 300), c('d', { p: 2, q: 'y', r: 1 }, 30, 500, 2)]);
    expect(effects).toEqual([
      { parameter: 'p', levels: [{ value: '1', configurations: 1, runs: 3, meanTimeS: 20, meanEnergyJ: 300 }, { value: '2', configurations: 2, runs: 5, meanTimeS: 20, meanEnergyJ: 300 }] },
      { parameter: 'q', levels: [{ value: 'x', configurations: 2, runs: 6, meanTimeS: 15, meanEnergyJ: 200 }, { value: 'y', configurations: 1, runs: 2, meanTimeS: 30, meanEnergyJ: 500 }] },
    ]);
  });
});

describe('niceTicks', () => {
  test('round steps covering the range', () => {
    expect(niceTicks(0, 10)).toEqual([0, 2, 4, 6, 8, 10]);
    expect(niceTicks(2.37, 2.9)).toEqual([2.4, 2.6, 2.8]);
    expect(niceTicks(0.1, 0.35)).toEqual([0.1, 0.15, 0.2, 0.25, 0.3, 0.35]);
    expect(niceTicks(5, 5)).toEqual([5]);
  });
});

describe('linearScale', () => {
  test('floor 0: an interval reaching below 0 stops at the axis; the range still covers every value', () => {
    const x = linearScale([-40, 10, 25], 100, 300, { floor: 0 });
    expect(x.domain[0]).toBe(0);
    expect(x(-40)).toBe(100);
    expect(x(25)).toBeLessThan(300);
    expect(x.ticks[0]).toBe(0);
  });
});

describe('reportHtml', () => {
  test('self-contained: no URL but the SVG namespace, no script, a CSP of nothing; text escaped', () => {
    const html = reportHtml(input(resultsFixture()));
    expect(html.match(/(?:src|href)=/g)).toBeNull();
    expect([...html.matchAll(/https?:\/\/[^"\s]+/g)].map((m) => m[0]).filter((u) => u !== 'http://www.w3.org/2000/svg')).toEqual([]);
    expect(html).not.toMatch(/<script/i);
    expect(html).toContain(`content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"`);
    expect(html).toContain('Study report: study &lt;&amp;&gt; &quot;one&quot;');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  test('Pareto and effects figures with n and the interval in their captions; no phases and no data movement said so', () => {
    const html = reportHtml(input(resultsFixture()));
    expect(figures(html)).toEqual(['pareto', 'effects']);
    expect(html).toMatch(/Figure 1\. Time against energy\.<\/b> <span data-caption>Mean time against mean energy per run of each configuration \(n = 5 runs per configuration\); error bars are the two-sided 95 % Student-t intervals/);
    expect(html).toContain('data-none="phases"');
    expect(html).toContain('data-none="movement"');
    expect(html).toContain('the results API offers none for marginal means, so erg report computes them');
    // The front's members are drawn filled, the rest hollow.
    expect([...html.matchAll(/<g data-key="([^"]+)" data-front="true">/g)].map((m) => m[1]).sort()).toEqual(['mode=a,b;n=1', 'mode=x=y;n=2', 'mode=z;n=3']);
    expect(html).toContain('randomized complete blocks (seed 1234)');
  });

  test('energy by phase and data movement where the results have them', () => {
    expect(figures(reportHtml(input(resultsWithPhases())))).toContain('phases');
    const movement = reportHtml(input(resultsWithMovement()));
    expect(figures(movement)).toContain('movement');
    expect(movement).toMatch(/runs with data movement per configuration\); error bars are the 95 % Student-t intervals/);
  });

  test('the kinds of machine per configuration from the results grouped by fingerprint', () => {
    const results = resultsFixture();
    const byFingerprint = { ...results, groupedBy: 'fingerprint' as const, configurations: results.configurations.map((c) => ({ ...c, fingerprint: 'a1b2c3d4e5f6a7b8c9d0' })) };
    expect(reportHtml(input(results, { byFingerprint }))).toContain('<td>a1b2c3d4e5f6</td>');
  });
});
