// erg's node helper (deploy/node-helper/erg-power-helper) as a node runs it, against FIXTURES
// only: a fake nvidia-smi that keeps its GPUs in files (deploy/node-helper/test/fake-nvidia-smi,
// set up by fake-gpu-state) and a cpufreq sysfs tree made in each test's temp dir. No GPU is
// touched. Each test runs a temp copy of the helper with its config beside it, as root: the helper
// itself insists on root and on a root-owned config, so the suite is skipped for other users.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parsePowerRecord, POWER_KNOBS, type PowerRecord, type PowerState } from '@erg/spec/node-info';
import { powerHelperArgs } from '@erg/spec/run-dir';
import { repoRoot, waitFor } from '@erg/testkit';

jest.setTimeout(60_000);

const source = path.join(repoRoot(), 'deploy', 'node-helper');
const isRoot = process.getuid?.() === 0;
const describeAsRoot = isRoot ? describe : describe.skip;
const hasCommand = (name: string) => spawnSync('bash', ['-c', `command -v ${name}`]).status === 0;

type Profile = 'gh200' | 'h100';

/** One fake compute node in a temp dir: the helper's copy and config, the fake GPUs, a sysfs tree. */
interface FakeNode {
  dir: string;
  helper: string;
  conf: string;
  gpuState: string;
  stateDir: string;
  recordDir: string;
  cpufreq: string;
  env: NodeJS.ProcessEnv;
}

const nodes: FakeNode[] = [];
const children: ChildProcess[] = [];

/** CPU policies of the fixture sysfs tree: distinct current maxima, so restore must write each back. */
const POLICIES = { policy0: 3_100_000, policy1: 3_000_000, policy4: 2_900_000 } as const;
const CPU_MIN_KHZ = 800_000;
const CPU_MAX_KHZ = 3_500_000;

function writeConf(node: FakeNode, lines: Record<string, string>): void {
  const base: Record<string, string> = {
    NVIDIA_SMI: path.join(node.dir, 'bin', 'fake-nvidia-smi'),
    STATE_DIR: node.stateDir,
    SYSFS_ROOT: path.join(node.dir, 'sysroot'),
    PROLOG_RECORD_DIR: node.recordDir,
  };
  const all = { ...base, ...lines };
  const text = Object.entries(all)
    .filter(([, v]) => v !== '<unset>')
    .map(([k, v]) => `${k}=${v}`)
    .join('\n');
  writeFileSync(node.conf, `# test config (fixture paths)\n${text}\n`, { mode: 0o644 });
  chmodSync(node.conf, 0o644);
}

function makeNode(options: { profile?: Profile; gpus?: number; conf?: Record<string, string> } = {}): FakeNode {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'erg-power-'));
  const bin = path.join(dir, 'bin');
  mkdirSync(bin, { mode: 0o755 });
  for (const [from, to] of [
    ['erg-power-helper', 'erg-power-helper'],
    ['test/fake-nvidia-smi', 'fake-nvidia-smi'],
  ] as const) {
    copyFileSync(path.join(source, from), path.join(bin, to));
    chmodSync(path.join(bin, to), 0o755);
  }
  const gpuState = path.join(dir, 'gpu');
  const init = ['init', gpuState, '--profile', options.profile ?? 'gh200', ...(options.gpus ? ['--gpus', String(options.gpus)] : [])];
  const made = spawnSync(path.join(source, 'test', 'fake-gpu-state'), init, { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`fake-gpu-state init failed: ${made.stderr}`);
  const cpufreq = path.join(dir, 'sysroot', 'sys', 'devices', 'system', 'cpu', 'cpufreq');
  for (const [policy, khz] of Object.entries(POLICIES)) {
    const p = path.join(cpufreq, policy);
    mkdirSync(p, { recursive: true });
    writeFileSync(path.join(p, 'scaling_max_freq'), `${khz}\n`);
    writeFileSync(path.join(p, 'cpuinfo_min_freq'), `${CPU_MIN_KHZ}\n`);
    writeFileSync(path.join(p, 'cpuinfo_max_freq'), `${CPU_MAX_KHZ}\n`);
  }
  const node: FakeNode = {
    dir,
    helper: path.join(bin, 'erg-power-helper'),
    conf: path.join(bin, 'power-helper.conf'),
    gpuState,
    stateDir: path.join(dir, 'state'),
    recordDir: path.join(dir, 'records'),
    cpufreq,
    // The fake's own variable: the helper neither reads nor sets it.
    env: { PATH: process.env.PATH, ERG_FAKE_GPU_STATE: gpuState },
  };
  writeConf(node, options.conf ?? {});
  nodes.push(node);
  return node;
}

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const node of nodes.splice(0)) rmSync(node.dir, { recursive: true, force: true });
});

/** A fake GPU's file (trimmed), or null when it is absent. */
function gpu(node: FakeNode, index: number, file: string): string | null {
  const p = path.join(node.gpuState, `gpu${index}`, file);
  return existsSync(p) ? readFileSync(p, 'utf8').trim() : null;
}
function setGpu(node: FakeNode, index: number, file: string, value: string): void {
  writeFileSync(path.join(node.gpuState, `gpu${index}`, file), `${value}\n`);
}
function calls(node: FakeNode): string[] {
  return readFileSync(path.join(node.gpuState, 'calls.log'), 'utf8').split('\n').filter((l) => l !== '');
}
function cpuMax(node: FakeNode, policy: string): number {
  return Number(readFileSync(path.join(node.cpufreq, policy, 'scaling_max_freq'), 'utf8').trim());
}
function stateFiles(node: FakeNode): string[] {
  return existsSync(node.stateDir) ? readdirSync(node.stateDir) : [];
}
/** The fake GPUs' settings, to compare before and after. */
function snapshot(node: FakeNode): string {
  const count = Number(readFileSync(path.join(node.gpuState, 'count'), 'utf8'));
  const gpus = Array.from({ length: count }, (_, i) => ['power_limit', 'module_limit', 'locked_clocks'].map((f) => `${f}=${gpu(node, i, f)}`).join(' '));
  const cpus = Object.keys(POLICIES).map((p) => `${p}=${cpuMax(node, p)}`);
  return [...gpus, ...cpus].join('\n');
}

interface Result {
  status: number | null;
  stdout: string;
  stderr: string;
  record: PowerRecord | null;
}

function run(node: FakeNode, args: string[], env: NodeJS.ProcessEnv = {}): Result {
  const r = spawnSync(node.helper, args, { env: { ...node.env, ...env }, encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, record: parsePowerRecord(r.stdout.split('\n')[0] ?? '') };
}

/** A running hold: its process, its first line (the record) once printed, and its exit. */
interface Hold {
  child: ChildProcess;
  line: string;
  record: PowerRecord;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

async function startHold(node: FakeNode, job: string, state: PowerState, env: NodeJS.ProcessEnv = {}, options: { direct?: boolean } = {}): Promise<Hold> {
  // The way job.sh starts it (powerStartLines): through bash, by exec, with the spec's options;
  // `direct` starts the helper itself (when the environment under test would subvert that bash).
  const args = ['hold', '--job', job, ...powerHelperArgs(state)];
  const [command, argv] = options.direct ? [node.helper, args] : ['bash', ['-c', 'exec "$0" hold --job "$SLURM_JOB_ID" "$@"', node.helper, ...powerHelperArgs(state)]];
  const child = spawn(command, argv, {
    env: { ...node.env, SLURM_JOB_ID: job, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const line = await waitFor(() => (out.includes('\n') ? out.split('\n')[0] : child.exitCode !== null ? `exited ${child.exitCode}: ${err}` : undefined), {
    timeoutMs: 20_000,
    what: 'the hold to print its record',
  });
  const record = parsePowerRecord(line!);
  if (!record) throw new Error(`not a record: ${line} (stderr: ${err})`);
  return { child, line: line!, record, exit };
}

async function exitWithin<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms)));
  try {
    return await Promise.race([p, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

describe('probe', () => {
  const itAsRoot = isRoot ? it : it.skip;

  itAsRoot('prints the helper, its version and the knobs the config allows (all four by default)', () => {
    const node = makeNode();
    const r = run(node, ['probe']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`{"helper":"erg-power-helper","version":1,"knobs":${JSON.stringify(POWER_KNOBS)}}\n`);
  });

  itAsRoot('works on a node without GPUs: it never runs nvidia-smi', () => {
    const node = makeNode({ conf: { NVIDIA_SMI: '/nonexistent/nvidia-smi' } });
    const r = run(node, ['probe']);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).knobs).toEqual([...POWER_KNOBS]);
    expect(calls(node)).toEqual([]);
  });

  itAsRoot('lists only the knobs ALLOW names, in POWER_KNOBS order', () => {
    const node = makeNode({ conf: { ALLOW: 'cpuFreqKHz, gpuPowerLimitW' } });
    expect(JSON.parse(run(node, ['probe']).stdout).knobs).toEqual(['gpuPowerLimitW', 'cpuFreqKHz']);
    writeConf(node, { ALLOW: '' });
    expect(JSON.parse(run(node, ['probe']).stdout).knobs).toEqual([]);
  });
});

describeAsRoot('hold', () => {
  it('applies every knob, prints one PowerRecord with previous and read-back applied values, and keeps them until signalled', async () => {
    const node = makeNode();
    const hold = await startHold(node, '1001', { gpuPowerLimitW: 300, gpuLockedClocksMHz: [1000, 1500], moduleLimitW: 800, cpuFreqKHz: 2_000_000 });
    expect(hold.line.startsWith('{"ergPower":1,"ok":true,')).toBe(true);
    expect(Object.keys(JSON.parse(hold.line))).toEqual(['ergPower', 'ok', 'node', 'job', 'requested', 'previous', 'applied', 'error']);
    expect(hold.record).toEqual({
      ergPower: 1,
      ok: true,
      node: os.hostname(),
      job: '1001',
      requested: { gpuPowerLimitW: 300, gpuLockedClocksMHz: [1000, 1500], moduleLimitW: 800, cpuFreqKHz: 2_000_000 },
      previous: {
        gpus: [0, 1].map((index) => ({ index, powerLimitW: 900, moduleLimitW: 1000, lockedClocksMHz: null })),
        cpuMaxFreqKHz: 2_900_000,
      },
      applied: {
        gpus: [0, 1].map((index) => ({ index, powerLimitW: 300, moduleLimitW: 800, lockedClocksMHz: [1000, 1500] })),
        cpuMaxFreqKHz: 2_000_000,
      },
      error: null,
    });
    for (const i of [0, 1]) {
      expect([gpu(node, i, 'power_limit'), gpu(node, i, 'module_limit'), gpu(node, i, 'locked_clocks')]).toEqual(['300', '800', '1000,1500']);
    }
    for (const p of Object.keys(POLICIES)) expect(cpuMax(node, p)).toBe(2_000_000);
    expect(stateFiles(node)).toEqual([`1001.${os.hostname()}.state`]);
    expect(statSync(path.join(node.stateDir, stateFiles(node)[0]!)).mode & 0o777).toBe(0o600);
    expect(statSync(node.stateDir).mode & 0o777).toBe(0o700);
    // Still holding a moment later.
    expect(hold.child.exitCode).toBeNull();
    hold.child.kill('SIGUSR2');
    expect(await exitWithin(hold.exit, 10_000, 'the hold to exit')).toEqual({ code: 0, signal: null });
  });

  it('includes per GPU only the fields of the requested knobs', async () => {
    const node = makeNode({ profile: 'h100', gpus: 2 });
    const hold = await startHold(node, '1002', { gpuPowerLimitW: 450 });
    expect(hold.record.requested).toEqual({ gpuPowerLimitW: 450 });
    expect(hold.record.previous).toEqual({ gpus: [{ index: 0, powerLimitW: 700 }, { index: 1, powerLimitW: 700 }] });
    expect(hold.record.applied).toEqual({ gpus: [{ index: 0, powerLimitW: 450 }, { index: 1, powerLimitW: 450 }] });
    hold.child.kill('SIGUSR2');
    await exitWithin(hold.exit, 10_000, 'the hold to exit');
  });

  it.each([
    ['SIGUSR2', 'SIGUSR2'],
    ['SIGTERM', 'SIGTERM'],
    ['SIGHUP', 'SIGHUP'],
  ] as const)('restores the previous state and removes its state file on %s, then exits 0', async (_name, signal) => {
    const node = makeNode();
    const before = snapshot(node);
    const hold = await startHold(node, '1003', { gpuPowerLimitW: 250, gpuLockedClocksMHz: [900, 900], moduleLimitW: 600, cpuFreqKHz: 1_500_000 });
    expect(snapshot(node)).not.toBe(before);
    hold.child.kill(signal);
    expect(await exitWithin(hold.exit, 10_000, 'the hold to exit')).toEqual({ code: 0, signal: null });
    expect(snapshot(node)).toBe(before);
    expect(stateFiles(node)).toEqual([]);
    expect(calls(node)).toEqual(expect.arrayContaining(['-i 0 -rgc', '-i 1 -rgc', '-i 0 -pl 900.00', '-i 0 -pl 1000.00 --scope 1']));
  });

  it('restores when its parent dies (job.sh killed) without any signal to the helper', async () => {
    const node = makeNode();
    const before = snapshot(node);
    const rec = path.join(node.dir, 'record.json');
    const parent = spawn('bash', ['-c', '"$0" hold --job 1004 --gpu-power-limit-w 300 --cpu-freq-khz 1000000 >"$1" & wait', node.helper, rec], {
      env: node.env,
      stdio: 'ignore',
    });
    children.push(parent);
    await waitFor(() => existsSync(rec) && readFileSync(rec, 'utf8').includes('\n'), { timeoutMs: 20_000, what: 'the record' });
    expect(readFileSync(rec, 'utf8')).toMatch(/^\{"ergPower":1,"ok":true,/);
    expect(gpu(node, 0, 'power_limit')).toBe('300');
    parent.kill('SIGKILL');
    await waitFor(() => snapshot(node) === before && stateFiles(node).length === 0, { timeoutMs: 15_000, what: 'the orphaned hold to restore' });
  });

  it('refuses values outside the device range, naming the range, and changes nothing', () => {
    const node = makeNode({ profile: 'h100' });
    const before = snapshot(node);
    const cases: [string[], string][] = [
      [['--gpu-power-limit-w', '5000'], "gpuPowerLimitW 5000 W is outside GPU 0's range 200–700 W (nvidia-smi power.min_limit/power.max_limit)"],
      [['--gpu-power-limit-w', '199'], "gpuPowerLimitW 199 W is outside GPU 0's range 200–700 W"],
      [['--gpu-locked-clocks-mhz', '100,1500'], "gpuLockedClocksMHz 100,1500 MHz is outside GPU 0's supported graphics clocks 345–1980 MHz"],
      [['--gpu-locked-clocks-mhz', '1500,1000'], 'the minimum is above the maximum'],
      [['--cpu-freq-khz', '4000000'], "cpuFreqKHz 4000000 kHz is outside policy0's range 800000–3500000 kHz"],
    ];
    for (const [args, error] of cases) {
      const r = run(node, ['hold', '--job', '1005', ...args]);
      expect({ args, status: r.status }).toEqual({ args, status: 2 });
      expect(r.record?.ok).toBe(false);
      expect(r.record?.applied).toBeNull();
      expect(r.record?.error).toContain(error);
    }
    const gh = makeNode();
    const r = run(gh, ['hold', '--job', '1005', '--module-limit-w', '1200']);
    expect(r.status).toBe(2);
    expect(r.record?.error).toContain("moduleLimitW 1200 W is outside GPU 0's module range 200–1000 W");
    expect(snapshot(node)).toBe(before);
    expect(calls(node).filter((c) => / -pl | -lgc /.test(c))).toEqual([]);
    expect(stateFiles(node)).toEqual([]);
  });

  it('refuses non-digit and injection-looking arguments before running anything', () => {
    const node = makeNode();
    const mark = path.join(node.dir, 'pwned');
    const bad: string[][] = [
      ['--job', '1006', '--gpu-power-limit-w', `300;touch ${mark}`],
      ['--job', '1006', '--gpu-power-limit-w', `$(touch ${mark})`],
      ['--job', '1006', '--gpu-power-limit-w', '`id`'],
      ['--job', '1006', '--gpu-locked-clocks-mhz', `1000,1500 && touch ${mark}`],
      ['--job', '1006', '--module-limit-w', '-1'],
      ['--job', '1006', '--cpu-freq-khz', '2e6'],
      ['--job', '1006', '--gpu-power-limit-w', ' 300'],
      ['--job', '1006', '--gpu-power-limit-w', '300\n'],
      ['--job', '1006', '--gpu-power-limit-w', '3"0\\0\t\u0001'],
      ['--job', `1;touch ${mark}`, '--gpu-power-limit-w', '300'],
      ['--job', '../../etc/x', '--gpu-power-limit-w', '300'],
      ['--job', '1006', '--gpu-power-limit-w=300'],
      ['--job', '1006', '--gpu-power-limit-w', '300', '--gpu-power-limit-w', '301'],
      ['--job', '1006', '--gpu-power-limit-w'],
      ['--job', '1006'],
      ['--gpu-power-limit-w', '300'],
    ];
    for (const args of bad) {
      const r = run(node, ['hold', ...args]);
      expect({ args, status: r.status }).toEqual({ args, status: 2 });
      // One valid JSON line, whatever the argument held.
      expect(r.stdout.split('\n').filter((l) => l !== '')).toHaveLength(1);
      expect(r.record).toMatchObject({ ergPower: 1, ok: false, previous: null, applied: null });
      expect(typeof r.record?.error).toBe('string');
    }
    expect(existsSync(mark)).toBe(false);
    expect(calls(node)).toEqual([]);
    expect(stateFiles(node)).toEqual([]);
  });

  it('restores what it had changed when applying fails midway, and reports ok:false', () => {
    const node = makeNode();
    const before = snapshot(node);
    // FIXTURE: an nvidia-smi that refuses to lock GPU 1's clocks, after GPU 0's succeeded.
    const flaky = path.join(node.dir, 'bin', 'flaky-nvidia-smi');
    writeFileSync(
      flaky,
      `#!/bin/bash\ncase " $* " in *" -i 1 -lgc "*) echo "Setting locked GPU clocks is not supported for GPU 00000009:02:00.0." >&2; exit 3 ;; esac\nexec "${path.join(node.dir, 'bin', 'fake-nvidia-smi')}" "$@"\n`,
      { mode: 0o755 },
    );
    writeConf(node, { NVIDIA_SMI: flaky });
    const r = run(node, ['hold', '--job', '1007', '--gpu-power-limit-w', '300', '--gpu-locked-clocks-mhz', '1000,1500', '--cpu-freq-khz', '2000000']);
    expect(r.status).toBe(4);
    expect(r.record).toMatchObject({ ok: false, applied: null, previous: { gpus: [{ index: 0, powerLimitW: 900 }, { index: 1, powerLimitW: 900 }] } });
    expect(r.record?.error).toContain('nvidia-smi -i 1 -lgc 1000,1500 failed: Setting locked GPU clocks is not supported');
    expect(snapshot(node)).toBe(before);
    const log = calls(node);
    expect(log).toEqual(expect.arrayContaining(['-i 0 -lgc 1000,1500', '-i 0 -rgc', '-i 0 -pl 900.00', '-i 1 -pl 900.00']));
    // The CPU knob came after the failure: never touched.
    expect(stateFiles(node)).toEqual([]);
  });

  it('refuses a module limit on a GPU without one (h100) before changing anything, exit 3', () => {
    const node = makeNode({ profile: 'h100' });
    const before = snapshot(node);
    const r = run(node, ['hold', '--job', '1008', '--gpu-power-limit-w', '300', '--module-limit-w', '500']);
    expect(r.status).toBe(3);
    expect(r.record).toMatchObject({ ok: false, requested: { gpuPowerLimitW: 300, moduleLimitW: 500 }, applied: null });
    expect(r.record?.error).toContain('moduleLimitW: GPU 0 has no module power limit (nvidia-smi module.power.limit: [N/A])');
    expect(snapshot(node)).toBe(before);
    expect(calls(node).filter((c) => c.includes(' -pl '))).toEqual([]);
  });

  it('reports the enforced limit it reads back, not the one it asked for, when an out-of-band cap is lower', async () => {
    const node = makeNode();
    setGpu(node, 0, 'enforce_cap', '250'); // FIXTURE: a site cap on GPU 0
    const hold = await startHold(node, '1009', { gpuPowerLimitW: 300 });
    expect(hold.record.ok).toBe(true);
    expect(hold.record.requested).toEqual({ gpuPowerLimitW: 300 });
    expect(hold.record.applied?.gpus).toEqual([
      { index: 0, powerLimitW: 250 },
      { index: 1, powerLimitW: 300 },
    ]);
    hold.child.kill('SIGUSR2');
    await exitWithin(hold.exit, 10_000, 'the hold to exit');
    expect(gpu(node, 0, 'power_limit')).toBe('900');
  });

  it('refuses knobs the config does not ALLOW, exit 3, before touching the device', () => {
    const node = makeNode({ conf: { ALLOW: 'gpuPowerLimitW' } });
    const r = run(node, ['hold', '--job', '1010', '--gpu-power-limit-w', '300', '--cpu-freq-khz', '2000000']);
    expect(r.status).toBe(3);
    expect(r.record?.error).toBe(`cpuFreqKHz is not allowed on this node (ALLOW in ${node.conf} allows: gpuPowerLimitW)`);
    expect(calls(node)).toEqual([]);
    expect(cpuMax(node, 'policy0')).toBe(POLICIES.policy0);
  });

  it('sets every cpufreq policy of a fixture sysfs tree and writes each one its own previous value back', async () => {
    const node = makeNode();
    const hold = await startHold(node, '1011', { cpuFreqKHz: 1_800_000 });
    expect(hold.record.previous).toEqual({ gpus: [], cpuMaxFreqKHz: 2_900_000 });
    expect(hold.record.applied).toEqual({ gpus: [], cpuMaxFreqKHz: 1_800_000 });
    for (const p of Object.keys(POLICIES)) expect(cpuMax(node, p)).toBe(1_800_000);
    expect(calls(node)).toEqual([]); // a CPU-only request needs no nvidia-smi
    hold.child.kill('SIGTERM');
    await exitWithin(hold.exit, 10_000, 'the hold to exit');
    for (const [p, khz] of Object.entries(POLICIES)) expect(cpuMax(node, p)).toBe(khz);
  });

  it('refuses to hold a node another live hold owns, and restores what a dead one left before reading "previous"', async () => {
    const node = makeNode();
    const first = await startHold(node, '1012', { gpuPowerLimitW: 300 });
    const refused = run(node, ['hold', '--job', '1013', '--gpu-power-limit-w', '400']);
    expect(refused.status).toBe(4);
    expect(refused.record?.error).toContain('another hold owns this node');
    expect(gpu(node, 0, 'power_limit')).toBe('300');
    first.child.kill('SIGKILL');
    await exitWithin(first.exit, 10_000, 'the killed hold');
    const second = await startHold(node, '1013', { gpuPowerLimitW: 400 });
    expect(second.record.previous?.gpus[0]).toEqual({ index: 0, powerLimitW: 900 });
    expect(stateFiles(node)).toEqual([`1013.${os.hostname()}.state`]);
    second.child.kill('SIGUSR2');
    await exitWithin(second.exit, 10_000, 'the hold to exit');
    expect(gpu(node, 0, 'power_limit')).toBe('900');
  });
});

describeAsRoot('restore (the Slurm epilog backstop)', () => {
  it('restores from the state file a SIGKILLed hold left, removes it, and is a no-op after that', async () => {
    const node = makeNode();
    const before = snapshot(node);
    const hold = await startHold(node, '2001', { gpuPowerLimitW: 300, gpuLockedClocksMHz: [1200, 1200], moduleLimitW: 700, cpuFreqKHz: 2_000_000 });
    hold.child.kill('SIGKILL');
    await exitWithin(hold.exit, 10_000, 'the killed hold');
    expect(gpu(node, 1, 'power_limit')).toBe('300');
    expect(stateFiles(node)).toEqual([`2001.${os.hostname()}.state`]);

    // The epilog as slurmd runs it (the helper's path is the test's argument).
    const epilog = spawnSync(path.join(source, 'slurm-epilog.sh'), [node.helper], { env: { ...node.env, SLURM_JOB_ID: '2001' }, encoding: 'utf8' });
    expect(epilog.status).toBe(0);
    expect(snapshot(node)).toBe(before);
    expect(stateFiles(node)).toEqual([]);

    const count = calls(node).length;
    const again = run(node, ['restore', '--job', '2001']);
    expect(again.status).toBe(0);
    expect(again.stdout).toBe('');
    expect(calls(node)).toHaveLength(count);
    expect(snapshot(node)).toBe(before);
  });

  it('exits 0 for a job that left nothing (every other job the epilog sees), and 2 for a bad job id', () => {
    const node = makeNode();
    expect(run(node, ['restore', '--job', '999']).status).toBe(0);
    expect(run(node, ['restore', '--job', '1;id']).status).toBe(2);
    expect(run(node, ['restore']).status).toBe(2);
    expect(calls(node)).toEqual([]);
  });

  it('keeps the state file and exits 4 when restoring fails, so the next restore can retry', async () => {
    const node = makeNode();
    const hold = await startHold(node, '2002', { gpuPowerLimitW: 300 });
    hold.child.kill('SIGKILL');
    await exitWithin(hold.exit, 10_000, 'the killed hold');
    const real = path.join(node.dir, 'bin', 'fake-nvidia-smi');
    const broken = path.join(node.dir, 'bin', 'broken-nvidia-smi');
    writeFileSync(broken, '#!/bin/bash\necho "Unable to determine the device handle for GPU0000:01:00.0: Unknown Error" >&2\nexit 255\n', { mode: 0o755 });
    writeConf(node, { NVIDIA_SMI: broken });
    expect(run(node, ['restore', '--job', '2002']).status).toBe(4);
    expect(stateFiles(node)).toEqual([`2002.${os.hostname()}.state`]);
    writeConf(node, { NVIDIA_SMI: real });
    expect(run(node, ['restore', '--job', '2002']).status).toBe(0);
    expect(gpu(node, 0, 'power_limit')).toBe('900');
    expect(stateFiles(node)).toEqual([]);
  });
});

describeAsRoot('configuration and environment', () => {
  it('reads the config beside the script, and refuses one that is not root-owned or is writable by others', () => {
    const node = makeNode({ conf: { ALLOW: 'moduleLimitW' } });
    expect(JSON.parse(run(node, ['probe']).stdout).knobs).toEqual(['moduleLimitW']);
    chmodSync(node.conf, 0o666);
    let r = run(node, ['probe']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('must be owned by root and writable by root alone');
    chmodSync(node.conf, 0o644);
    chownSync(node.conf, 65534, 65534);
    r = run(node, ['probe']);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    const hold = run(node, ['hold', '--job', '3001', '--gpu-power-limit-w', '300']);
    expect(hold.status).toBe(1);
    expect(hold.record?.error).toContain('refusing the config');
    expect(calls(node)).toEqual([]);
  });

  it('refuses unknown keys and malformed lines instead of guessing', () => {
    const node = makeNode({ conf: { NVIDA_SMI: '/usr/bin/nvidia-smi' } });
    expect(run(node, ['probe']).stderr).toContain('unknown key NVIDA_SMI');
    writeConf(node, { ALLOW: 'gpuPowerLimitW,everything' });
    expect(run(node, ['probe']).stderr).toContain('ALLOW names an unknown knob "everything"');
  });

  it('cannot be redirected by the caller environment: NVIDIA_SMI, STATE_DIR, PATH, BASH_ENV, exported functions', async () => {
    const node = makeNode();
    const mark = path.join(node.dir, 'pwned');
    const evilBin = path.join(node.dir, 'evil');
    mkdirSync(evilBin);
    const evil = `#!/bin/bash\ntouch ${mark}\nexit 0\n`;
    for (const name of ['nvidia-smi', 'evil-smi', 'hostname', 'timeout', 'mv', 'sleep']) writeFileSync(path.join(evilBin, name), evil, { mode: 0o755 });
    writeFileSync(path.join(evilBin, 'env.sh'), `touch ${mark}\n`);
    const env = {
      NVIDIA_SMI: path.join(evilBin, 'evil-smi'),
      STATE_DIR: path.join(node.dir, 'evil-state'),
      SYSFS_ROOT: path.join(node.dir, 'evil-sys'),
      ALLOW: '',
      PATH: `${evilBin}:${process.env.PATH}`,
      BASH_ENV: path.join(evilBin, 'env.sh'),
      ENV: path.join(evilBin, 'env.sh'),
      'BASH_FUNC_smi%%': `() { touch ${mark}; }`,
      'BASH_FUNC_hostname%%': `() { touch ${mark}; echo evil; }`,
    };
    const hold = await startHold(node, '3002', { gpuPowerLimitW: 300, cpuFreqKHz: 2_000_000 }, env, { direct: true });
    expect(hold.record.ok).toBe(true);
    expect(hold.record.node).toBe(os.hostname());
    expect(gpu(node, 0, 'power_limit')).toBe('300'); // the configured fake ran
    expect(stateFiles(node)).toHaveLength(1);
    expect(existsSync(path.join(node.dir, 'evil-state'))).toBe(false);
    hold.child.kill('SIGUSR2');
    await exitWithin(hold.exit, 10_000, 'the hold to exit');
    expect(existsSync(mark)).toBe(false);

    // With no NVIDIA_SMI configured it looks on its own PATH only: the caller's nvidia-smi never runs.
    writeConf(node, { NVIDIA_SMI: '<unset>' });
    const r = run(node, ['hold', '--job', '3003', '--gpu-power-limit-w', '300'], env);
    expect(existsSync(mark)).toBe(false);
    const systemSmi = spawnSync('bash', ['-c', 'PATH=/usr/bin:/usr/sbin:/bin:/sbin command -v nvidia-smi']).status === 0;
    if (!systemSmi) {
      expect(r.status).toBe(3);
      expect(r.record?.error).toContain('GPU knobs need nvidia-smi, and there is none here');
    }
  });
});

describeAsRoot('the Slurm prolog variant', () => {
  function stageRequest(node: FakeNode, job: string, lines: string): { scontrol: string; env: NodeJS.ProcessEnv } {
    const workDir = path.join(node.dir, 'run');
    mkdirSync(workDir, { recursive: true });
    writeFileSync(path.join(workDir, 'erg.power-request'), lines);
    // FIXTURE: scontrol answering `show job` with the run directory as WorkDir.
    const scontrol = path.join(node.dir, 'bin', 'scontrol');
    writeFileSync(scontrol, `#!/bin/bash\necho "JobId=${job} JobName=erg"\necho "   WorkDir=${workDir}"\n`, { mode: 0o755 });
    return { scontrol, env: { ...node.env, SLURM_JOB_ID: job, SLURM_JOB_UID: '0' } };
  }

  it('applies the staged request, the job step prints its record and stays, and the epilog restores', async () => {
    const node = makeNode();
    const before = snapshot(node);
    const state: PowerState = { gpuPowerLimitW: 350, cpuFreqKHz: 2_200_000 };
    const args = powerHelperArgs(state);
    const lines = args.reduce<string[]>((acc, a, i) => (i % 2 === 0 ? [...acc, `${a} ${args[i + 1]}`] : acc), []).join('\n');
    const { scontrol, env } = stageRequest(node, '4001', `${lines}\n`);
    const prolog = spawnSync(path.join(source, 'slurm-prolog.sh'), [node.helper, scontrol], { env, encoding: 'utf8' });
    expect(prolog.status).toBe(0);
    expect(gpu(node, 0, 'power_limit')).toBe('350');
    const recordFile = path.join(node.recordDir, `4001.${os.hostname()}.record`);
    expect(statSync(recordFile).mode & 0o777).toBe(0o644);

    const hold = await startHold(node, '4001', state);
    expect(hold.line).toBe(readFileSync(recordFile, 'utf8').trim());
    expect(hold.record.applied).toEqual({ gpus: [{ index: 0, powerLimitW: 350 }, { index: 1, powerLimitW: 350 }], cpuMaxFreqKHz: 2_200_000 });
    hold.child.kill('SIGUSR2');
    expect((await exitWithin(hold.exit, 10_000, 'the step to exit')).code).toBe(0);
    expect(gpu(node, 0, 'power_limit')).toBe('350'); // the epilog's to restore

    const mismatch = run(node, ['hold', '--job', '4001', '--gpu-power-limit-w', '300']);
    expect(mismatch.status).toBe(4);
    expect(mismatch.record?.error).toContain('the Slurm prolog applied {"gpuPowerLimitW":350,"cpuFreqKHz":2200000} for job 4001');

    const epilog = spawnSync(path.join(source, 'slurm-epilog.sh'), [node.helper], { env, encoding: 'utf8' });
    expect(epilog.status).toBe(0);
    expect(snapshot(node)).toBe(before);
    expect(existsSync(recordFile)).toBe(false);
    expect(stateFiles(node)).toEqual([]);
  });

  it('applies nothing and still exits 0 for a request that is not numbers only', () => {
    const node = makeNode();
    const before = snapshot(node);
    const { scontrol, env } = stageRequest(node, '4002', '--gpu-power-limit-w 300;reboot\n');
    const prolog = spawnSync(path.join(source, 'slurm-prolog.sh'), [node.helper, scontrol], { env, encoding: 'utf8' });
    expect(prolog.status).toBe(0);
    expect(snapshot(node)).toBe(before);
    expect(calls(node)).toEqual([]);
    expect(existsSync(node.recordDir)).toBe(false);
  });
});

describeAsRoot('install.sh', () => {
  it('installs helper, config and state dir with their modes, keeps an edited config, and --dry-run changes nothing', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'erg-power-install-'));
    try {
      const dry = spawnSync(path.join(source, 'install.sh'), ['--prefix', path.join(dir, 'dry'), '--dry-run'], { encoding: 'utf8' });
      expect(dry.status).toBe(0);
      expect(dry.stdout).toContain('usr/local/sbin/erg-power-helper');
      expect(existsSync(path.join(dir, 'dry'))).toBe(false);

      const root = path.join(dir, 'root');
      const install = () => spawnSync(path.join(source, 'install.sh'), ['--prefix', root], { encoding: 'utf8' });
      expect(install().status).toBe(0);
      const mode = (p: string) => {
        const s = statSync(path.join(root, p));
        return { mode: (s.mode & 0o777).toString(8), uid: s.uid };
      };
      expect(mode('usr/local/sbin/erg-power-helper')).toEqual({ mode: '755', uid: 0 });
      expect(mode('etc/erg/power-helper.conf')).toEqual({ mode: '644', uid: 0 });
      expect(mode('var/lib/erg-power')).toEqual({ mode: '700', uid: 0 });
      expect(readFileSync(path.join(root, 'usr/local/sbin/erg-power-helper'), 'utf8')).toBe(readFileSync(path.join(source, 'erg-power-helper'), 'utf8'));

      writeFileSync(path.join(root, 'etc/erg/power-helper.conf'), 'ALLOW=cpuFreqKHz\n');
      const again = install();
      expect(again.status).toBe(0);
      expect(again.stdout).toContain('keeping');
      expect(readFileSync(path.join(root, 'etc/erg/power-helper.conf'), 'utf8')).toBe('ALLOW=cpuFreqKHz\n');
      expect(readdirSync(path.join(root, 'usr/local/sbin'))).toEqual(['erg-power-helper']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('ships a config example that parses to the defaults', () => {
    const node = makeNode();
    copyFileSync(path.join(source, 'power-helper.conf.example'), node.conf);
    chmodSync(node.conf, 0o644);
    const r = run(node, ['probe']);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).knobs).toEqual([...POWER_KNOBS]);
  });
});

describe('sudoers.example', () => {
  const text = readFileSync(path.join(source, 'sudoers.example'), 'utf8');

  it('grants exactly hold, restore and probe, without a password, with a reset environment', () => {
    const commands = /Cmnd_Alias ERG_POWER = ((?:[^\n]*\\\n)*[^\n]*)/.exec(text)?.[1]?.replace(/\\\n\s*/g, ' ');
    expect(commands?.split(/,\s*/)).toEqual([
      '/usr/local/sbin/erg-power-helper hold *',
      '/usr/local/sbin/erg-power-helper restore *',
      '/usr/local/sbin/erg-power-helper probe',
    ]);
    expect(text).toMatch(/^Defaults!ERG_POWER env_reset, !env_keep, !setenv/m);
    expect(text).toMatch(/^%erg-users ALL = \(root\) NOPASSWD: ERG_POWER$/m);
    expect(text).not.toMatch(/SETENV|env_keep\s*\+?=/);
  });

  (hasCommand('visudo') ? it : it.skip)('passes visudo -c', () => {
    const r = spawnSync('visudo', ['-c', '-f', path.join(source, 'sudoers.example')], { encoding: 'utf8' });
    expect(r.stdout + r.stderr).toContain('parsed OK');
    expect(r.status).toBe(0);
  });
});

(hasCommand('shellcheck') ? describe : describe.skip)('shellcheck', () => {
  it('finds nothing in the helper, its scripts and fixtures', () => {
    const files = ['erg-power-helper', 'install.sh', 'slurm-prolog.sh', 'slurm-epilog.sh', 'test/fake-nvidia-smi', 'test/fake-gpu-state'].map((f) => path.join(source, f));
    const r = spawnSync('shellcheck', files, { encoding: 'utf8' });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});
