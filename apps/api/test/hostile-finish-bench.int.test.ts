// bench/hostile-finish.js in its quick mode: an imported run whose workload marked 2,000 distinct
// phase names in 20,000 marks is finished, its energy computed by the scheduler, its phases,
// energy and results read, a late batch recomputed, and two bursts of batches of many small marks
// — the API and the scheduler as processes of their own. What erg kept is asserted; the /healthz figures it prints belong in
// docs/benchmarks.md, not in assertions. Needs the build (dist).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { DEFAULT_MAX_PHASE_NAMES } from '@erg/spec';
import { repoRoot } from '@erg/testkit';

test('bench/hostile-finish.js --quick: the names past the cap are not kept, finish answers 202, the scheduler computes the energy', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(repoRoot(), 'bench', 'hostile-finish.js'), '--quick', '--json'], {
    cwd: repoRoot(), timeout: 150_000,
  });
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!);
  expect(result).toMatchObject({ names: 2000, marksSent: 20_000, batches: 2, finishStatus: 202, phaseNames: DEFAULT_MAX_PHASE_NAMES });
  expect(result.capWarning).toContain(`more than ${DEFAULT_MAX_PHASE_NAMES} distinct phase names (ERG_MAX_PHASE_NAMES)`);
  // Every mark of the names kept: all but those of the 2,000 − 256 names past the cap (one pair each).
  expect(result.marksStored).toBe(20_000 - 2 * (2000 - DEFAULT_MAX_PHASE_NAMES));
  const steps = new Map<string, { ms: number; energyJ?: number; apiHealthz: { worstMs: number } | null }>(result.steps.map((s: { step: string }) => [s.step, s]));
  expect([...steps.keys()]).toEqual([
    'ingest (marks and samples)', 'POST /finish', 'finish → energy computed', 'GET /runs/{id}/phases', 'GET /runs/{id}/energy', 'GET /campaigns/{id}/results', 'late batch → energy recomputed',
    'burst: 2 × 5000 marks at once', 'burst: 2 × 2000 marks at once',
  ]);
  // Batches of many marks in few bytes (each answered 200, or the bench fails).
  expect(result.steps.filter((s: { step: string }) => s.step.startsWith('burst')).map((s: { batchBytes: number }) => s.batchBytes < 1024 * 1024)).toEqual([true, true]);
  // 300 W over the 60 s window; the late batch adds a GPU's single sample (its energy is the run's, recomputed).
  expect(steps.get('finish → energy computed')!.energyJ).toBeCloseTo(18_000, 0);
  expect(steps.get('late batch → energy recomputed')!.energyJ).toBeGreaterThan(0);
  for (const s of steps.values()) {
    expect(Number.isFinite(s.ms)).toBe(true);
    expect(Number.isFinite(s.apiHealthz!.worstMs)).toBe(true);
  }
}, 180_000);
