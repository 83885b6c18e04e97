// bench/log-tails.js in its quick mode (2 concurrent 1 MiB tails on the local cluster, the API as
// its own process): the requests stream through and the figures come out. Timings and memory
// belong in docs/benchmarks.md, not in assertions. Needs the build (apps/api/dist).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '@erg/testkit';

test('bench/log-tails.js --quick streams every tail and reports memory and /healthz figures', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(repoRoot(), 'bench', 'log-tails.js'), '--quick', '--json'], { cwd: repoRoot(), timeout: 150_000 });
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!);
  expect(result).toMatchObject({ requests: 2, tailMiB: 1 });
  // The bench throws unless every request answered 200; these are the figures it reports.
  for (const field of ['ms', 'rssBeforeMb', 'peakMb', 'peakRatio', 'healthzMedianMs', 'healthzWorstMs']) expect(typeof result[field]).toBe('number');
  expect(result.healthzSamples).toBeGreaterThan(0);
}, 180_000);
