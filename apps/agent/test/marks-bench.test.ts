// bench/marks.js in its quick mode: python3 and bash write their marks, every line parses and
// the counts are the ones the bench wrote. The µs per mark belong in docs/benchmarks.md, not in
// assertions (machines are noisy).
import { execFile } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { marksFileName } from '@erg/spec/marks';
import { repoRoot } from '@erg/testkit';

test('bench/marks.js --quick: figures for Python and the shell, and every line it wrote parses as expected', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(repoRoot(), 'bench', 'marks.js'), '--quick', '--json'], {
    cwd: repoRoot(), timeout: 60_000,
  });
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!);
  expect(result).toMatchObject({ iterations: 5000, rounds: 3, python: { enabled: true, offEnabled: false }, shell: { calls: 50 } });
  for (const key of ['phaseUsPerMark', 'phaseUsPerMarkBest', 'stepUsPerMark', 'stepUsPerMarkBest', 'offUsPerMark', 'offStepUsPerMark']) {
    expect(Number.isFinite(result.python[key])).toBe(true);
    expect(result.python[key]).toBeGreaterThanOrEqual(0);
  }
  for (const key of ['usPerCall', 'trueUsPerCall']) expect(result.shell[key]).toBeGreaterThan(0);
  // One file, named for this host as the agent names it; only whole lines that parse.
  expect(result.lines.files).toEqual([marksFileName(os.hostname())]);
  expect(result.lines).toMatchObject({ unparsed: 0, unterminated: false, asExpected: true });
  expect(result.lines.parsed).toBe(result.lines.expected.total);
  expect(result.lines.byWriter).toEqual(result.lines.expected.byWriter);
  expect(result.lines.byMark).toEqual(result.lines.expected.byMark);
}, 90_000);
