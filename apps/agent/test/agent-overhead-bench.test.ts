// bench/agent-overhead.js in its quick mode: the bundled agent runs at 10 Hz on the 8 fixture
// sensors, stops cleanly, and its spool holds samples from every one of them. The CPU and memory
// figures belong in docs/benchmarks.md, not in assertions. Needs the bundle (built if missing).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '@erg/testkit';

const SENSORS = ['module0.power', 'grace0.power', 'cpu0.power', 'sysio0.power', 'cpu0.energy', 'memory0.energy', 'cpu0.util', 'node0.mem_used'];

test('bench/agent-overhead.js --quick: the spool holds samples of all 8 sensors, as many as the agent counted', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(repoRoot(), 'bench', 'agent-overhead.js'), '--quick', '--json'], {
    cwd: repoRoot(), timeout: 60_000,
  });
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!);
  expect(result).toMatchObject({ seconds: 3, intervalMs: 100, exitCode: 0 });
  expect([...result.sensors].sort()).toEqual([...SENSORS].sort());
  expect(Object.keys(result.spool.bySensor).sort()).toEqual([...SENSORS].sort());
  for (const sensor of SENSORS) expect(result.spool.bySensor[sensor]).toBeGreaterThan(0);
  expect(result.spool.unevenColumns).toBe(0);
  // What the agent says it sampled and spooled is what the spool holds.
  expect(result.samples).toBeGreaterThan(0);
  expect(result.spool.samples).toBe(result.samples);
  expect(result.spool.batches).toBe(result.batches);
  expect(result.spoolBytes).toBeGreaterThan(0);
  // Every figure is a number the bench measured (their size is for docs/benchmarks.md).
  for (const key of ['steadyCpuPercentOfOneCore', 'wholeRunCpuPercentOfOneCore', 'startupCpuSeconds', 'maxRssMB', 'rssAtEndMB']) {
    expect(Number.isFinite(result[key])).toBe(true);
    expect(result[key]).toBeGreaterThanOrEqual(0);
  }
}, 90_000);
