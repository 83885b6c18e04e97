// bench/metrics-scan.js in its quick mode (an 8 MB log, local file): every case runs, reads what it
// should and computes the right values. Its timings and memory belong in docs/benchmarks.md, not
// in assertions. Needs the build (apps/scheduler/dist).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const repoRoot = () => path.resolve(__dirname, '..', '..', '..');

test('bench/metrics-scan.js --quick scans the generated log in every mode', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(repoRoot(), 'bench', 'metrics-scan.js'), '--quick', '--json'], { cwd: repoRoot(), timeout: 120_000 });
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!);
  const row = (name: string) => result.rows.find((r: { case: string }) => r.case === name);
  expect(result.fileMb).toBeGreaterThan(8);
  // The aggregate pass reads everything; last and first read a block or two.
  expect(row('aggregate')['MB read']).toBe(result.fileMb);
  expect(row('aggregate').metrics.steps).toBe(result.steps);
  expect(row('last')['MB read']).toBeLessThanOrEqual(1.1);
  expect(row('last').metrics.final_throughput).toBeGreaterThan(1000);
  expect(row('first')['MB read']).toBeLessThanOrEqual(2.2);
  expect(row('first').metrics.initial_loss).toBe(2);
  // RE2 reads the line built to make `^(a+)+$` backtrack like any other: the whole log, both values.
  expect(row('catastrophic')['MB read']).toBe(result.fileMb);
  expect(row('catastrophic').metrics).toEqual({ evil: 0, steps: result.steps });
  expect(row('catastrophic').warnings).toEqual([]);
  for (const r of result.rows) expect(typeof r['peak RSS MB']).toBe('number');
}, 150_000);
