import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  describePowerFailure, expandPower, parsePowerRecord, powerHelperArgs, powerRequestText, powerStartLines, powerStopLines, powerSupport, POWER_NOT_APPLIED_EXIT_CODE,
  RUN_DIR_FILES, type PowerBlock,
} from '../src';
import { issueAt, issuesOf, minimal, specOf } from './helpers';

describe('the power block', () => {
  test('takes whole numbers and {{parameter}} templates, and locked clocks as [min, max] or one value', () => {
    const spec = specOf({ ...minimal, parameters: { cap: [300, 450], lo: [1200] }, power: { gpuPowerLimitW: '{{cap}}', gpuLockedClocksMHz: ['{{lo}}', 1980], moduleLimitW: 900, cpuFreqKHz: 2_400_000 } });
    expect(spec.power).toEqual({ gpuPowerLimitW: '{{cap}}', gpuLockedClocksMHz: ['{{lo}}', 1980], moduleLimitW: 900, cpuFreqKHz: 2_400_000 });
    expect(specOf({ ...minimal, power: { gpuLockedClocksMHz: 1410 } }).power).toEqual({ gpuLockedClocksMHz: 1410 });
  });

  test('refuses what is not a whole number in range, an empty block, unknown knobs and unknown placeholders, each at its path', () => {
    expect(issueAt(issuesOf({ ...minimal, power: { gpuPowerLimitW: 300.5 } }), 'power.gpuPowerLimitW').message).toBe('300.5 is not a whole number of W');
    expect(issueAt(issuesOf({ ...minimal, power: { gpuPowerLimitW: 50_000 } }), 'power.gpuPowerLimitW').message).toBe('50000 W is outside 1–10000 W');
    expect(issueAt(issuesOf({ ...minimal, power: { gpuPowerLimitW: '300; reboot' } }), 'power.gpuPowerLimitW').message).toContain('is not a whole number of W or a {{parameter}} template');
    expect(issueAt(issuesOf({ ...minimal, power: {} }), 'power').message).toContain('name at least one of');
    expect(issueAt(issuesOf({ ...minimal, power: { gpuVoltage: 1 } }), 'power.gpuVoltage').message).toContain('allowed: gpuPowerLimitW, gpuLockedClocksMHz, moduleLimitW, cpuFreqKHz');
    const unknown = issueAt(issuesOf({ ...minimal, parameters: { cap: [300] }, power: { gpuLockedClocksMHz: [1200, '{{hi}}'] } }), 'power.gpuLockedClocksMHz[1]');
    expect(unknown).toMatchObject({ code: 'unknown_placeholder' });
    expect(unknown.message).toContain('{{hi}}');
    // Power values are the same for every run of a configuration: built-ins make no sense there.
    expect(issueAt(issuesOf({ ...minimal, power: { gpuPowerLimitW: '{{repetition}}' } }), 'power.gpuPowerLimitW').code).toBe('unknown_placeholder');
  });
});

describe('expandPower: one configuration\'s state', () => {
  const block: PowerBlock = { gpuPowerLimitW: '{{cap}}', gpuLockedClocksMHz: ['{{lo}}', '{{hi}}'] };

  test('expands templates into numbers', () => {
    expect(expandPower(block, 'cap=300,hi=1980,lo=1200', { cap: 300, lo: 1200, hi: 1980 })).toEqual({ state: { gpuPowerLimitW: 300, gpuLockedClocksMHz: [1200, 1980] }, issues: [] });
    expect(expandPower({ gpuLockedClocksMHz: 1410 }, 'k', {}).state).toEqual({ gpuLockedClocksMHz: [1410, 1410] });
  });

  test('names the configuration and the field of a value that cannot be applied', () => {
    const { issues } = expandPower(block, 'cap=off,hi=900,lo=1200', { cap: 'off', lo: 1200, hi: 900 });
    expect(issues).toEqual([
      { path: 'power.gpuPowerLimitW', message: 'configuration cap=off,hi=900,lo=1200: "off" is not a whole number of W' },
      { path: 'power.gpuLockedClocksMHz', message: 'configuration cap=off,hi=900,lo=1200: the minimum 1200 MHz is above the maximum 900 MHz' },
    ]);
    expect(expandPower({ cpuFreqKHz: '{{f}}' }, 'f=24', { f: 24 }).issues[0]!.message).toBe('configuration f=24: 24 kHz is outside 1000–100000000 kHz');
  });
});

describe('powerSupport: whether a cluster can set a power state', () => {
  const caps = (powerHelper: { version: number; knobs: ('gpuPowerLimitW' | 'cpuFreqKHz')[] } | null) => ({
    probedAt: '2026-12-01T00:00:00Z', slurmVersion: 'slurm 22.05.8', powerHelper, powerHelperProblem: powerHelper ? null : 'no executable node helper at /usr/local/sbin/erg-power-helper',
  });
  test('unknown before the probe; refused without a helper or for a knob it does not allow; fine otherwise', () => {
    expect(powerSupport({ name: 'c', capabilities: null }, { gpuPowerLimitW: 300 })).toMatchObject({ ok: false, unknown: true });
    expect(powerSupport({ name: 'c', capabilities: caps(null) }, { gpuPowerLimitW: 300 })).toMatchObject({ ok: false, unknown: false, message: expect.stringContaining('no executable node helper') });
    expect(powerSupport({ name: 'c', capabilities: caps({ version: 1, knobs: ['gpuPowerLimitW'] }) }, { cpuFreqKHz: 2_000_000 })).toMatchObject({ ok: false, message: expect.stringContaining('does not allow cpuFreqKHz') });
    expect(powerSupport({ name: 'c', capabilities: caps({ version: 1, knobs: ['gpuPowerLimitW', 'cpuFreqKHz'] }) }, { gpuPowerLimitW: '{{cap}}' })).toEqual({ ok: true });
  });
});

describe('the job-script lines that set and restore the power state', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

  test('the helper gets numbers only, and erg.power-request lists them one option per line', () => {
    expect(powerHelperArgs({ gpuPowerLimitW: 300, gpuLockedClocksMHz: [1200, 1980], cpuFreqKHz: 2_400_000 })).toEqual([
      '--gpu-power-limit-w', '300', '--gpu-locked-clocks-mhz', '1200,1980', '--cpu-freq-khz', '2400000',
    ]);
    expect(powerRequestText({ moduleLimitW: 900, gpuPowerLimitW: 300 })).toBe('--gpu-power-limit-w 300\n--module-limit-w 900\n');
    expect(() => powerHelperArgs({ gpuPowerLimitW: '300; reboot' as unknown as number })).toThrow(RangeError);
  });

  /**
   * Runs the start lines, the workload's stand-in and the stop lines with bash, as job.sh does,
   * with a fake `srun` (runs its command once, as the one node) and a fake helper that prints the
   * record it is told to and logs how it was called and signalled.
   */
  function runJob(helperRecord: string): { status: number | null; dir: string; log: string } {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'erg-power-lines-'));
    dirs.push(dir);
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin);
    // srun [options…] command…: drop the options, run the rest.
    fs.writeFileSync(path.join(bin, 'srun'), '#!/bin/bash\nwhile [[ "$1" == --* ]]; do shift; done\nexec "$@"\n', { mode: 0o755 });
    fs.writeFileSync(path.join(bin, 'hostname'), '#!/bin/sh\necho node1\n', { mode: 0o755 });
    const helper = path.join(dir, 'helper');
    fs.writeFileSync(
      helper,
      `#!/bin/bash\necho "called: $*" >>"${dir}/helper.log"\ntrap 'echo restored >>"${dir}/helper.log"; exit 0' USR2 TERM\necho '${helperRecord}'\n` +
        `case '${helperRecord}' in *'"ok":false'*) exit 2 ;; esac\nwhile :; do sleep 0.05; done\n`,
      { mode: 0o755 },
    );
    const script = [
      'export ERG_RUN_DIR="$PWD" SLURM_JOB_ID=42 SLURM_JOB_NUM_NODES=1',
      powerStartLines(`'${helper}'`, { gpuPowerLimitW: 300 }),
      `echo workload-ran >"${dir}/workload"`,
      powerStopLines(),
    ].join('\n');
    const result = spawnSync('bash', ['-c', script], { cwd: dir, encoding: 'utf8', env: { PATH: `${bin}:${process.env.PATH}`, HOME: dir }, timeout: 30_000 });
    return { status: result.status, dir, log: fs.existsSync(path.join(dir, 'helper.log')) ? fs.readFileSync(path.join(dir, 'helper.log'), 'utf8') : '' };
  }

  test('applies on the node, lets the workload run once every record says ok, and restores after it', () => {
    const record = '{"ergPower":1,"ok":true,"node":"node1","job":"42","requested":{"gpuPowerLimitW":300},"previous":null,"applied":null,"error":null}';
    const { status, dir, log } = runJob(record);
    expect(status).toBe(0);
    expect(log).toBe('called: hold --job 42 --gpu-power-limit-w 300\nrestored\n');
    expect(fs.existsSync(path.join(dir, 'workload'))).toBe(true);
    expect(parsePowerRecord(fs.readFileSync(path.join(dir, 'telemetry', 'node1.power.json'), 'utf8').trim())).toMatchObject({ ok: true, node: 'node1' });
  });

  test('a refusal stops the job before the workload, with the failing record in erg.power-failed', () => {
    const record = '{"ergPower":1,"ok":false,"node":"node1","job":"42","requested":{"gpuPowerLimitW":300},"previous":null,"applied":null,"error":"gpuPowerLimitW 300 W is outside GPU 0\'s range 400–700 W"}';
    const { status, dir } = runJob(record.replace("'", ''));
    expect(status).toBe(POWER_NOT_APPLIED_EXIT_CODE);
    expect(fs.existsSync(path.join(dir, 'workload'))).toBe(false);
    const failed = fs.readFileSync(path.join(dir, RUN_DIR_FILES.powerFailed), 'utf8');
    expect(describePowerFailure(failed)).toBe(
      'the power state could not be applied, so the workload did not run — node1: gpuPowerLimitW 300 W is outside GPU 0s range 400–700 W; records from 1 of 1 node(s)',
    );
  });
});
