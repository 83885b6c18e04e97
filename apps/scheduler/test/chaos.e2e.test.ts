// bench/chaos.js --quick (docs/reliability.md) on the local cluster: a disposable erg of 2 API and
// 3 scheduler processes runs 24 + 4 short runs once without faults, then again while a scheduler
// is SIGKILLed mid-sbatch and at another phase of its cycle, Redis is wiped, an API process is
// SIGKILLed and Postgres restarts. Whatever happens, no run is lost or submitted twice, Slurm holds
// no job erg does not know, and every completed run has its energy. The time against the
// fault-free campaign belongs in docs/reliability.md, not in assertions.
// Needs the build (apps/api/dist, apps/scheduler/dist) and root (the suite signals processes).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '@erg/testkit';

interface ChaosResult {
  faultKinds: string[];
  baseline: { ledger: Ledger; timeToFinishS: number | null };
  chaos: { ledger: Ledger; timeToFinishS: number | null; faults: { kind: string; atMs: number | null; detail: string | null }[] };
}
interface Ledger {
  runs: number;
  lost: number;
  duplicated: number;
  orphaned: number;
  completed: number;
  withEnergy: number;
  endedOtherwise: number;
  details: Record<string, unknown[]>;
}

/** Runs the suite; its exit status says whether a target was missed, so the JSON is read either way. */
function runChaos(args: string[]): Promise<ChaosResult> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [path.join(repoRoot(), 'bench', 'chaos.js'), ...args], { cwd: repoRoot(), timeout: 280_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const start = stdout.indexOf('{');
      if (start < 0) {
        reject(new Error(`bench/chaos.js printed no result (${err?.message ?? 'no error'}):\n${stderr.slice(-8000)}`));
        return;
      }
      resolve(JSON.parse(stdout.slice(start)) as ChaosResult);
    });
  });
}

test('under scheduler kills mid-sbatch and at another phase, a Redis wipe, an API kill and a Postgres restart, every run ends once, with its energy, and Slurm holds no job erg does not know', async () => {
  const result = await runChaos(['--quick', '--json', '--seed', '20261201']);
  const { baseline, chaos } = result;

  // The fault-free campaign is the control: if it is not clean, the suite measures nothing.
  expect(baseline.ledger).toMatchObject({ lost: 0, duplicated: 0, orphaned: 0, endedOtherwise: 0 });
  expect(baseline.ledger.completed).toBe(baseline.ledger.runs);

  // Every planned fault found its moment (a fault that never happened proves nothing).
  expect(chaos.faults.map((f) => [f.kind, f.atMs === null ? f.detail : 'injected'])).toEqual(result.faultKinds.map((k) => [expect.any(String), 'injected']));
  expect(chaos.faults.map((f) => f.kind).sort()).toEqual([...result.faultKinds].sort());

  const { ledger } = chaos;
  // The details name each anomaly's run, jobs and likely fault, so a failure explains itself.
  expect({ lost: ledger.lost, duplicated: ledger.duplicated, orphaned: ledger.orphaned, details: ledger.details }).toMatchObject({ lost: 0, duplicated: 0, orphaned: 0 });
  expect(chaos.timeToFinishS).not.toBeNull(); // every run reached an end state before the deadline
  expect(ledger.completed + ledger.endedOtherwise).toBe(ledger.runs);
  expect(ledger.withEnergy).toBe(ledger.completed);
}, 300_000);
