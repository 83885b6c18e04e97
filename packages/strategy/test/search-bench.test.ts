// bench/search.js in its quick mode (4 simulated campaigns at CV 5 %, budgets of 5 % and 10 % of
// the 1,440 configurations): `strategy: search` against random search at the same budget on the
// GH200-like study with known truth. The figures belong in docs/benchmarks.md; the bounds here
// are ones a broken search would miss: random search reaches a hypervolume ratio of about 0.65 at
// 5 % and 0.8 at 10 %, the search about 0.97; a surrogate whose predicted means are ignored (exploring its variance
// only) gets 0.37 and 0.81, no better than random. Needs the build (packages/strategy/dist).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '@erg/testkit';

interface Side { hvRatio: number; hvRatioWorst: number; frontFound: number; runs: number }
interface Row { cv: number; budgetShare: number; maxRuns: number; search: Side; random: Side; searchBeatsRandom: number }

test('bench/search.js --quick: per budget, the hypervolume ratio and the share of the true front found, search against random', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(repoRoot(), 'bench', 'search.js'), '--quick', '--json'], { cwd: repoRoot(), timeout: 120_000 });
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as { configurations: number; trueFront: number; repetitions: number; results: Row[] };
  expect(result.configurations).toBeGreaterThanOrEqual(1000);
  expect(result.results.map((r) => r.budgetShare)).toEqual([0.05, 0.1]);
  for (const r of result.results) {
    // The budget is spent, not exceeded.
    expect(r.search.runs).toBeLessThanOrEqual(r.maxRuns);
    expect(r.search.runs).toBeGreaterThan(r.maxRuns - 2 * result.repetitions);
    expect(r.search.hvRatioWorst).toBeGreaterThan(0.9);
    expect(r.search.hvRatio).toBeGreaterThan(r.random.hvRatio + 0.1);
    expect(r.search.frontFound).toBeGreaterThan(2 * r.random.frontFound);
    expect(r.searchBeatsRandom).toBe(1);
  }
}, 120_000);
