import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseProbe, probeCommand } from '../src';

/** Runs the probe's command here (as the login node would), with a fake `sinfo` and helper on PATH. */
function runProbe(helper: (dir: string) => string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'erg-probe-'));
  fs.writeFileSync(path.join(dir, 'sinfo'), '#!/bin/sh\necho "slurm 24.11.5"\n', { mode: 0o755 });
  // As `scontrol show config` prints them (24.11), among ~200 other lines.
  const config = 'Configuration data as of 2026-12-01T12:00:00\nMaxArraySize            = 1001\nMaxBatchRequeue         = 5\nMaxJobCount             = 10000\nMaxJobId                = 67043328\n';
  fs.writeFileSync(path.join(dir, 'scontrol'), `#!/bin/sh\n[ "$1 $2" = "show config" ] && printf '%s' '${config}'\n`, { mode: 0o755 });
  const out = execFileSync('sh', ['-c', probeCommand(helper(dir))], { env: { PATH: `${dir}:/usr/bin:/bin` }, encoding: 'utf8' });
  fs.rmSync(dir, { recursive: true, force: true });
  return out;
}

function script(dir: string, name: string, body: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}

describe('probing a cluster', () => {
  test('finds the Slurm version and a helper that answers, with the knobs it allows', () => {
    let helperPath = '';
    const out = runProbe((dir) => (helperPath = script(dir, 'erg-power-helper', `echo '{"helper":"erg-power-helper","version":1,"knobs":["gpuPowerLimitW","cpuFreqKHz"]}'`)));
    expect(parseProbe(out, helperPath)).toEqual({
      slurmVersion: 'slurm 24.11.5',
      maxArraySize: 1001,
      maxJobCount: 10000,
      powerHelper: { version: 1, knobs: ['gpuPowerLimitW', 'cpuFreqKHz'] },
      powerHelperProblem: null,
    });
  });

  test('reads the array and job limits from scontrol show config, null where it says nothing', () => {
    expect(parseProbe('erg-probe slurm slurm 24.11.5\nerg-probe config MaxArraySize 0\nerg-probe helper-missing\n', '/h')).toMatchObject({ maxArraySize: 0, maxJobCount: null });
    expect(parseProbe('erg-probe slurm slurm 24.11.5\nerg-probe helper-missing\n', '/h')).toMatchObject({ maxArraySize: null, maxJobCount: null });
  });

  test('reads Debian\'s sinfo (slurm-wlm) as the same version', () => {
    expect(parseProbe('erg-probe slurm slurm-wlm 22.05.8\nerg-probe helper-missing\n', '/h').slurmVersion).toBe('slurm 22.05.8');
    expect(parseProbe('erg-probe slurm sh: sinfo: not found\nerg-probe helper-missing\n', '/h').slurmVersion).toBeNull();
  });

  test('says where it looked when no helper is installed', () => {
    const out = runProbe((dir) => path.join(dir, 'nothing-here'));
    const probe = parseProbe(out, '/usr/local/sbin/erg-power-helper');
    expect(probe.powerHelper).toBeNull();
    expect(probe.powerHelperProblem).toMatch(/no executable node helper at \/usr\/local\/sbin\/erg-power-helper/);
  });

  test('does not take another program at that path for the helper', () => {
    const out = runProbe((dir) => script(dir, 'impostor', 'echo usage: impostor; exit 1'));
    expect(parseProbe(out, '/x/impostor')).toMatchObject({ powerHelper: null, powerHelperProblem: expect.stringContaining('did not answer as erg\'s node helper') });
    const newer = runProbe((dir) => script(dir, 'h', `echo '{"helper":"erg-power-helper","version":2,"knobs":[]}'`));
    expect(parseProbe(newer, '/x/h').powerHelperProblem).toMatch(/version 2 .* version 1/);
  });

  test('a helper path with shell characters is one quoted word, never run as code', () => {
    const marker = path.join(os.tmpdir(), `erg-probe-pwned-${process.pid}`);
    runProbe(() => `/nonexistent/$(touch ${marker})`);
    expect(fs.existsSync(marker)).toBe(false);
  });
});

describe("probing the agent's runtime", () => {
  /** The probe run here with a fake `scontrol show node` (two aarch64 nodes and one x86_64, as 24.11 prints them with -o) and an agent command. */
  function runRuntimeProbe(agentCommand: (dir: string) => string): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'erg-probe-rt-'));
    const nodes = [
      'NodeName=gh-001 Arch=aarch64 CoresPerSocket=72 CPUAlloc=0 CPUTot=72 OS=Linux 6.8.0 RealMemory=480000',
      'NodeName=gh-002 Arch=aarch64 CoresPerSocket=72 CPUAlloc=0 CPUTot=72 OS=Linux 6.8.0 RealMemory=480000',
      'NodeName=login1 Arch=x86_64 CoresPerSocket=8 OS=Linux',
      'NodeName=gh-003 Arch=(null) CoresPerSocket=72 State=DOWN',
    ].join('\n');
    fs.writeFileSync(path.join(dir, 'sinfo'), '#!/bin/sh\necho "slurm 24.11.5"\n', { mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'scontrol'), `#!/bin/sh\n[ "$1 $2 $3" = "-o show node" ] && printf '%s\\n' '${nodes}'\n`, { mode: 0o755 });
    const out = execFileSync('sh', ['-c', probeCommand('/nonexistent/helper', agentCommand(dir))], { env: { PATH: `${dir}:/usr/bin:/bin` }, encoding: 'utf8' });
    fs.rmSync(dir, { recursive: true, force: true });
    return out;
  }

  test("reads the nodes' architectures from scontrol show node (most nodes first; a down node's (null) left out) and what the agent command answers", () => {
    const probe = parseProbe(runRuntimeProbe((dir) => script(dir, 'node', 'echo v20.20.2')), '/nonexistent/helper');
    expect(probe.runtime).toEqual({
      host: expect.stringMatching(/^\S+$/),
      hostArch: execFileSync('uname', ['-m'], { encoding: 'utf8' }).trim(),
      command: { exitCode: 0, output: 'v20.20.2' },
      nodeArchs: [{ arch: 'aarch64', nodes: 2, example: 'gh-001' }, { arch: 'x86_64', nodes: 1, example: 'login1' }],
    });
  });

  test('an agent command that is not there answers 127; one that prints something else is kept as it printed it (one line, bounded)', () => {
    expect(parseProbe(runRuntimeProbe(() => 'no-such-node-here'), '/h').runtime?.command.exitCode).toBe(127);
    const odd = parseProbe(runRuntimeProbe((dir) => script(dir, 'n', `printf 'weird %0300d\\nsecond line\\n' 0; exit 3`)), '/h').runtime;
    expect(odd?.command.exitCode).toBe(3);
    expect(odd?.command.output).toMatch(/^weird 0+$/);
    expect(odd?.command.output.length).toBe(200);
  });

  test('an agent command is shell-quoted: a value with shell syntax is a (missing) file name, never run', () => {
    const marker = path.join(os.tmpdir(), `erg-probe-pwned-${process.pid}`);
    const probe = parseProbe(runRuntimeProbe(() => `node;touch ${marker}`), '/h');
    expect(probe.runtime?.command.exitCode).toBe(127);
    expect(fs.existsSync(marker)).toBe(false);
  });

  test('without an agent command the probe asks nothing about the runtime', () => {
    expect(parseProbe(runProbe((dir) => path.join(dir, 'x')), '/x').runtime).toBeUndefined();
  });
});
