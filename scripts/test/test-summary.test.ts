// scripts/test-summary.js: the last lines of `npm test` — the counts of every jest run, and each
// failed test named with the first lines of why, so that a log seen only by its tail (CI's) says
// what failed. Against artifacts written here in jest's --json shape.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const { summarize, digest } = require('../test-summary.js') as {
  summarize: (artifacts: string[], root?: string) => { passed: number; failed: number; failures: { where: string; title: string; message: string }[] };
  digest: (s: { passed: number; failed: number; failures: { where: string; title: string; message: string }[] }) => string;
};

describe('scripts/test-summary.js', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'erg-test-summary-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function artifact(name: string, content: unknown): string {
    writeFileSync(path.join(dir, name), typeof content === 'string' ? content : JSON.stringify(content));
    return name;
  }

  test('adds the runs up and names each failed test with the first lines of its message, without colours or stack frames', () => {
    const green = artifact('unit.json', { numPassedTests: 10, numFailedTests: 0, numRuntimeErrorTestSuites: 0, testResults: [] });
    const red = artifact('e2e.json', {
      numPassedTests: 3, numFailedTests: 1, numRuntimeErrorTestSuites: 1,
      testResults: [
        {
          name: path.join(dir, 'apps/x/test/multi.e2e.test.ts'), status: 'failed',
          assertionResults: [
            { status: 'passed', ancestorTitles: ['multi'], title: 'fine', failureMessages: [] },
            {
              status: 'failed', ancestorTitles: ['multi-node runs'], title: 'the busy nodes drawing more',
              failureMessages: ['Error: \u001b[2mexpect(\u001b[22mreceived).toBeGreaterThan(expected)\n\nExpected: > 170\nReceived:   166.55\n    at Object.<anonymous> (multi.e2e.test.ts:68:27)'],
            },
          ],
        },
        { name: path.join(dir, 'apps/x/test/broken.e2e.test.ts'), status: 'failed', message: 'Cannot find module "x"', assertionResults: [] },
      ],
    });
    const s = summarize([green, red, 'missing.json', artifact('other.json', { healthz: [] })], dir);
    expect(s.passed).toBe(13);
    // 1 failed test + 1 file that did not run + 2 runs without results.
    expect(s.failed).toBe(4);
    const text = digest(s);
    expect(text).toContain('- apps/x/test/multi.e2e.test.ts: multi-node runs › the busy nodes drawing more\n    Error: expect(received).toBeGreaterThan(expected)\n    Expected: > 170\n    Received:   166.55\n');
    expect(text).not.toContain('at Object');
    expect(text).not.toContain('\u001b');
    expect(text).toContain('- apps/x/test/broken.e2e.test.ts: the file failed to run\n    Cannot find module "x"');
    expect(text).toContain('- missing.json: no readable test results');
    expect(text).toContain('- other.json: no readable test results');
    expect(text.trimEnd().split('\n').at(-1)).toBe('tests: 13 passed, 4 failed');
  });

  test('with nothing failed, only the counts', () => {
    const green = artifact('green.json', { numPassedTests: 5, numFailedTests: 0, numRuntimeErrorTestSuites: 0, testResults: [] });
    expect(digest(summarize([green], dir)).trim()).toBe('tests: 5 passed, 0 failed');
  });
});
