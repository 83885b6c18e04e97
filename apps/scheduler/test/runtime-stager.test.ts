import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AGENT_RUNTIME_VENDOR_DIR, readRuntimeManifest, type RuntimePlatformManifest } from '@erg/agent';
import { unpackCommand } from '../src/runtime-stager';

// The login node's half of staging erg's agent runtime (RuntimeStager.stage uploads the tarballs
// and sha256 lists, then runs unpackCommand there), run here with this machine's sh, tar and
// sha256sum on the vendored tarballs: checked before and after unpacking, and atomic — the final
// folder appears complete and checked, or not at all. (A whole staging that succeeds, and the
// runtime it leaves running the agent, is staged-runtime-arch.test.ts.)

const manifest = readRuntimeManifest();
const x64 = manifest.platforms['linux-x64']!;
let root: string;

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'erg-runtime-stage-'));
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

/** What RuntimeStager.stage uploads, laid out in `tmp`: the tarballs and the two sha256 lists. */
function upload(m: RuntimePlatformManifest, tmp: string, corrupt?: string): void {
  fs.mkdirSync(tmp, { recursive: true });
  for (const t of m.tarballs) {
    const bytes = fs.readFileSync(path.join(AGENT_RUNTIME_VENDOR_DIR, t.file));
    if (t.file === corrupt) bytes[bytes.length - 100] ^= 0xff;
    fs.writeFileSync(path.join(tmp, t.file), bytes);
  }
  fs.writeFileSync(path.join(tmp, 'tarballs.sha256'), m.tarballs.map((t) => `${t.sha256}  ${t.file}\n`).join(''));
  fs.writeFileSync(path.join(tmp, 'files.sha256'), m.files.map((f) => `${f.sha256}  ${f.path}\n`).join(''));
}

/** koffi alone (small): for the failures, which need no Node.js binary. */
const koffiOnly = (m: RuntimePlatformManifest): RuntimePlatformManifest => ({
  ...m, tarballs: m.tarballs.filter((t) => !t.package.startsWith('node-')), files: m.files.filter((f) => f.path !== 'bin/node'),
});

const unpack = (tmp: string, dir: string, m: RuntimePlatformManifest) => spawnSync('sh', ['-c', unpackCommand(tmp, dir, m, 0o077)], { encoding: 'utf8' });

describe("staging erg's agent runtime on the login node", () => {
  test('a tarball damaged on the way: refused before unpacking, no final folder, nothing left behind', () => {
    const m = koffiOnly(x64);
    const tmp = path.join(root, '.staging-bad');
    const dir = path.join(root, 'final');
    upload(m, tmp, m.tarballs[0]!.file);
    const r = unpack(tmp, dir, m);
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('the uploaded runtime tarballs do not match their sha256');
    expect(fs.readdirSync(root)).toEqual([]);
  });

  test('unpacked files that differ from the manifest: refused, no final folder', () => {
    const m = koffiOnly(x64);
    const wrong = { ...m, files: m.files.map((f, i) => (i === 0 ? { ...f, sha256: '0'.repeat(64) } : f)) };
    const tmp = path.join(root, '.staging-wrong');
    upload(wrong, tmp);
    const r = unpack(tmp, path.join(root, 'final'), wrong);
    expect(r.status).toBe(5);
    expect(r.stderr).toContain('the unpacked runtime does not match its sha256');
    expect(fs.readdirSync(root)).toEqual([]);
  });

  test('another stager was first: its folder stays as it is, this copy is thrown away', () => {
    const m = koffiOnly(x64);
    const dir = path.join(root, 'final');
    fs.mkdirSync(path.join(dir, 'bin'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'bin', 'node'), '#!/bin/sh\necho theirs\n', { mode: 0o755 });
    const tmp = path.join(root, '.staging-late');
    upload(m, tmp);
    const r = unpack(tmp, dir, m);
    expect(r.status).toBe(0);
    expect(fs.readdirSync(root)).toEqual(['final']);
    expect(fs.readdirSync(dir)).toEqual(['bin']);
  });
});

describe('abandoned staging folders', () => {
  test('a staging folder older than an hour (a stager that died) is removed by the next staging; a fresh one (a stager at work) is not', () => {
    const m = koffiOnly(x64);
    const old = path.join(root, '.staging-dead-1');
    const busy = path.join(root, '.staging-busy-2');
    fs.mkdirSync(old);
    fs.mkdirSync(busy);
    const hourAgo = new Date(Date.now() - 2 * 3600_000);
    fs.utimesSync(old, hourAgo, hourAgo);
    const tmp = path.join(root, '.staging-now');
    upload(m, tmp);
    fs.mkdirSync(path.join(root, 'final', 'bin'), { recursive: true });
    fs.writeFileSync(path.join(root, 'final', 'bin', 'node'), '', { mode: 0o755 });
    expect(unpack(tmp, path.join(root, 'final'), m).status).toBe(0);
    expect(fs.readdirSync(root).sort()).toEqual(['.staging-busy-2', 'final']);
  });
});
