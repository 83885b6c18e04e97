// bench/submit.js in a quick mode (10 runs; 5 plain sbatch; 2 fresh connections) on the local
// cluster: every run is queued, none refused, and one tracking poll costs slurmctld two RPCs (the
// fewest over three polls: sdiag also counts job steps landing in the window) whatever the number
// of runs. Its rates belong in docs/benchmarks.md, not in assertions.
// Needs the build (apps/scheduler/dist).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '@erg/testkit';

test('bench/submit.js --runs 10 queues every run and polls with one squeue + one sacct', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(repoRoot(), 'bench', 'submit.js'), '--runs', '10', '--loop', '5', '--fresh', '2'], {
    cwd: repoRoot(),
    timeout: 240_000,
  });
  const result = JSON.parse(stdout.slice(stdout.indexOf('{'), stdout.lastIndexOf('}') + 1));
  expect(result).toMatchObject({ runs: 10, failedAtSubmission: 0, trackedRunsAtPoll: 10, slurmctldRpcsPerPoll: 2 });
  expect(result.controllerQuietBeforePoll).toBe(true);
  expect(result.plainSbatchLoopOnCluster.jobs).toBe(5);
  expect(result.ergLoopOneChannel.unfenced.jobs).toBe(5);
  expect(result.ergLoopOneChannel.fenced.jobs).toBe(5);
  expect(result.newSshConnectionPerSbatch.jobs).toBe(2);
}, 300_000);
