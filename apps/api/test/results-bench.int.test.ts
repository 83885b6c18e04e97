// bench/results.js in its quick mode: a 30-run import campaign (10 configurations × 3
// repetitions) is filled, and the results fetched right after the last run's batch and finish
// count that run, with the time and energy it reported. The timings it prints belong in
// docs/benchmarks.md, not in assertions. Needs the build (dist).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '@erg/testkit';

test('bench/results.js --quick: the campaign results count every run and reflect the last one', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(repoRoot(), 'bench', 'results.js'), '--quick', '--json'], {
    cwd: repoRoot(), timeout: 60_000,
  });
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!);
  expect(result).toMatchObject({ runs: 30, configurations: 10, repetitions: 3, resultsConfigurations: 10, resultsRuns: 30 });
  expect(result.paretoFront).toBeGreaterThan(0);
  // The last run's configuration has all 3 repetitions, with time, energy and the metric of each.
  const { lastRun, lastConfiguration: c } = result;
  expect(c.key).toBe(lastRun.configurationKey);
  expect(c.n).toBe(3);
  for (const figure of ['timeS', 'energyJ', 'avgPowerW', 'steps']) expect(c[figure].n).toBe(3);
  expect(c.steps.mean).toBe(100);
  expect(c.avgPowerW.mean).toBeCloseTo(lastRun.powerW, 3);
  // The last run is its configuration's longest repetition: its time and its energy (constant power × time).
  expect(c.timeS.max).toBeCloseTo(lastRun.seconds, 2);
  expect(c.energyJ.max).toBeCloseTo(lastRun.powerW * lastRun.seconds, 0);
  // Every timing is a number the bench measured (their size is for docs/benchmarks.md).
  for (const key of ['fillSecondsExact', 'lastBatchToResultsMs', 'finishMs', 'resultsRequestMs']) {
    expect(Number.isFinite(result[key])).toBe(true);
    expect(result[key]).toBeGreaterThanOrEqual(0);
  }
}, 90_000);
