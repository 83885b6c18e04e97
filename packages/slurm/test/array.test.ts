import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  arrayDirPath, arrayJobName, arraySubmissionFromJobName, expandArrayTasks, parseSacct, parseSqueue, renderArrayJob, runIdFromJobName, slurmJobKey,
  stageArchive, stageCommand, type StageEntry,
} from '../src';

const SUB = '0b7c4f2e-9a51-4d8e-b1f3-2c6d7e8f9a01';
const CAMPAIGN = '5e0d2a4c-1b3f-4c5d-8e9f-0a1b2c3d4e5f';

/** Unpacks a staging archive here exactly as the login node would: the same command, the archive on stdin. */
async function stageHere(base: string, entries: StageEntry[]): Promise<void> {
  execFileSync('sh', ['-c', stageCommand(base)], { input: await stageArchive(entries) });
}

describe('array job names', () => {
  test('an array is named after its submission, and is never mistaken for a run', () => {
    expect(arrayJobName(SUB)).toBe(`erg-a-${SUB}`);
    expect(arraySubmissionFromJobName(`erg-a-${SUB}`)).toBe(SUB);
    expect(runIdFromJobName(`erg-a-${SUB}`)).toBeNull();
    expect(runIdFromJobName(`erg-${SUB}`)).toBe(SUB);
    expect(arraySubmissionFromJobName(`erg-${SUB}`)).toBeNull();
  });
});

describe('task lists of pending arrays', () => {
  test.each([
    ['0-3', [0, 1, 2, 3]],
    ['[2-5%2]', [2, 3, 4, 5]],
    ['1,3,5-7', [1, 3, 5, 6, 7]],
    ['0-8:4', [0, 4, 8]],
    ['7', [7]],
  ])('%s', (spec, tasks) => expect(expandArrayTasks(spec)).toEqual(tasks));

  test('anything else is not a task list', () => {
    for (const bad of ['', 'N/A', '5-2', 'a-b', '1;2', '0-2000000']) expect(expandArrayTasks(bad)).toBeNull();
  });
});

describe('squeue and sacct rows of erg arrays', () => {
  // Captured from the local Slurm 22.05 cluster (an array of 6 tasks, throttled to 2 at a time).
  const squeue = [
    `1|1_[2-5%2]|1|2-5%2|PENDING|JobArrayTaskLimit|2026-12-01T12:07:01|N/A|N/A||erg-a-${SUB}`,
    `2|1_0|1|0|RUNNING|None|2026-12-01T12:07:01|2026-12-01T12:07:02|2026-12-01T12:08:02|vm|erg-a-${SUB}`,
    `3|1_1|1|1|RUNNING|None|2026-12-01T12:07:01|2026-12-01T12:07:02|2026-12-01T12:08:02|vm|erg-a-${SUB}`,
    '9|9_[0-5%2]|9|0-5%2|PENDING|JobHeldUser|2026-12-01T12:07:02|N/A|N/A||someone-elses-array',
  ].join('\n');

  test('the pending rest of an erg array becomes one job per task, keyed <array>_<task>', () => {
    const jobs = parseSqueue(squeue);
    const ours = jobs.filter((j) => j.arrayJobId === '1');
    expect(ours.map(slurmJobKey)).toEqual(['1_2', '1_3', '1_4', '1_5', '1_0', '1_1']);
    expect(ours.slice(0, 4).every((j) => j.runState === 'queued' && j.reason === 'JobArrayTaskLimit')).toBe(true);
    expect(ours.find((j) => slurmJobKey(j) === '1_0')).toMatchObject({ jobId: '2', runState: 'running', nodeList: 'vm' });
  });

  test('other arrays stay one row: nobody asks for their tasks', () => {
    const other = parseSqueue(squeue).filter((j) => j.arrayJobId === '9');
    expect(other).toHaveLength(1);
    expect(other[0]!.arrayTaskId).toBe('0-5%2');
  });

  test('sacct: the last task keeps the array id as its own; every task is found by its key', () => {
    const sacct = [
      `2|1_0|COMPLETED|0:0|None|2026-12-01T12:07:01|2026-12-01T12:07:02|2026-12-01T12:07:05|3|vm||erg-a-${SUB}`,
      `1|1_5|FAILED|3:0|NonZeroExitCode|2026-12-01T12:07:01|2026-12-01T12:07:09|2026-12-01T12:07:12|3|vm||erg-a-${SUB}`,
      `1|1_[6-7]|PENDING|0:0|None|2026-12-01T12:07:01|Unknown|Unknown|0|None assigned||erg-a-${SUB}`,
    ].join('\n');
    const jobs = parseSacct(sacct);
    expect(jobs.map(slurmJobKey)).toEqual(['1_0', '1_5', '1_6', '1_7']);
    expect(jobs[1]).toMatchObject({ jobId: '1', runState: 'failed', exitCode: 3 });
  });
});

describe('the array dispatcher', () => {
  let root: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'erg-array-'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  test("task i unpacks run directory i from the array's bundle and runs its own job.sh; Slurm's output files are linked there", async () => {
    const runDirs = ['r0', 'r1', 'r2'].map((r) => `${root}/${CAMPAIGN}/${r}`);
    const arrayDir = arrayDirPath(root, CAMPAIGN, SUB);
    const runFiles: StageEntry[] = runDirs.flatMap((d, i) => [
      { name: `${CAMPAIGN}/r${i}/job.sh`, content: `#!/bin/bash\necho "run ${i} in $PWD" > ran\n`, mode: 0o755 },
      { name: `${CAMPAIGN}/r${i}/.erg-run-token`, content: `token ${i}`, mode: 0o600 },
    ]);
    const array = await renderArrayJob({
      submissionId: SUB, campaignId: CAMPAIGN, workDir: root, arrayDir, runDirs, runFiles, resourceLines: ['#SBATCH --nodes=1', '#SBATCH --time=00:05:00'],
    });
    await stageHere(root, array.map((e) => ({ ...e, name: `${CAMPAIGN}/.arrays/${SUB}/${e.name}` })));

    const script = fs.readFileSync(`${arrayDir}/array.sh`, 'utf8');
    expect(script).toContain(`#SBATCH --job-name=erg-a-${SUB}`);
    expect(script).toContain('#SBATCH --array=0-2');
    expect(script).toContain(`#SBATCH --output=${arrayDir}/%a.out`);
    expect(script).toContain('#SBATCH --time=00:05:00');
    // Three files for the whole array, and no run directory yet: each task makes its own.
    expect(fs.readdirSync(arrayDir).sort()).toEqual(['array.sh', 'runs.tar.gz', 'tasks']);
    expect(fs.readdirSync(`${root}/${CAMPAIGN}`)).toEqual(['.arrays']);

    execFileSync('bash', ['array.sh'], { cwd: arrayDir, env: { ...process.env, SLURM_ARRAY_TASK_ID: '1' } });
    expect(fs.readFileSync(`${runDirs[1]}/ran`, 'utf8').trim()).toBe(`run 1 in ${runDirs[1]}`);
    expect(fs.statSync(`${runDirs[1]}/.erg-run-token`).mode & 0o777).toBe(0o600);
    expect(fs.readlinkSync(`${runDirs[1]}/slurm.out`)).toBe(`${arrayDir}/1.out`);
    expect(fs.readlinkSync(`${runDirs[1]}/slurm.err`)).toBe(`${arrayDir}/1.err`);
    // Task 1 unpacked its own directory only.
    expect(fs.existsSync(runDirs[0]!)).toBe(false);
    expect(fs.existsSync(runDirs[2]!)).toBe(false);
    // A task index outside the list runs nothing and says why.
    expect(() => execFileSync('bash', ['array.sh'], { cwd: arrayDir, env: { ...process.env, SLURM_ARRAY_TASK_ID: '3' }, stdio: 'pipe' })).toThrow(/no run directory for array task 3/);
  });

  test('refuses run directories a directive or the dispatcher could misread', async () => {
    const arrayDir = arrayDirPath(root, CAMPAIGN, SUB);
    const base = { submissionId: SUB, campaignId: CAMPAIGN, workDir: root, arrayDir, runFiles: [], resourceLines: [] };
    await expect(renderArrayJob({ ...base, runDirs: [`${root}/a b`] })).rejects.toThrow(/runDir/);
    await expect(renderArrayJob({ ...base, runDirs: ['/elsewhere/r'] })).rejects.toThrow(/not under the work dir/);
    await expect(renderArrayJob({ ...base, runDirs: [] })).rejects.toThrow(/empty/);
  });
});

describe('staging archives', () => {
  let root: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'erg-stage-'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  test('writes every file with its mode (less the run umask, file-modes.test.ts), replaces what is there, and makes the folders', async () => {
    fs.mkdirSync(`${root}/c/r`, { recursive: true });
    fs.writeFileSync(`${root}/c/r/job.sh`, 'old');
    await stageHere(root, [
      { name: 'c/r/job.sh', content: 'new', mode: 0o755 },
      { name: 'c/r/.erg-token', content: 'secret', mode: 0o600 },
      { name: 'c/q/run.sh', content: Buffer.from('x'), mode: 0o644 },
      { name: 'c/.arrays/s/0.out', linkTo: `${root}/c/r/slurm.out` },
    ]);
    expect(fs.readFileSync(`${root}/c/r/job.sh`, 'utf8')).toBe('new');
    expect(fs.statSync(`${root}/c/r/job.sh`).mode & 0o777).toBe(0o700);
    expect(fs.statSync(`${root}/c/r/.erg-token`).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(`${root}/c/q/run.sh`, 'utf8')).toBe('x');
    expect(fs.readlinkSync(`${root}/c/.arrays/s/0.out`)).toBe(`${root}/c/r/slurm.out`);
  });

  test('takes no name that leaves the base folder or means something to a shell', async () => {
    for (const name of ['../x', '/etc/passwd', 'a/./b', 'a b', 'a/$(touch x)', 'a//b']) {
      await expect(stageArchive([{ name, content: '', mode: 0o644 }])).rejects.toThrow(/relative path of plain segments/);
    }
    expect(() => stageCommand('/tmp/a b')).toThrow(/absolute path/);
    expect(() => stageCommand('relative')).toThrow(/absolute path/);
  });
});
