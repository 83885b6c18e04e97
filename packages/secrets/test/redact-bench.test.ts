// bench/redact.js in its quick mode: it runs over every hostile input at both sizes (a
// backtracking pattern would not finish the larger one and be reported as skipped). Its
// timings belong in docs/benchmarks.md, not in assertions. Needs the build (dist).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const repoRoot = () => path.resolve(__dirname, '..', '..', '..');

test('bench/redact.js --quick measures every input at both sizes', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(repoRoot(), 'bench', 'redact.js'), '--quick', '--json'], { cwd: repoRoot(), timeout: 120_000 });
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!);
  expect(result).toMatchObject({ small: 16 << 10, big: 256 << 10 });
  expect(result.rows.length).toBeGreaterThanOrEqual(10);
  for (const row of result.rows) {
    expect(typeof row['16KiB ms']).toBe('number');
    expect(typeof row['256KiB ms']).toBe('number');
    expect(typeof row.ratio).toBe('number');
  }
}, 150_000);
