// bench/phase-attribution.js in its quick mode: per sensor and run length, the worst phase's
// energy error against the synthetic truth. The figures themselves belong in docs/benchmarks.md;
// the bounds here are loose ones that a broken attribution would exceed: a proportional split is
// off by ~14 % on these traces, and a regression that ignores a declared sensor timing by ~5–13 %.
// Needs the build (packages/energy/dist).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '@erg/testkit';

interface Row {
  steps: number;
  sensor: string;
  timing: 'declared' | 'undeclared';
  method: string;
  regressionMaxPct: number;
  proportionalMedianPct: number;
  ci95MedianPct: number | null;
  stepMeanErrMaxPct: number;
}

test('bench/phase-attribution.js --quick: regression resolves sub-reading phases within a few per cent where a proportional split cannot', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(repoRoot(), 'bench', 'phase-attribution.js'), '--quick', '--json'], {
    cwd: repoRoot(), timeout: 60_000,
  });
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as { steps: number[]; seeds: number; rows: Row[] };
  expect(result.steps).toEqual([50, 200]);
  const sensors = ['counter', 'counter-20ms', 'power', 'power-50ms'];
  for (const steps of result.steps) {
    for (const sensor of sensors) {
      const declared = result.rows.find((r) => r.steps === steps && r.sensor === sensor && r.timing === 'declared')!;
      expect(declared).toBeDefined();
      expect(declared.method).toBe('regression');
      // The exactly-known sensors are within 1 %, the counter updated every 20 ms within 5 %.
      expect(declared.regressionMaxPct).toBeLessThan(sensor === 'counter-20ms' ? 5 : 2);
      expect(declared.proportionalMedianPct).toBeGreaterThan(5);
      expect(declared.ci95MedianPct).toBeGreaterThan(0);
      expect(declared.stepMeanErrMaxPct).toBeLessThan(3);
    }
  }
  // Not declaring a sensor's timing costs accuracy: the bench shows it rather than hides it.
  const undeclared = result.rows.filter((r) => r.timing === 'undeclared');
  expect(undeclared.map((r) => r.sensor).sort()).toEqual(['counter-20ms', 'counter-20ms', 'power-50ms', 'power-50ms']);
  for (const r of undeclared) expect(r.regressionMaxPct).toBeGreaterThan(2);
}, 90_000);
