// bench/sequential-suite.js in its quick mode (200 simulated suite runs per setting, maximum 10):
// sequential suites against the fixed design. The figures belong in docs/benchmarks.md; the
// bounds here are ones a broken design would miss: false regressions near alpha or above (the
// fixed per-test design shows what no multiplicity control looks like at CV 10 %), no detection
// at low noise, or no runs saved under no change. Needs the build (packages/regress/dist).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '@erg/testkit';

interface Rates { falseRegression: number; detection: number; meanRuns: number; meanRunsChanged: number }
interface Row { cv: number; max: number; fixedRuns: number; 'obrien-fleming': { full: Rates; chained: Rates }; pocock: { full: Rates; chained: Rates }; fixedPerTest: Rates; fixedPerRun: Rates }

test('bench/sequential-suite.js --quick: false regressions, detection of +10 % energy and runs per suite run', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(repoRoot(), 'bench', 'sequential-suite.js'), '--quick', '--json'], { cwd: repoRoot(), timeout: 120_000 });
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as { runs: number; configurations: number; results: Row[] };
  expect(result.runs).toBe(200);
  expect(result.results.map((r) => r.cv)).toEqual([0.02, 0.05, 0.1]);
  for (const r of result.results) {
    expect(r.fixedRuns).toBe(40);
    for (const s of [r['obrien-fleming'].full, r.pocock.full]) {
      // ≤ 5 % measured on 200 runs: a design at 5 % would pass about half the time, one at 10 % never.
      expect(s.falseRegression).toBeLessThanOrEqual(0.06);
      expect(s.meanRuns).toBeGreaterThanOrEqual(12);
      expect(s.meanRuns).toBeLessThan(r.fixedRuns);
    }
  }
  const [cv2, cv5, cv10] = result.results as [Row, Row, Row];
  expect(cv2['obrien-fleming'].full.detection).toBeGreaterThanOrEqual(0.95);
  expect(cv5['obrien-fleming'].full.detection).toBeGreaterThanOrEqual(0.9);
  expect(cv2['obrien-fleming'].full.meanRuns).toBeLessThan(0.4 * cv2.fixedRuns);
  expect(cv10.fixedPerTest.falseRegression).toBeGreaterThan(0.15);
}, 120_000);
