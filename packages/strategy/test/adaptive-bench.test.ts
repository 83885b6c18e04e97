// bench/adaptive.js in its quick mode (10 simulated campaigns per CV setting): the adaptive
// strategy against the full grid on the GH200-like study with known truth. The figures belong in
// docs/benchmarks.md; the bounds here are ones a broken strategy would miss: racing never drops a
// configuration of the true front in these seeded campaigns, the minimum repetitions are always
// spent (≥ 40 % of the grid's 5), and at 2 % noise it needs hardly more.
// Needs the build (packages/strategy/dist).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '@erg/testkit';

interface Row {
  cv: number;
  grid: { f1: number; frugalChosen: number; runs: number };
  adaptive: { f1: number; frugalChosen: number; runs: number; runsShare: number; nodeHoursShare: number; frontConfigurationsDropped: number };
}

test('bench/adaptive.js --quick: per CV setting, the front found, the frugal configuration chosen and the runs spent', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(repoRoot(), 'bench', 'adaptive.js'), '--quick', '--json'], { cwd: repoRoot(), timeout: 60_000 });
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as { results: Row[]; gridRepetitions: number };
  expect(result.gridRepetitions).toBe(5);
  expect(result.results.map((r) => r.cv)).toEqual([0.02, 0.05, 0.1]);
  for (const r of result.results) {
    expect(r.grid.runs).toBe(48 * 5);
    expect(r.adaptive.frontConfigurationsDropped).toBe(0);
    expect(r.adaptive.runsShare).toBeGreaterThanOrEqual(0.4);
    expect(r.adaptive.f1).toBeGreaterThan(0.6);
    expect(r.adaptive.frugalChosen).toBeGreaterThanOrEqual(0.9);
  }
  expect(result.results[0]!.adaptive.runsShare).toBeLessThan(0.5);
}, 60_000);
