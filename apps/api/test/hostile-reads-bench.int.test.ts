// bench/hostile-reads.js in its quick mode: the results of an import campaign of 200 configurations
// × 1 run, of 1,000 runs and of a search over 2,000 configurations with 6 measured, read after a
// change, again, three at once after a change and three at once again, against the API as its own
// process. Every answer must be a 200 with every run counted, the search's untried candidates
// counted and not listed, and the reads after a change computed in the results workers (never on
// the event loop), the others kept or joined. The timings it prints belong in docs/benchmarks.md,
// not in assertions. Needs the build (dist).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '@erg/testkit';

interface Step { name: string; answers: { status: number; ms: number; bytes: number }[]; shape: { configurations: number; runs: number; excluded: number; unmeasured: number | null }; healthz: { samples: number } | null }

test('bench/hostile-reads.js --quick: every read answers with every run counted, computed in the workers, kept or joined otherwise', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(repoRoot(), 'bench', 'hostile-reads.js'), '--quick', '--json'], {
    cwd: repoRoot(), timeout: 150_000,
  });
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as { workers: { part: string; runs: number; configurations: number; steps: Step[] }[]; sources: Record<string, number>; inputsRead: Record<string, number> };
  expect(result.workers.map((c) => c.part)).toEqual(['import', 'runs', 'search']);
  for (const campaign of result.workers) {
    expect(campaign.steps.map((s) => s.name)).toEqual([
      'first read (read whole)', 'read again (2×)', 'first read after a change', 'read after a change (2×, each after its own)', 'three at once after a change', 'three at once again',
    ]);
    expect(campaign.steps.flatMap((s) => s.answers.map((a) => a.status))).toEqual(Array(1 + 2 + 1 + 2 + 3 + 3).fill(200));
    for (const s of campaign.steps) {
      if (campaign.part === 'search') {
        // 6 measured of 2,000: the other 1,994 counted, neither listed nor excluded one by one.
        expect(s.shape).toMatchObject({ configurations: 6, runs: 6, excluded: 0, unmeasured: 1994 });
      } else {
        expect(s.shape).toMatchObject({ configurations: campaign.configurations, runs: campaign.runs, unmeasured: null });
      }
      // /healthz was polled while each step ran (its latencies are the bench's figures).
      expect(s.healthz?.samples).toBeGreaterThan(0);
    }
  }
  // Per campaign: the first read and the first after each of the four changes computed in a worker,
  // and nothing else computed: the others of the three at once joined that computation (or,
  // arriving after it, found its answer kept), every other read was kept. None on the event loop.
  const { worker, joined = 0, cache = 0, ...others } = result.sources;
  expect(worker).toBe(3 * 5);
  expect(joined + cache).toBe(3 * (2 + 2 + 3));
  expect(others).toEqual({});
  // The worker read each campaign whole once; after a change, only the run that changed.
  expect(result.inputsRead).toEqual({ whole: 3, changes: 3 * 4 });
}, 180_000);
