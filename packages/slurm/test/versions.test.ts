/**
 * erg's parsers over the output of every Slurm version in test/fixtures/versions (README.md there):
 * folders captured from real clusters by capture.sh (they hold submitted.txt, the job ids sbatch
 * returned, which every assertion here is checked against) and folders built from Slurm's sources
 * for releases we have no cluster of. Unit test: nothing is run on a cluster.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  classifySbatchFailure,
  parseProbe,
  parseSacct,
  parseSbatchParsable,
  parseSqueue,
  parseSubmitMany,
  probeCommand,
  SACCT_FIELDS,
  SQUEUE_FIELDS,
  type SlurmJob,
} from '../src';

const root = path.join(__dirname, 'fixtures', 'versions');
const versions = fs.readdirSync(root).filter((d) => /^\d+\.\d+$/.test(d)).sort();
const has = (v: string, file: string) => fs.existsSync(path.join(root, v, file));
const read = (v: string, file: string) => fs.readFileSync(path.join(root, v, file), 'utf8');
const captured = versions.filter((v) => has(v, 'submitted.txt'));
const documented = versions.filter((v) => !captured.includes(v));
/** `23.02` → 2302, for "from this release on". */
const rank = (v: string) => Number(v.replace('.', ''));

/** Lines of erg's own arrays (`erg-a-…`, the name is the last field), kept out of the plain-job tests. */
const isArrayLine = (line: string) => line.includes('|erg-a-');
const plain = (text: string) => text.split('\n').filter((l) => l.trim() !== '' && !isArrayLine(l)).join('\n');
const onlyNamed = (text: string, name: string) => text.split('\n').filter((l) => l.endsWith(`|${name}`)).join('\n');

interface Submitted {
  id: string;
  name: string;
}
function submitted(v: string): Record<string, Submitted> {
  const out: Record<string, Submitted> = {};
  for (const line of read(v, 'submitted.txt').split('\n')) {
    if (line === '') continue;
    const [role, id, ...name] = line.split('\t');
    out[role!] = { id: id!, name: name.join('\t') };
  }
  return out;
}

function configValue(config: string, key: string): string | null {
  const m = new RegExp(`^${key}\\s*=\\s*(.*)$`, 'm').exec(config);
  return m?.[1]?.trim() ?? null;
}
/** No energy plugin: 22.05 says acct_gather_energy/none, 23.11 on say (null). */
const noEnergyPlugin = (config: string) => ['acct_gather_energy/none', '(null)', null].includes(configValue(config, 'AcctGatherEnergyType'));

/** erg's probe command run here, as on a login node, with sinfo and scontrol printing a fixture's text. */
function probeWith(sinfoVersion: string, config: string) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'erg-versions-'));
  try {
    fs.writeFileSync(path.join(dir, 'sinfo.txt'), sinfoVersion);
    fs.writeFileSync(path.join(dir, 'config.txt'), config);
    fs.writeFileSync(path.join(dir, 'sinfo'), `#!/bin/sh\ncat '${dir}/sinfo.txt'\n`, { mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'scontrol'), `#!/bin/sh\n[ "$1 $2" = "show config" ] && cat '${dir}/config.txt'\n`, { mode: 0o755 });
    const helper = path.join(dir, 'no-helper');
    const out = execFileSync('sh', ['-c', probeCommand(helper)], { env: { PATH: `${dir}:/usr/bin:/bin` }, encoding: 'utf8' });
    return parseProbe(out, helper);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function one(jobs: SlurmJob[], name: string, what: string): SlurmJob {
  const found = jobs.filter((j) => j.name === name);
  if (found.length !== 1) throw new Error(`${what}: expected one job named ${name}, found ${found.length}`);
  return found[0]!;
}

test('the fixtures hold the captured 22.05 and the documented 23.02, 23.11, 24.05 and 25.05', () => {
  expect(captured).toContain('22.05');
  expect(documented).toEqual(expect.arrayContaining(['23.02', '23.11', '24.05', '25.05']));
});

describe.each(captured)('Slurm %s (captured)', (v) => {
  const jobs = submitted(v);
  const config = read(v, 'scontrol-show-config.txt');
  const energyNone = noEnergyPlugin(config);
  const squeueLive = parseSqueue(plain(read(v, 'squeue-live.txt')));
  const squeueFinal = parseSqueue(plain(read(v, 'squeue-final.txt')));
  const sacct = parseSacct(plain(read(v, 'sacct.txt')));
  const id = (role: string) => jobs[role]!.id;
  const name = (role: string) => jobs[role]!.name;

  test('was captured with the fields erg asks for today', () => {
    const [squeue, sacctLine] = read(v, 'commands.txt').split('\n');
    expect(/--format='([^']*)'/.exec(squeue!)?.[1]).toBe(SQUEUE_FIELDS.join('|'));
    expect(/--format='([^']*)'/.exec(sacctLine!)?.[1]).toBe(SACCT_FIELDS.join(','));
    expect(sacctLine).toMatch(/ sacct -X -n -P /);
  });

  test('sinfo --version and scontrol show config, through erg\'s probe', () => {
    const probe = probeWith(read(v, 'sinfo-version.txt'), config);
    expect(probe.slurmVersion).toMatch(new RegExp(`^slurm ${v.replace('.', '\\.')}\\.\\d+$`));
    expect(probe.maxArraySize).toBe(Number(configValue(config, 'MaxArraySize')));
    expect(probe.maxJobCount).toBe(Number(configValue(config, 'MaxJobCount')));
    expect(probe.maxArraySize).toBeGreaterThan(0);
  });

  test('sbatch --parsable and erg\'s submit loop give the job ids', () => {
    expect(parseSbatchParsable(read(v, 'sbatch-parsable.txt'))).toEqual({ jobId: expect.stringMatching(/^\d+$/), cluster: null });
    const results = parseSubmitMany(read(v, 'submit-many.txt'));
    expect(results).toEqual(Object.keys(jobs).map((role) => ({ path: `/WORK/${role}.sh`, status: 'ok', jobId: id(role), cluster: null })));
  });

  test('sbatch refusals are refused (or, for site limits, limited), not retried', () => {
    const byPath = Object.fromEntries(parseSubmitMany(read(v, 'submit-errors.txt')).map((r) => [r.path, r]));
    expect(byPath['/WORK/bad-partition.sh']).toMatchObject({ status: 'err', error: expect.stringContaining('Invalid partition name specified') });
    // An array larger than the site allows: no job, and erg asks again with fewer at a time (sbatch-failure.ts SITE_LIMIT).
    expect(byPath['/WORK/bad-array.sh']).toMatchObject({ status: 'limited', error: expect.stringContaining('Invalid job array specification') });
    expect(byPath['/WORK/missing.sh']).toMatchObject({ status: 'err', error: expect.stringContaining('Unable to open file /WORK/missing.sh') });
    // Only an enforcing cluster refuses an unknown account.
    if (/associations/.test(configValue(config, 'AccountingStorageEnforce') ?? '')) {
      expect(byPath['/WORK/bad-account.sh']).toMatchObject({ status: 'err', error: expect.stringContaining('Invalid account or account/partition combination specified') });
    } else {
      expect(byPath['/WORK/bad-account.sh']).toMatchObject({ status: 'ok' });
    }
    for (const r of Object.values(byPath)) if (r.status === 'err') expect(classifySbatchFailure(r.error)).toBe('refused');
  });

  test('squeue while running: running, held and ended jobs', () => {
    expect(one(squeueLive, name('ok'), 'squeue-live')).toMatchObject({ jobId: id('ok'), displayId: id('ok'), state: 'COMPLETED', runState: 'completed', runId: 'vfix-ok' });
    expect(one(squeueLive, name('fail'), 'squeue-live')).toMatchObject({ jobId: id('fail'), state: 'FAILED', runState: 'failed', reason: 'NonZeroExitCode', exitCode: null });
    const running = one(squeueLive, name('cancel-running'), 'squeue-live');
    expect(running).toMatchObject({ jobId: id('cancel-running'), state: 'RUNNING', runState: 'running', reason: null, endTime: null, arrayJobId: null, arrayTaskId: null });
    expect(running.startTime).toBeInstanceOf(Date);
    expect(running.nodeList).not.toBeNull();
    expect(one(squeueLive, name('cancel-pending'), 'squeue-live')).toMatchObject({
      jobId: id('cancel-pending'), state: 'PENDING', runState: 'queued', reason: 'JobHeldUser', startTime: null, endTime: null, nodeList: null,
    });
  });

  test('squeue once ended: cancelled while running or held, killed by a signal, a long name with "|"', () => {
    const cancelled = one(squeueFinal, name('cancel-running'), 'squeue-final');
    expect(cancelled).toMatchObject({ jobId: id('cancel-running'), state: 'CANCELLED', runState: 'cancelled' });
    expect(cancelled.startTime).toBeInstanceOf(Date);
    expect(cancelled.endTime).toBeInstanceOf(Date);
    expect(one(squeueFinal, name('cancel-pending'), 'squeue-final')).toMatchObject({ state: 'CANCELLED', runState: 'cancelled', reason: 'JobHeldUser', startTime: null, nodeList: null });
    // 22.05: JobLaunchFailure; 23.02 on: RaisedSignal:9(Killed) (README, c1185c6d20).
    const signalled = one(squeueFinal, name('signal'), 'squeue-final');
    expect(signalled).toMatchObject({ jobId: id('signal'), state: 'FAILED', runState: 'failed', reason: rank(v) < 2302 ? 'JobLaunchFailure' : 'RaisedSignal:9(Killed)' });
    expect(one(squeueFinal, name('long'), 'squeue-final')).toMatchObject({ jobId: id('long'), runState: 'completed', runId: name('long').slice('erg-'.length) });
    expect(name('long')).toContain('|');
  });

  test('sacct: exit codes, "CANCELLED by <uid>", never-started jobs, energy', () => {
    expect(one(sacct, name('ok'), 'sacct')).toMatchObject({
      jobId: id('ok'), displayId: id('ok'), arrayJobId: null, arrayTaskId: null, runId: 'vfix-ok',
      state: 'COMPLETED', runState: 'completed', exitCode: 0, signal: 0, reason: null,
    });
    expect(one(sacct, name('fail'), 'sacct')).toMatchObject({ jobId: id('fail'), state: 'FAILED', runState: 'failed', exitCode: 3, signal: 0 });
    expect(one(sacct, name('signal'), 'sacct')).toMatchObject({ jobId: id('signal'), state: 'FAILED', runState: 'failed', exitCode: 0, signal: 9 });
    const cancelled = one(sacct, name('cancel-running'), 'sacct');
    expect(cancelled).toMatchObject({ jobId: id('cancel-running'), state: 'CANCELLED', runState: 'cancelled', exitCode: 0 });
    expect(cancelled.startTime).toBeInstanceOf(Date);
    expect(cancelled.elapsedS).toBeGreaterThanOrEqual(0);
    expect(one(sacct, name('cancel-pending'), 'sacct')).toMatchObject({
      // 24.11's slurmdbd records no reason for a held job cancelled while pending (captured); 22.05 keeps JobHeldUser.
      jobId: id('cancel-pending'), state: 'CANCELLED', runState: 'cancelled', reason: rank(v) < 2411 ? 'JobHeldUser' : null, startTime: null, nodeList: null, elapsedS: 0,
    });
    expect(one(sacct, name('long'), 'sacct')).toMatchObject({ jobId: id('long'), runState: 'completed', name: name('long') });
    for (const job of sacct) {
      expect(job.submitTime).toBeInstanceOf(Date);
      expect(job.endTime).toBeInstanceOf(Date);
      // Without an energy plugin sacct prints an empty field (or 0 for jobs that never ran): no figure.
      if (energyNone) expect(job.consumedEnergyJ).toBeNull();
    }
    expect(read(v, 'sacct.txt')).toMatch(/\|CANCELLED by \d+\|/);
  });

  test('sacct --name matches the exact name', () => {
    expect(read(v, 'sacct-name.txt').trim().split('\n')).toEqual([`${id('ok')}|${name('ok')}`]);
  });

  // erg's arrays (array.ts, `erg-a-<submission>`): every line of an array as one job per task.
  describe('array tasks', () => {
    const tasksOf = (jobs: SlurmJob[], role: string) =>
      jobs.filter((j) => j.name === name(role)).sort((a, b) => Number(a.arrayTaskId) - Number(b.arrayTaskId));
    const finished = (j: SlurmJob) => [j.jobId, j.displayId, j.arrayJobId, j.arrayTaskId, j.state, j.exitCode];
    /** --array=0-3, task 2 exits 3; the last task to start keeps the array's own job id. */
    const expectFinishedArray = (parsed: SlurmJob[], withExitCodes: boolean) => {
      const a = id('array');
      const tasks = tasksOf(parsed, 'array');
      expect(tasks.map((t) => [t.displayId, t.arrayJobId, t.arrayTaskId, t.state])).toEqual([
        [`${a}_0`, a, '0', 'COMPLETED'], [`${a}_1`, a, '1', 'COMPLETED'], [`${a}_2`, a, '2', 'FAILED'], [`${a}_3`, a, '3', 'COMPLETED'],
      ]);
      expect(tasks.filter((t) => t.jobId === a)).toHaveLength(1);
      expect(new Set(tasks.map((t) => t.jobId)).size).toBe(4);
      if (withExitCodes) expect(tasks.map((t) => t.exitCode)).toEqual([0, 0, 3, 0]);
      return tasks.map(finished);
    };

    test('finished tasks in squeue and sacct, the same ids in both', () => {
      const fromSqueue = expectFinishedArray(parseSqueue(onlyNamed(read(v, 'squeue-final.txt'), name('array'))), false);
      const fromSacct = expectFinishedArray(parseSacct(onlyNamed(read(v, 'sacct.txt'), name('array'))), true);
      expect(fromSqueue.map((t) => t.slice(0, 5))).toEqual(fromSacct.map((t) => t.slice(0, 5)));
    });

    test('a pending throttled range (--array=0-5%2, held) is one job per task', () => {
      const p = id('array-pending');
      const pending = tasksOf(parseSqueue(onlyNamed(read(v, 'squeue-live.txt'), name('array-pending'))), 'array-pending');
      expect(pending.map((t) => [t.jobId, t.displayId, t.arrayJobId, t.arrayTaskId, t.runState, t.reason])).toEqual(
        [0, 1, 2, 3, 4, 5].map((i) => [p, `${p}_${i}`, p, String(i), 'queued', 'JobHeldUser']),
      );
      const cancelled = tasksOf(parseSacct(onlyNamed(read(v, 'sacct.txt'), name('array-pending'))), 'array-pending');
      expect(cancelled.map((t) => [t.displayId, t.runState, t.startTime])).toEqual([0, 1, 2, 3, 4, 5].map((i) => [`${p}_${i}`, 'cancelled', null]));
    });

    // Tasks 1, 3, … 59 of a held --array=0-99%1 cancelled one by one: 0, 2, … 58 and 60-99 remain.
    const remaining = [...Array.from({ length: 30 }, (_, i) => 2 * i), ...Array.from({ length: 40 }, (_, i) => 60 + i)];
    const taskIds = (jobs: SlurmJob[]) => tasksOf(jobs, 'array-fragmented').map((t) => Number(t.arrayTaskId));

    test.each(['squeue-live.txt', 'squeue-live-bitstr0.txt'])('a pending rest that is a long list (%s): every remaining task', (file) => {
      // squeue-live.txt: %i is cut to 31 characters without its "]", %K to 64 with "..." (README).
      expect(taskIds(parseSqueue(onlyNamed(read(v, file), name('array-fragmented'))))).toEqual(remaining);
    });

    test.each(['sacct.txt', 'sacct-bitstr0.txt'])('a cancelled rest that is a long list (%s): every remaining task', (file) => {
      // sacct.txt: JobID is cut to 64 characters with "..." (README).
      const tasks = tasksOf(parseSacct(onlyNamed(read(v, file), name('array-fragmented'))), 'array-fragmented');
      expect(tasks.map((t) => Number(t.arrayTaskId))).toEqual(remaining);
      expect(new Set(tasks.map((t) => t.runState))).toEqual(new Set(['cancelled']));
    });

    test('a pending task cancelled on its own leaves no record (the run must be settled without one)', () => {
      const frag = id('array-fragmented');
      for (const file of ['squeue-live-bitstr0.txt', 'squeue-final.txt', 'sacct-bitstr0.txt']) {
        const text = read(v, file);
        expect(text).not.toMatch(new RegExp(`\\|${frag}_1\\|`));
        expect(text.split('\n').filter((l) => l.endsWith(`|${name('array-fragmented')}`))).toHaveLength(1);
      }
    });
  });
});

describe('Slurm 23.02 (documented): squeue %r of a job killed by a signal', () => {
  const jobs = parseSqueue(read('23.02', 'squeue-signal.txt'));

  test('RaisedSignal:<n>(<name>) is the reason, the job failed', () => {
    expect(jobs[0]).toMatchObject({ jobId: '2001', state: 'FAILED', runState: 'failed', reason: 'RaisedSignal:9(Killed)', runId: 'vfix-signal', exitCode: null });
    expect(jobs[0]!.endTime).toEqual(new Date('2026-11-30T03:00:02Z'));
  });

  describe('array tasks', () => {
    test('an array task killed by SIGTERM', () => {
      expect(jobs[1]).toMatchObject({ jobId: '2004', displayId: '2002_1', arrayJobId: '2002', arrayTaskId: '1', runState: 'failed', reason: 'RaisedSignal:15(Terminated)' });
    });
  });
});

describe('Slurm 23.11 (documented): scontrol show config prints (null) for the removed none plugins', () => {
  const config = read('23.11', 'scontrol-show-config.txt');

  test('erg\'s probe still reads MaxArraySize and MaxJobCount', () => {
    expect(probeWith('slurm 23.11.0\n', config)).toMatchObject({ slurmVersion: 'slurm 23.11.0', maxArraySize: 1001, maxJobCount: 10000 });
  });

  test('(null) is no energy plugin, as acct_gather_energy/none was', () => {
    expect(configValue(config, 'AcctGatherEnergyType')).toBe('(null)');
    expect(noEnergyPlugin(config)).toBe(true);
  });
});

describe('Slurm 24.05 (documented)', () => {
  test('a hard-dropped submission (rpc_queue hard_drop) was never taken: not sent, submit again later', () => {
    const [ok, dropped] = parseSubmitMany(read('24.05', 'submit-errors.txt'));
    expect(ok).toEqual({ path: '/WORK/ok.sh', status: 'ok', jobId: '4001', cluster: null });
    expect(dropped).toMatchObject({ path: '/WORK/hard-drop.sh', status: 'unsent' });
  });

  test('new pending reasons pass through', () => {
    expect(parseSqueue(read('24.05', 'squeue-reasons.txt')).map((j) => [j.jobId, j.runState, j.reason])).toEqual([
      ['4002', 'queued', 'MpiPortsBusy'],
      ['4003', 'queued', 'MaxPoweredUpNodes'],
    ]);
  });
});

describe('Slurm 25.05 (documented; the same from 24.11): NODE_FAIL has ExitCode 0:1', () => {
  const jobs = parseSacct(read('25.05', 'sacct-node-fail.txt'));

  test('a node failure is node_fail, with Slurm\'s energy figure', () => {
    // exit_code = 1 is a raw wait status: sacct prints it as signal 1, though nothing was signalled.
    expect(jobs[0]).toMatchObject({ jobId: '5001', state: 'NODE_FAIL', runState: 'node_fail', exitCode: 0, signal: 1, consumedEnergyJ: 183204, nodeList: 'gh[001-002]', elapsedS: 600 });
  });

  describe('array tasks', () => {
    test('an array task on a failed node', () => {
      expect(jobs[1]).toMatchObject({ jobId: '5003', displayId: '5002_1', arrayJobId: '5002', arrayTaskId: '1', runState: 'node_fail', consumedEnergyJ: 91002 });
    });
  });
});
