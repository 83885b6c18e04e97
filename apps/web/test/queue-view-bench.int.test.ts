// bench/queue-view.js in its quick mode: the built web app's queue view, in Debian's Chromium, on
// 600 seeded unfinished runs — the table counts all of them, keeps only the rows in view in the
// DOM (running runs first), and paints the last run after a jump to the end. The timings it
// prints belong in docs/benchmarks.md, not in assertions. Needs the build (apps/web/dist and the
// API's dist), Postgres, Redis and /usr/bin/chromium (or ERG_CHROMIUM).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '@erg/testkit';

const CHROMIUM = process.env.ERG_CHROMIUM || '/usr/bin/chromium';

test('bench/queue-view.js --quick: 600 runs in the table, only a screenful of them in the DOM, the last one reachable', async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium (scripts/test.sh does) or set ERG_CHROMIUM`);
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(repoRoot(), 'bench', 'queue-view.js'), '--quick', '--json'], {
    cwd: repoRoot(), timeout: 90_000,
  });
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!);
  expect(result).toMatchObject({ unfinished: 600, loads: 2, tableRows: 600, shown: '600 of 600 runs shown' });
  // The table renders only the rows in view: some, not all 600; at the top, the 36 running runs come first.
  expect(result.domRows).toBeGreaterThan(0);
  expect(result.domRows).toBeLessThan(600);
  expect(result.domStates).toEqual({ running: result.domRows });
  // After the jump to the end, the last run's row (aria-rowindex 601: the header is row 1) is in the DOM.
  expect(result.lastRowIndexAfterJump).toBe(601);
  expect(result.rowsAfterJump).toBeGreaterThan(0);
  expect(result.rowsAfterJump).toBeLessThan(600);
  // Every timing is a number the bench measured (their size is for docs/benchmarks.md).
  const timings = [result.seedSeconds, result.jumpToLastRowMs, ...['fetch', 'firstRender'].flatMap((k) => [result[k].medianMs, result[k].minMs, result[k].maxMs])];
  for (const t of timings) {
    expect(Number.isFinite(t)).toBe(true);
    expect(t).toBeGreaterThanOrEqual(0);
  }
}, 120_000);
