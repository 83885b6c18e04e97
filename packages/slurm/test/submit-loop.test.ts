/**
 * The remote sbatch loop (submit-loop.ts): the shell program run in bash against a stand-in
 * sbatch, and its parser on real output of Slurm 22.05 (fixtures/capture.sh).
 */
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { InvalidCommandInputError, parseSubmitMany, SlurmParseError, submitManyCommand } from '../src';
import { bash, tempDir } from './helpers';

const fixture = (name: string) => readFileSync(path.join(__dirname, 'fixtures', name), 'utf8');

/** A stand-in sbatch in `<dir>/bin` that logs each script path to `<dir>/calls`, then runs `body`; returns the env that puts it on PATH. */
function standInSbatch(dir: string, body: string[]): NodeJS.ProcessEnv {
  const bin = path.join(dir, 'bin');
  bash(['-c', `mkdir -p '${bin}'`]);
  writeFileSync(path.join(bin, 'sbatch'), ['#!/bin/sh', `echo "$2" >>'${dir}/calls'`, ...body].join('\n'));
  chmodSync(path.join(bin, 'sbatch'), 0o755);
  return { PATH: `${bin}:${process.env.PATH}` };
}

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

describe('parseSubmitMany (real output)', () => {
  it('reads ok and err lines', () => {
    expect(parseSubmitMany(fixture('submit-many.txt'))).toEqual([
      { path: '/WORK/good.sh', status: 'ok', jobId: '40', cluster: null },
      {
        path: '/WORK/bad-partition.sh',
        status: 'err',
        error: 'sbatch: error: invalid partition specified: no-such-partition sbatch: error: Batch job submission failed: Invalid partition name specified',
      },
      { path: '/WORK/missing.sh', status: 'err', error: 'sbatch: error: Unable to open file /WORK/missing.sh' },
    ]);
  });

  it('reports paths without a line, or with a success that is not a job id, as unknown', () => {
    const results = parseSubmitMany('/a/job.sh\tok\t12\n/b/job.sh\tok\tsbatch: warning: odd\n', ['/a/job.sh', '/b/job.sh', '/c/job.sh']);
    expect(results.map((r) => r.status)).toEqual(['ok', 'unknown', 'unknown']);
  });

  it('refuses lines of another shape', () => {
    expect(() => parseSubmitMany('Submitted batch job 12\n')).toThrow(SlurmParseError);
  });

  // Captured by capture.sh: a slurm.conf naming a dead port, then slurmctld stopped (SIGSTOP)
  // past MessageTimeout. The sbatch that timed out had its job created when slurmctld woke up.
  it('tells a job that may exist (timed out) from one that cannot (connect failure, not sent)', () => {
    const [connect, skipped1, timedOut, skipped2] = parseSubmitMany(fixture('submit-many-controller-down.txt'));
    expect(connect).toEqual({
      path: '/WORK/hang-1.sh', status: 'unsent',
      error: 'sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)',
    });
    expect(timedOut).toEqual({
      path: '/WORK/hang-1.sh', status: 'unknown',
      error: 'sbatch got no answer from slurmctld, which may still create the job: sbatch: error: Batch job submission failed: Socket timed out on send/recv operation',
    });
    for (const skipped of [skipped1, skipped2]) {
      expect(skipped).toEqual({ path: '/WORK/hang-2.sh', status: 'unsent', error: 'not sent: an earlier sbatch of the same loop found slurmctld not answering, or a site limit reached' });
    }
  });
});
