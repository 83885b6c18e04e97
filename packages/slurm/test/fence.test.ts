// The submission fence, run for real: sh, flock and a stand-in sbatch on this machine (the same
// POSIX tools a login node has). What it must guarantee: once a raise returns, no sbatch of an
// older loop runs any more, and every one that did run has finished.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { waitFor } from '@erg/testkit';
import { parseRaiseFence, parseSubmitMany, raiseFenceCommand, submitManyCommand, type Fence } from '../src';
import { tempDir } from './helpers';

function sh(command: string, opts: { input?: string; env?: NodeJS.ProcessEnv } = {}) {
  // exec: the child is the command's own shell, so killing it kills the loop as sshd's end would, not a wrapper.
  const child = spawn('/bin/sh', ['-c', `exec ${command}`], { env: opts.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  child.stdin.on('error', () => undefined); // a command that exits before reading its input
  child.stdin.end(opts.input ?? '');
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
  return { child, done };
}

/** A stand-in sbatch that logs `start <script>` and, after `delayS`, `end <script>` and a job id. */
function standInSbatch(dir: string, delayS: number): { env: NodeJS.ProcessEnv; calls: () => string[] } {
  const bin = path.join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(
    path.join(bin, 'sbatch'),
    ['#!/bin/sh', `echo "start $2" >>'${dir}/calls'`, `sleep ${delayS}`, `echo "end $2" >>'${dir}/calls'`, 'echo "$$"'].join('\n'),
  );
  chmodSync(path.join(bin, 'sbatch'), 0o755);
  const log = path.join(dir, 'calls');
  return {
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
    calls: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean) : []),
  };
}

async function raise(fence: Fence, env: NodeJS.ProcessEnv = process.env) {
  const r = await sh(raiseFenceCommand(fence, 20), { env }).done;
  return { ...r, parsed: parseRaiseFence(r.stdout) };
}

jest.setTimeout(30_000);

describe('submission fence', () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => ({ dir, cleanup } = tempDir()));
  afterEach(() => cleanup());

  const paths = ['/w/r1/job.sh', '/w/r2/job.sh', '/w/r3/job.sh', '/w/r4/job.sh'];

  it('lets a loop of the current epoch submit every script', async () => {
    const fence = { path: path.join(dir, 'work', '.erg', 'fence-c1'), epoch: 3n };
    const sbatch = standInSbatch(dir, 0);
    expect((await raise(fence)).parsed).toEqual({ raised: true });
    const { command, stdin } = submitManyCommand(paths, fence);
    const r = await sh(command, { input: stdin, env: sbatch.env }).done;
    expect(r.code).toBe(0);
    expect(parseSubmitMany(r.stdout, paths).map((x) => x.status)).toEqual(['ok', 'ok', 'ok', 'ok']);
  });

  it('a loop whose epoch is not the fence\'s submits nothing (e.g. a fence never raised for it)', async () => {
    const fence = { path: path.join(dir, 'fence'), epoch: 1n };
    const sbatch = standInSbatch(dir, 0);
    const { command, stdin } = submitManyCommand(paths, fence);
    const r = await sh(command, { input: stdin, env: sbatch.env }).done;
    expect(parseSubmitMany(r.stdout, paths)).toEqual([
      { path: paths[0], status: 'fenced', fenceEpoch: '' },
      ...paths.slice(1).map((p) => ({ path: p, status: 'unknown', error: 'no result from the submit loop (connection lost?)' })),
    ]);
    expect(sbatch.calls()).toEqual([]);
  });

  it('a raise waits for the sbatch in flight, and the old loop stops before its next one', async () => {
    const old = { path: path.join(dir, 'fence'), epoch: 7n };
    const sbatch = standInSbatch(dir, 1);
    await raise(old);
    const { command, stdin } = submitManyCommand(paths, old);
    const loop = sh(command, { input: stdin, env: sbatch.env });
    await waitFor(() => sbatch.calls().includes(`start ${paths[1]}`), { timeoutMs: 10_000, intervalMs: 20, what: 'the second sbatch to start' });

    const raised = await raise({ ...old, epoch: 8n });
    expect(raised.parsed).toEqual({ raised: true });
    // The second sbatch was in flight when the raise began: it had finished by the time the raise returned.
    expect(sbatch.calls()).toEqual([`start ${paths[0]}`, `end ${paths[0]}`, `start ${paths[1]}`, `end ${paths[1]}`]);

    const r = await loop.done;
    expect(parseSubmitMany(r.stdout, paths).map((x) => x.status)).toEqual(['ok', 'ok', 'fenced', 'unknown']);
    expect(sbatch.calls()).toHaveLength(4);
  });

  it('a loop killed mid-sbatch still holds the fence until that sbatch ends', async () => {
    const old = { path: path.join(dir, 'fence'), epoch: 1n };
    const sbatch = standInSbatch(dir, 2);
    await raise(old);
    const { command, stdin } = submitManyCommand(paths, old);
    const loop = sh(command, { input: stdin, env: sbatch.env });
    await waitFor(() => sbatch.calls().includes(`start ${paths[0]}`), { timeoutMs: 10_000, intervalMs: 20, what: 'the first sbatch to start' });
    loop.child.kill('SIGKILL');
    await loop.done;

    expect((await raise({ ...old, epoch: 2n })).parsed).toEqual({ raised: true });
    expect(sbatch.calls()).toEqual([`start ${paths[0]}`, `end ${paths[0]}`]);
  });

  it('never lowers the fence: a raise by an older lease reports the newer epoch and changes nothing', async () => {
    const fence = { path: path.join(dir, 'fence'), epoch: 12n };
    await raise(fence);
    const stale = await raise({ ...fence, epoch: 11n });
    expect(stale.parsed).toEqual({ raised: false, current: 12n });
    expect(readFileSync(fence.path, 'utf8').trim()).toBe('12');
  });

  it('says what is missing when the login node has no flock', async () => {
    const fence = { path: path.join(dir, 'fence'), epoch: 1n };
    // A PATH with a shell and nothing else.
    const bin = path.join(dir, 'only-sh');
    mkdirSync(bin);
    symlinkSync('/bin/sh', path.join(bin, 'sh'));
    const r = await sh(raiseFenceCommand(fence, 5), { env: { PATH: bin } }).done;
    expect(r.code).toBe(96);
    expect(r.stderr).toMatch(/flock \(util-linux\) is not installed on the login node/);
  });
});
