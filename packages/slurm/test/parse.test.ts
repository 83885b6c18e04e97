import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  parseExitCode,
  parseSacct,
  parseSbatchParsable,
  parseSlurmTimestamp,
  parseSqueue,
  classifySbatchFailure,
  SlurmParseError,
  type SlurmJob,
} from '../src';

// Real outputs of the local Slurm 22.05 cluster, captured with test/fixtures/capture.sh. sacct-mixed.txt
// was captured before ConsumedEnergyRaw joined the format; its empty column was inserted by hand,
// as the same sacct prints it on that cluster (no acct_gather_energy plugin: `sacct -X -P -o
// JobIDRaw,ConsumedEnergyRaw` gives `1|`).
const fixture = (name: string) => readFileSync(path.join(__dirname, 'fixtures', name), 'utf8');
const byName = (jobs: SlurmJob[], name: string) => jobs.filter((j) => j.name === name);
const utc = (s: string) => new Date(`${s}Z`);

describe('parseSbatchParsable', () => {
  it.each([
    ['123\n', '123', null],
    ['4567;gh200-cluster\n', '4567', 'gh200-cluster'],
    ['  89  ', '89', null],
  ])('reads %j', (out, jobId, cluster) => {
    expect(parseSbatchParsable(out)).toEqual({ jobId, cluster });
  });

  it.each(['', 'Submitted batch job 12', '12\n13', 'abc', '12;'])('refuses %j', (out) => {
    expect(() => parseSbatchParsable(out)).toThrow(SlurmParseError);
  });
});

describe('parseSqueue (real output)', () => {
  const jobs = parseSqueue(fixture('squeue-mixed.txt'));

  it('reads every line', () => {
    expect(jobs).toHaveLength(fixture('squeue-mixed.txt').trim().split('\n').length);
  });

  it('reads a running job', () => {
    const [job] = byName(jobs, 'erg-fixture-cancel-running').filter((j) => j.state === 'RUNNING');
    expect(job).toEqual({
      jobId: '33',
      displayId: '33',
      arrayJobId: null,
      arrayTaskId: null,
      name: 'erg-fixture-cancel-running',
      runId: 'fixture-cancel-running',
      state: 'RUNNING',
      runState: 'running',
      reason: null,
      exitCode: null,
      signal: null,
      submitTime: utc('2026-11-30T02:55:13'),
      startTime: utc('2026-11-30T02:55:13'),
      endTime: null, // squeue's %e of a running job is its time limit, not a fact
      elapsedS: null,
      nodeList: 'vm',
    });
  });

  it('reads pending jobs with their reason and without estimated times', () => {
    const held = byName(jobs, 'erg-fixture-held').find((j) => j.state === 'PENDING');
    expect(held).toMatchObject({ runState: 'queued', reason: 'JobHeldUser', startTime: null, endTime: null, nodeList: null });
    const begin = byName(jobs, 'erg-fixture-begin').find((j) => j.state === 'PENDING');
    expect(begin).toMatchObject({ runState: 'queued', reason: 'BeginTime', startTime: null, endTime: null });
  });

  it('reads ended jobs still in the controller (--states=all), a pending-cancelled job never started', () => {
    expect(byName(jobs, 'erg-fixture-fail')[0]).toMatchObject({ runState: 'failed', reason: 'NonZeroExitCode', exitCode: null });
    expect(byName(jobs, 'erg-fixture-timeout').find((j) => j.state === 'TIMEOUT')).toMatchObject({ state: 'TIMEOUT', runState: 'timeout', reason: 'TimeLimit' });
    const cancelledHeld = byName(jobs, 'erg-fixture-held').find((j) => j.state === 'CANCELLED');
    expect(cancelledHeld).toMatchObject({ runState: 'cancelled', startTime: null, endTime: utc('2026-11-30T02:53:37') });
  });

  it('reads array tasks with their own job id', () => {
    const tasks = byName(jobs, 'erg-fixture-array').filter((j) => j.state === 'RUNNING');
    expect(tasks.map((t) => [t.jobId, t.displayId, t.arrayJobId, t.arrayTaskId])).toEqual([
      ['38', '36_1', '36', '1'],
      ['39', '36_2', '36', '2'],
      ['36', '36_3', '36', '3'],
    ]);
  });

  it('keeps a job name containing the separator whole (the name is the last field)', () => {
    expect(byName(jobs, 'erg-fixture-name|with|pipes').length).toBeGreaterThan(0);
  });

  it('returns nothing for empty output and refuses a line of another format', () => {
    expect(parseSqueue('')).toEqual([]);
    expect(parseSqueue('\n')).toEqual([]);
    expect(() => parseSqueue('JOBID PARTITION NAME\n')).toThrow(SlurmParseError);
    expect(() => parseSqueue('x|1|1|N/A|RUNNING|None|2026-11-30T02:55:13|N/A|N/A||erg-a\n')).toThrow(SlurmParseError);
  });
});

describe('parseSacct (real output)', () => {
  const jobs = parseSacct(fixture('sacct-mixed.txt'));
  const one = (name: string) => {
    const [job] = byName(jobs, name);
    if (!job) throw new Error(`no ${name}`);
    return job;
  };

  it('reads a completed job with exit code, times and elapsed seconds', () => {
    expect(one('erg-fixture-ok')).toEqual({
      jobId: '30',
      displayId: '30',
      arrayJobId: null,
      arrayTaskId: null,
      name: 'erg-fixture-ok',
      runId: 'fixture-ok',
      state: 'COMPLETED',
      runState: 'completed',
      reason: null,
      exitCode: 0,
      signal: 0,
      submitTime: utc('2026-11-30T02:55:13'),
      startTime: utc('2026-11-30T02:55:13'),
      endTime: utc('2026-11-30T02:55:13'),
      elapsedS: 0,
      nodeList: 'vm',
      // The local cluster has no acct_gather_energy plugin: sacct leaves ConsumedEnergyRaw empty.
      consumedEnergyJ: null,
    });
  });

  it('reads Slurm\'s own energy figure where a plugin measured one, and none — never 0 J — where it did not', () => {
    const line = (energy: string) => `52|52|COMPLETED|0:0|None|2026-11-30T02:55:13|2026-11-30T02:55:13|2026-11-30T02:56:13|60|gh-[001-002]|${energy}|erg-e\n`;
    expect(parseSacct(line('48213'))[0]!.consumedEnergyJ).toBe(48213);
    // acct_gather_energy/gpu records nothing for NVIDIA GPUs: sacct prints 0.
    expect(parseSacct(line('0'))[0]!.consumedEnergyJ).toBeNull();
    expect(parseSacct(line(''))[0]!.consumedEnergyJ).toBeNull();
    expect(parseSacct(line('n/a'))[0]!.consumedEnergyJ).toBeNull();
  });

  it('maps failed (exit 3), timeout and "CANCELLED by 0"', () => {
    expect(one('erg-fixture-fail')).toMatchObject({ state: 'FAILED', runState: 'failed', exitCode: 3, signal: 0 });
    expect(one('erg-fixture-timeout')).toMatchObject({ state: 'TIMEOUT', runState: 'timeout', elapsedS: 87 });
    expect(one('erg-fixture-cancel-running')).toMatchObject({ state: 'CANCELLED', runState: 'cancelled' });
  });

  it('reads a job cancelled while held: found, never started, no nodes', () => {
    expect(one('erg-fixture-held')).toMatchObject({
      runState: 'cancelled',
      reason: 'JobHeldUser',
      startTime: null,
      endTime: utc('2026-11-30T02:55:14'),
      nodeList: null,
    });
  });

  it('reads array tasks and names with the separator', () => {
    expect(byName(jobs, 'erg-fixture-array').map((j) => j.displayId).sort()).toEqual(['36_1', '36_2', '36_3']);
    expect(one('erg-fixture-name|with|pipes').runState).toBe('completed');
  });

  it('gives no exit code to jobs that have not ended', () => {
    const [running] = parseSacct('50|50|RUNNING|0:0|None|2026-11-30T02:55:13|2026-11-30T02:55:13|Unknown|12|vm||erg-x\n');
    expect(running).toMatchObject({ runState: 'running', exitCode: null, endTime: null, elapsedS: 12, runId: 'x' });
    const [pending] = parseSacct('51|51|PENDING|0:0|Priority|2026-11-30T02:55:13|Unknown|Unknown|0|None assigned||erg-y\n');
    expect(pending).toMatchObject({ runState: 'queued', reason: 'Priority', startTime: null, nodeList: null });
  });
});

describe('field parsers', () => {
  it('reads Slurm timestamps as UTC and its words for "none"', () => {
    expect(parseSlurmTimestamp('2026-11-30T03:00:00')).toEqual(new Date(Date.UTC(2026, 10, 30, 3, 0, 0)));
    for (const none of ['Unknown', 'None', 'N/A', '']) expect(parseSlurmTimestamp(none)).toBeNull();
    expect(() => parseSlurmTimestamp('30/11/2026')).toThrow(SlurmParseError);
  });

  it('reads ExitCode code:signal', () => {
    expect(parseExitCode('0:0')).toEqual({ exitCode: 0, signal: 0 });
    expect(parseExitCode('3:0')).toEqual({ exitCode: 3, signal: 0 });
    expect(parseExitCode('0:15')).toEqual({ exitCode: 0, signal: 15 });
    expect(() => parseExitCode('3')).toThrow(SlurmParseError);
  });
});

describe('classifySbatchFailure', () => {
  it.each([
    ['sbatch: error: Batch job submission failed: Socket timed out on send/recv operation', 'in-doubt'],
    ['sbatch: error: Batch job submission failed: Zero Bytes were transmitted or received', 'in-doubt'],
    ['sbatch: error: Batch job submission failed: Unable to contact slurm controller (receive failure)', 'in-doubt'],
    // a retry that timed out in the end: the timeout decides
    ['sbatch: error: Slurm temporarily unable to accept job, sleeping and retrying sbatch: error: Batch job submission failed: Socket timed out on send/recv operation', 'in-doubt'],
    ['sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)', 'unsent'],
    ['sbatch: error: Batch job submission failed: Rate limit exceeded, please retry momentarily', 'unsent'],
    ['sbatch: error: Slurm temporarily unable to accept job, sleeping and retrying sbatch: error: Batch job submission failed: Resource temporarily unavailable', 'unsent'],
    ['sbatch: error: Batch job submission failed: Invalid partition name specified', 'refused'],
    // The policy sentence alone also covers size and time limits, which waiting does not cure.
    ['sbatch: error: Batch job submission failed: Job violates accounting/QOS policy (job submit limit, user\'s size and/or time limits)', 'refused'],
    ['sbatch: error: QOSMaxSubmitJobPerUserLimit sbatch: error: Batch job submission failed: Job violates accounting/QOS policy (job submit limit, user\'s size and/or time limits)', 'limited'],
    ['sbatch: error: AssocMaxSubmitJobLimit sbatch: error: Batch job submission failed: Job violates accounting/QOS policy (job submit limit, user\'s size and/or time limits)', 'limited'],
    ['sbatch: error: Slurm job queue full, sleeping and retrying sbatch: error: Batch job submission failed: Unable to create job record, try again', 'limited'],
    ['sbatch: error: Batch job submission failed: Invalid job array specification', 'limited'],
    ['sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified', 'refused'],
  ])('%s → %s', (text, kind) => {
    expect(classifySbatchFailure(text)).toBe(kind);
  });
});
