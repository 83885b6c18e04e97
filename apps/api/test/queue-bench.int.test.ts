// bench/queue.js in its quick mode: 600 unfinished runs seeded (bench/lib/queue-seed.js), and each
// query's answer counts and lists the runs it should — by state, by cluster, with live power for
// every running run. The latencies it prints belong in docs/benchmarks.md, not in assertions.
// Needs the build (dist).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '@erg/testkit';

test('bench/queue.js --quick: GET /v1/queue answers with the 600 seeded runs, 36 of them running with live power', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(repoRoot(), 'bench', 'queue.js'), '--quick', '--json'], {
    cwd: repoRoot(), timeout: 60_000,
  });
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!);
  // 20 campaigns of 15 configurations × 2; per cluster 120 claimed, 60 of them queued, 18 of those running.
  expect(result.unfinished).toBe(600);
  const byQuery = Object.fromEntries(result.queries.map((q: { query: string }) => [q.query, q]));
  expect(Object.keys(byQuery)).toEqual(['', '?limit=5000', '?state=running', '?cluster=beta&state=pending']);
  // Default limit 500: running first, then queued/submitting, then pending.
  expect(byQuery['']).toMatchObject({
    requests: 3, returned: 500, total: 600, truncated: true, withPower: 36, states: { running: 36, queued: 84, submitting: 120, pending: 260 },
  });
  expect(byQuery['?limit=5000']).toMatchObject({
    returned: 600, total: 600, truncated: false, withPower: 36, states: { running: 36, queued: 84, submitting: 120, pending: 360 }, clusters: { alpha: 300, beta: 300 },
  });
  expect(byQuery['?state=running']).toMatchObject({ returned: 36, total: 36, withPower: 36, states: { running: 36 }, clusters: { alpha: 18, beta: 18 } });
  expect(byQuery['?cluster=beta&state=pending']).toMatchObject({ returned: 180, total: 180, withPower: 0, states: { pending: 180 }, clusters: { beta: 180 } });
  // Every timing is a number the bench measured (their size is for docs/benchmarks.md).
  const timings = [result.seedSeconds, ...result.queries.flatMap((q: { medianMs: number; minMs: number; maxMs: number }) => [q.medianMs, q.minMs, q.maxMs])];
  for (const t of timings) {
    expect(Number.isFinite(t)).toBe(true);
    expect(t).toBeGreaterThanOrEqual(0);
  }
}, 90_000);
