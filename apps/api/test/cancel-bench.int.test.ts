// bench/cancel.js in its quick mode: it runs, and the cancel answers count what they cancel. The
// timings it prints belong in docs/benchmarks.md, not in assertions. Needs the build (dist).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '@erg/testkit';

test('bench/cancel.js --quick: 150 pending and 50 active runs are being cancelled, with and without the inline budget', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(repoRoot(), 'bench', 'cancel.js'), '--quick', '--json'], {
    cwd: repoRoot(), timeout: 120_000,
  });
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!);
  expect(result).toMatchObject({ runs: 200, active: 50 });
  expect(result.cancelling).toEqual({ pending: 150, active: 50 });
  expect(result.inlineCancelling).toEqual({ pending: 150, active: 50 });
  expect(result.state).toBe('cancelling');
  // Every timing is a number the bench measured (their size is for docs/benchmarks.md).
  for (const key of ['answer', 'allPendingCancelled', 'inlineAnswer']) expect(result[key].medianMs).toBeGreaterThanOrEqual(0);
}, 150_000);
