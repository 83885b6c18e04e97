// Run directories on a shared filesystem are the job user's alone (issue 27 §6): one umask, 077
// unless the site sets another, for what erg stages (unpacked here with the login node's own
// command), what the job creates (job.sh and array.sh set it first) and what Slurm creates for the
// job (the sbatch loop runs under it).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_RUN_UMASK, isRunUmask, umaskCommand } from '@erg/spec';
import { arrayDirPath, renderArrayJob, renderJobScript, stageArchive, stageCommand, submitManyCommand, type StageEntry } from '../src';
import { renderInput, tempDir } from './helpers';

const CAMPAIGN = '5e0d2a4c-1b3f-4c5d-8e9f-0a1b2c3d4e5f';
const SUB = '0b7c4f2e-9a51-4d8e-b1f3-2c6d7e8f9a01';
const modeOf = (p: string) => fs.statSync(p).mode & 0o777;

/** Unpacks a staging archive exactly as the login node would: the same command, the archive on stdin. */
async function stageHere(base: string, entries: StageEntry[], umask?: number): Promise<void> {
  execFileSync('sh', ['-c', stageCommand(base, umask)], { input: await stageArchive(entries, umask) });
}

const RUN_FILES: StageEntry[] = [
  { name: 'c/r/job.sh', content: '#!/bin/bash\n', mode: 0o755 },
  { name: 'c/r/ds_config.json', content: '{}', mode: 0o644 },
  { name: 'c/r/.erg-run-token', content: 'secret', mode: 0o600 },
];

describe('staged run directories', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('erg-modes-');
  });
  afterEach(() => tmp.cleanup());

  it('are 0700, their files 0600 and their scripts 0700 by default, the work dir made on the way included', async () => {
    const base = path.join(tmp.dir, 'work');
    await stageHere(base, RUN_FILES);
    expect([base, `${base}/c`, `${base}/c/r`].map(modeOf)).toEqual([0o700, 0o700, 0o700]);
    expect(['job.sh', 'ds_config.json', '.erg-run-token'].map((f) => modeOf(`${base}/c/r/${f}`))).toEqual([0o700, 0o600, 0o600]);
  });

  it("take the site's umask when it sets another (027: the group reads), the token staying 0600", async () => {
    const base = path.join(tmp.dir, 'work');
    await stageHere(base, RUN_FILES, 0o027);
    expect([base, `${base}/c`, `${base}/c/r`].map(modeOf)).toEqual([0o750, 0o750, 0o750]);
    expect(['job.sh', 'ds_config.json', '.erg-run-token'].map((f) => modeOf(`${base}/c/r/${f}`))).toEqual([0o750, 0o640, 0o600]);
  });

  it("keep those modes when an array task unpacks its run, and what the task writes is the user's alone", async () => {
    const root = tmp.dir;
    const runDirs = [`${root}/${CAMPAIGN}/r0`];
    const arrayDir = arrayDirPath(root, CAMPAIGN, SUB);
    const runFiles: StageEntry[] = [
      { name: `${CAMPAIGN}/r0/job.sh`, content: '#!/bin/bash\necho out > written\n', mode: 0o755 },
      { name: `${CAMPAIGN}/r0/data.txt`, content: 'x', mode: 0o644 },
    ];
    const array = await renderArrayJob({ submissionId: SUB, campaignId: CAMPAIGN, workDir: root, arrayDir, runDirs, runFiles, resourceLines: [] });
    await stageHere(root, array.map((e) => ({ ...e, name: `${CAMPAIGN}/.arrays/${SUB}/${e.name}` })));
    expect(['array.sh', 'tasks', 'runs.tar.gz'].map((f) => modeOf(`${arrayDir}/${f}`))).toEqual([0o700, 0o600, 0o600]);
    // The test process's own umask (022 here) is what a login shell would have: array.sh sets erg's.
    execFileSync('bash', ['array.sh'], { cwd: arrayDir, env: { ...process.env, SLURM_ARRAY_TASK_ID: '0' } });
    expect([runDirs[0]!, `${runDirs[0]}/job.sh`, `${runDirs[0]}/data.txt`, `${runDirs[0]}/written`].map(modeOf)).toEqual([0o700, 0o700, 0o600, 0o600]);
  });
});

describe('the commands and scripts that create files on the cluster', () => {
  it('job.sh sets the umask before anything else runs: exports, the agents, the workload', () => {
    const lines = renderJobScript(renderInput({})).split('\n');
    const at = lines.indexOf('umask 0077');
    expect(at).toBeGreaterThan(lines.indexOf('set -u'));
    expect(at).toBeLessThan(lines.findIndex((l) => l.startsWith('export ')));
    expect(at).toBeLessThan(lines.indexOf('# >>> erg agent start'));
    expect(renderJobScript(renderInput({ umask: 0o027 }))).toContain('\numask 0027\n');
  });

  it('job.sh run by bash creates its files 0600 whatever umask the job started with', () => {
    const tmp = tempDir('erg-modes-job-');
    try {
      // The lines job.sh runs first, then a file written the way the agent's spool is.
      const head = renderJobScript(renderInput({ runDir: tmp.dir })).split('\n');
      const script = [...head.slice(0, head.indexOf('cd "$ERG_RUN_DIR" || exit 1') + 1), 'echo sample > spool'].join('\n');
      execFileSync('bash', ['-c', `umask 022; ${script}`]);
      expect(modeOf(`${tmp.dir}/spool`)).toBe(0o600);
    } finally {
      tmp.cleanup();
    }
  });

  it('the staging command and the sbatch loop run under the umask (Slurm gives the job the one sbatch had)', () => {
    expect(stageCommand('/w')).toMatch(/^umask 0077 && mkdir -p /);
    expect(submitManyCommand(['/w/c/r/job.sh'], null).command).toMatch(/^sh -c 'umask 0077; /);
    expect(submitManyCommand(['/w/c/r/job.sh'], null, 0o027).command).toMatch(/^sh -c 'umask 0027; /);
  });

  it('take no umask that would take the owner its own bits', () => {
    expect(DEFAULT_RUN_UMASK).toBe(0o077);
    expect(isRunUmask(0o027)).toBe(true);
    expect(isRunUmask(0o177)).toBe(false);
    expect(() => umaskCommand(0o700)).toThrow(/owner's own bits/);
  });
});
