import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  InvalidCommandInputError,
  parseSubmitMany,
  sacctCommand,
  scancelCommand,
  squeueCommand,
  submitManyCommand,
} from '../src';
import { bash, tempDir } from './helpers';

/** A stand-in sbatch in `<dir>/bin` that logs each script path to `<dir>/calls`, then runs `body`; returns the env that puts it on PATH. */
function standInSbatch(dir: string, body: string[]): NodeJS.ProcessEnv {
  const bin = path.join(dir, 'bin');
  bash(['-c', `mkdir -p '${bin}'`]);
  writeFileSync(path.join(bin, 'sbatch'), ['#!/bin/sh', `echo "$2" >>'${dir}/calls'`, ...body].join('\n'));
  chmodSync(path.join(bin, 'sbatch'), 0o755);
  return { PATH: `${bin}:${process.env.PATH}` };
}

describe('squeueCommand', () => {
  it('asks once for all of the user\'s jobs, in the parsable format parse.ts reads, times in UTC', () => {
    expect(squeueCommand()).toBe(
      "env TZ=UTC SLURM_TIME_FORMAT=standard SLURM_BITSTR_LEN=0 squeue --me --noheader --states=all --format='%A|%i|%F|%K|%T|%r|%V|%S|%e|%N|%j'",
    );
    expect(squeueCommand({ user: 'alice' })).toContain("--user='alice'");
  });

  it('refuses a user name that is not one', () => {
    expect(() => squeueCommand({ user: 'a;b' })).toThrow(InvalidCommandInputError);
  });
});

describe('sacctCommand', () => {
  it('selects allocations since a UTC time, every state, untruncated fields', () => {
    const since = new Date(Date.UTC(2026, 10, 30, 3, 4, 5, 678));
    expect(sacctCommand({ since })).toBe(
      "env TZ=UTC SLURM_TIME_FORMAT=standard SLURM_BITSTR_LEN=0 sacct -X -n -P --starttime='2026-11-30T03:04:05' --endtime=now " +
        '--state=BF,CA,CD,DL,F,NF,OOM,PD,PR,R,RQ,RS,RV,S,TO ' +
        "--format='JobIDRaw,JobID,State,ExitCode,Reason,Submit,Start,End,ElapsedRaw,NodeList,ConsumedEnergyRaw,JobName'",
    );
    expect(sacctCommand({ since, user: 'bob' })).toContain(" --user='bob' ");
  });

  it('refuses an invalid date', () => {
    expect(() => sacctCommand({ since: new Date(Number.NaN) })).toThrow(InvalidCommandInputError);
  });
});

describe('scancelCommand', () => {
  it('quotes job ids and refuses anything else', () => {
    expect(scancelCommand(['12', '13_4'])).toBe("scancel '12' '13_4'");
    expect(() => scancelCommand([])).toThrow(InvalidCommandInputError);
    expect(() => scancelCommand(['12; rm -rf ~'])).toThrow(InvalidCommandInputError);
    expect(() => scancelCommand(['-u root'])).toThrow(InvalidCommandInputError);
  });
});

describe('submitManyCommand', () => {
  it('refuses relative paths and paths that would break the line protocol', () => {
    expect(() => submitManyCommand([], null)).toThrow(InvalidCommandInputError);
    expect(() => submitManyCommand(['job.sh'], null)).toThrow(InvalidCommandInputError);
    expect(() => submitManyCommand(['/a\tb/job.sh'], null)).toThrow(InvalidCommandInputError);
    expect(() => submitManyCommand(['/a\nb/job.sh'], null)).toThrow(InvalidCommandInputError);
  });

  it('submits each script once and reports one line per script (run in bash against a stand-in sbatch)', () => {
    const { dir, cleanup } = tempDir();
    try {
      // A stand-in sbatch that reads all of stdin (as a careless tool might: the loop must not
      // lose paths to it), refuses scripts named *bad*, and logs every call.
      const env = standInSbatch(dir, [
        'cat >/dev/null',
        'case "$2" in *bad*) echo "sbatch: error: Batch job submission failed: Invalid partition" >&2; echo "sbatch: error: second line" >&2; exit 1;; esac',
        `n=$(wc -l <'${dir}/calls'); echo "$((100 + n))"`,
      ]);
      const paths = ['/w/r1/job.sh', '/w/bad/job.sh', `/w/it's a "quoted" $(dir)/job.sh`, '/w/r4/job.sh'];
      const { command, stdin } = submitManyCommand(paths, null);
      const result = bash(['-c', command], { input: stdin, env });
      expect(result.status).toBe(0);
      expect(parseSubmitMany(result.stdout.toString(), paths)).toEqual([
        { path: paths[0], status: 'ok', jobId: '101', cluster: null },
        { path: paths[1], status: 'err', error: 'sbatch: error: Batch job submission failed: Invalid partition sbatch: error: second line' },
        { path: paths[2], status: 'ok', jobId: '103', cluster: null },
        { path: paths[3], status: 'ok', jobId: '104', cluster: null },
      ]);
      expect(bash(['-c', `cat '${dir}/calls'`]).stdout.toString()).toBe(`${paths.join('\n')}\n`);
    } finally {
      cleanup();
    }
  });

  it('sends nothing more once slurmctld stops answering: the rest come back skipped, not attempted', () => {
    const { dir, cleanup } = tempDir();
    try {
      // The error text is Slurm's, captured in fixtures/submit-many-controller-down.txt.
      const env = standInSbatch(dir, [
        'case "$2" in *hang*) echo "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation" >&2; exit 1;; esac',
        'echo 7',
      ]);
      const paths = ['/w/r1/job.sh', '/w/hang/job.sh', '/w/r3/job.sh', '/w/r4/job.sh'];
      const { command, stdin } = submitManyCommand(paths, null);
      const result = bash(['-c', command], { input: stdin, env });
      expect(result.status).toBe(0);
      expect(parseSubmitMany(result.stdout.toString(), paths).map((r) => r.status)).toEqual(['ok', 'unknown', 'unsent', 'unsent']);
      expect(bash(['-c', `cat '${dir}/calls'`]).stdout.toString()).toBe('/w/r1/job.sh\n/w/hang/job.sh\n');
    } finally {
      cleanup();
    }
  });
});
