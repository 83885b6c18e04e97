// bench/campaign-scale.js in its quick mode: campaigns of 300 and 3,000 runs (the larger one big
// enough that its POST answer and its results are streamed), each created, put in the queue with
// the scheduler's transitions, and an import campaign of the same size finished and summarised.
// Every answer must count what was seeded; the timings it prints belong in docs/benchmarks.md,
// not in assertions. Needs the build (dist): the bench runs the API from apps/api/dist/main.js.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '@erg/testkit';

test('bench/campaign-scale.js --quick: POST, the queue and the results count every run at both sizes', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(repoRoot(), 'bench', 'campaign-scale.js'), '--quick', '--json'], {
    cwd: repoRoot(), timeout: 150_000,
  });
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!);
  expect(result.sizes.map((s: { runs: number }) => s.runs)).toEqual([300, 3000]);
  for (const size of result.sizes) {
    const runs: number = size.runs;
    expect(size.post.each).toHaveLength(2);
    expect(size.post.each.every((p: { bytes: number }) => p.bytes > runs * 50)).toBe(true);

    // The first campaign in the queue: a tenth claimed, a twentieth queued, a hundredth running with live power.
    expect(size.queue).toMatchObject({ claimed: runs / 10, queued: runs / 20, running: runs / 100 });
    const [all, page5000, pending, campaign, first, last] = size.queue.queries;
    expect(all).toMatchObject({ returned: Math.min(500, runs), total: runs, withPower: runs / 100 });
    expect(page5000).toMatchObject({ returned: runs, total: runs, withPower: runs / 100 });
    expect(pending).toMatchObject({ returned: Math.min(500, runs * 0.9), total: runs * 0.9, withPower: 0 });
    expect(campaign).toMatchObject({ totalRuns: runs, runCounts: { pending: runs * 0.9, submitting: runs / 20, queued: runs / 20 - runs / 100, running: runs / 100 } });
    const page = Math.min(1000, runs / 2);
    expect(first).toMatchObject({ returned: page, total: runs });
    expect(last).toMatchObject({ returned: page, total: runs });

    // Results over every run of the import campaign, the last one included.
    expect(size.results).toMatchObject({ configurations: runs / 10, repetitions: 10, resultsConfigurations: runs / 10, resultsRuns: runs });
    expect(size.results.paretoFront).toBeGreaterThan(0);

    // Every timing is a number the bench measured (their size is for docs/benchmarks.md).
    const timings = [
      size.post.p50Ms, size.post.p95Ms, size.results.lastBatchToResultsMs, size.results.get.p50Ms, size.results.get.p95Ms, size.results.get.peakRssMb,
      ...size.queue.queries.flatMap((q: { p50Ms: number; p95Ms: number; peakRssMb: number }) => [q.p50Ms, q.p95Ms, q.peakRssMb]),
      ...size.post.each.flatMap((p: { ms: number; peakRssMb: number }) => [p.ms, p.peakRssMb]),
    ];
    for (const t of timings) {
      expect(Number.isFinite(t)).toBe(true);
      expect(t).toBeGreaterThanOrEqual(0);
    }
  }
  expect(Object.keys(result.ratios)).toEqual(['runs', 'post', 'postPeakRss', 'queue', 'results']);
}, 180_000);
