// The run directory's owner: its names, the job-script lines that write erg's files and the
// readers of those files, each writer checked against its reader by running it with bash.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  ackedText, agentStartLines, agentStopLines, COOLDOWN_WAIT_SLACK_S, cooldownPlanFile, cooldownWaitLines, idleBaselineLines, parseCooled, MAX_SPOOL_LINE_BYTES, NODE_FILE_SUFFIXES, nodeTelemetryFiles, parseAcked, parseIdleWindow,
  parseTiming, readSpool, RUN_DIR_FILES, runDirPath, runTokenFile, spoolLineHead, spoolLineSeq, spoolNode, TELEMETRY_DIR_FILES, TIMED_WORKLOAD_LINES,
  type SpoolLine,
} from '../src';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
function runDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'erg-run-dir-'));
  dirs.push(dir);
  return dir;
}
function bash(script: string, cwd: string) {
  // HOME elsewhere: a bash whose stdin is a socket (Node's pipes are) reads ~/.bashrc.
  return spawnSync('bash', ['-c', script], { cwd, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: cwd, LC_ALL: 'C' }, timeout: 20_000 });
}
async function collect(chunks: string[], options: { startsMidLine?: boolean; ackedSeq?: number } = {}): Promise<SpoolLine[]> {
  async function* bytes() {
    for (const c of chunks) yield Buffer.from(c);
  }
  const out: SpoolLine[] = [];
  for await (const line of readSpool(bytes(), { startsMidLine: options.startsMidLine ?? false, ackedSeq: options.ackedSeq ?? -1 })) out.push(line);
  return out;
}

describe('names', () => {
  test('the names of a run directory, which running jobs and staged agents already use, stay as they are', () => {
    expect(RUN_DIR_FILES).toEqual({
      jobScript: 'job.sh', runScript: 'run.sh', stdout: 'stdout.log', stderr: 'stderr.log', slurmOut: 'slurm.out', slurmErr: 'slurm.err',
      timing: 'erg.timing', timingTmp: 'erg.timing.tmp', idle: 'erg.idle', cooldown: 'erg.cooldown', cooled: 'erg.cooled', cooledTmp: 'erg.cooled.tmp',
      powerFailed: 'erg.power-failed', powerRequest: 'erg.power-request', runToken: 'erg.token', telemetryDir: 'telemetry',
    });
    expect(TELEMETRY_DIR_FILES).toEqual({ agentLog: 'agent.log', powerLog: 'power.log' });
    expect(nodeTelemetryFiles('gh-001')).toEqual({
      spool: 'gh-001.spool', acked: 'gh-001.acked', meta: 'gh-001.meta.json', ready: 'gh-001.ready', stats: 'gh-001.stats.json', power: 'gh-001.power.json',
      cooled: 'gh-001.cooled.json',
    });
    expect(Object.keys(NODE_FILE_SUFFIXES)).toEqual(Object.keys(nodeTelemetryFiles('n')));
  });

  test('a run directory is <workDir>/<campaign>/<run>', () => {
    expect(runDirPath('/scratch/erg', 'c1', 'r1')).toBe('/scratch/erg/c1/r1');
  });

  test('spoolNode reads the node from a spool name and nothing else', () => {
    expect(spoolNode(nodeTelemetryFiles('gh-001.cluster_a').spool)).toBe('gh-001.cluster_a');
    for (const name of ['gh-001.acked', 'gh-001.spool.tmp-12', '.spool', 'a b.spool', 'x/y.spool', TELEMETRY_DIR_FILES.agentLog]) expect(spoolNode(name)).toBeNull();
  });

  test('the run token is staged readable by its owner only, one line', () => {
    expect(runTokenFile('ergr_abc')).toEqual({ name: 'erg.token', content: 'ergr_abc\n', mode: 0o600 });
  });
});

describe('erg.timing', () => {
  test('parseTiming reads what TIMED_WORKLOAD_LINES write around run.sh, and the workload\'s output goes to the logs', () => {
    const dir = runDir();
    fs.writeFileSync(path.join(dir, RUN_DIR_FILES.runScript), 'echo out; echo err >&2; exit 3\n');
    const result = bash(TIMED_WORKLOAD_LINES.join('\n'), dir);
    expect(result.status).toBe(0);
    const timing = parseTiming(fs.readFileSync(path.join(dir, RUN_DIR_FILES.timing), 'utf8'));
    expect(timing.exitCode).toBe(3);
    expect(timing.startNs).not.toBeNull();
    expect(timing.endNs! >= timing.startNs!).toBe(true);
    expect(fs.readFileSync(path.join(dir, RUN_DIR_FILES.stdout), 'utf8')).toBe('out\n');
    expect(fs.readFileSync(path.join(dir, RUN_DIR_FILES.stderr), 'utf8')).toBe('err\n');
    expect(fs.existsSync(path.join(dir, RUN_DIR_FILES.timingTmp))).toBe(false);
  });

  test('reads what the job script writes', () => {
    expect(parseTiming('start_ns=1700000000000000000\nend_ns=1700000002500000000\nexit_code=3\n')).toEqual({
      startNs: 1700000000000000000n, endNs: 1700000002500000000n, exitCode: 3,
    });
  });

  test('a missing or partial file gives nulls, not zeros', () => {
    expect(parseTiming(null)).toEqual({ startNs: null, endNs: null, exitCode: null });
    expect(parseTiming('start_ns=5\n')).toEqual({ startNs: 5n, endNs: null, exitCode: null });
    expect(parseTiming('garbage\nstart_ns=abc')).toEqual({ startNs: null, endNs: null, exitCode: null });
  });
});

describe('erg.idle', () => {
  test('parseIdleWindow reads the window idleBaselineLines write, about the seconds asked for', () => {
    const dir = runDir();
    expect(bash(idleBaselineLines(1).join('\n'), dir).status).toBe(0);
    const { idleStartNs, idleEndNs } = parseIdleWindow(fs.readFileSync(path.join(dir, RUN_DIR_FILES.idle), 'utf8'));
    expect(Number(idleEndNs! - idleStartNs!) / 1e9).toBeGreaterThanOrEqual(0.9);
  });

  test('no baseline asked for: no lines, and no file reads as no window', () => {
    expect(idleBaselineLines(0)).toEqual([]);
    expect(parseIdleWindow(null)).toEqual({ idleStartNs: null, idleEndNs: null });
    expect(parseIdleWindow('idle_start_ns=5\n')).toEqual({ idleStartNs: 5n, idleEndNs: null });
  });
});

describe('the cooldown: erg.cooldown, each node\'s record and erg.cooled', () => {
  const record = (node: string, reached = true) => JSON.stringify({ node, waitedS: 2.5, reached, criterion: 'settled', powerW: 80, referenceW: null, maxGpuTempC: null, referenceTempC: null, gpus: [] });
  /** A run directory whose telemetry folder holds the records of `nodes`, and something that is none. */
  function withRecords(nodes: string[]): string {
    const dir = runDir();
    const folder = path.join(dir, RUN_DIR_FILES.telemetryDir);
    fs.mkdirSync(folder);
    for (const node of nodes) fs.writeFileSync(path.join(folder, nodeTelemetryFiles(node).cooled), `${record(node)}\n`);
    // An agent's record half written (its temporary name) and another node's ready file are no records.
    fs.writeFileSync(path.join(folder, `${nodeTelemetryFiles('n9').cooled}.tmp-12`), '{"node":');
    fs.writeFileSync(path.join(folder, nodeTelemetryFiles('n9').ready), '{}\n');
    return dir;
  }
  const script = (nodes: number, lines: string[]) => `export SLURM_JOB_NUM_NODES=${nodes}\nerg_telemetry="$PWD/${RUN_DIR_FILES.telemetryDir}"\n${lines.join('\n')}`;

  test('the plan is staged as erg.cooldown, readable by the job\'s agents', () => {
    expect(cooldownPlanFile('{"ergCooldown":1}\n')).toEqual({ name: 'erg.cooldown', content: '{"ergCooldown":1}\n', mode: 0o644 });
  });

  test('every node\'s record there: no wait, and erg.cooled holds the wait and the records, which parseCooled reads back', () => {
    const dir = withRecords(['n1', 'n2']);
    const result = bash(script(2, cooldownWaitLines(60)), dir);
    expect(result.status).toBe(0);
    expect(result.stderr).toBe('');
    const cooled = parseCooled(fs.readFileSync(path.join(dir, RUN_DIR_FILES.cooled), 'utf8'));
    expect(cooled.records).toEqual([JSON.parse(record('n1')), JSON.parse(record('n2'))]);
    expect(cooled.unreadable).toBe(0);
    expect(cooled.waitEndNs! >= cooled.waitStartNs!).toBe(true);
    expect(fs.existsSync(path.join(dir, RUN_DIR_FILES.cooledTmp))).toBe(false);
  });

  test('a node without its record: the job waits for it (cut short here by a timeout), however many other files there are', () => {
    const dir = withRecords(['n1', 'n2']);
    fs.writeFileSync(path.join(dir, 'wait.sh'), script(3, cooldownWaitLines(60)));
    expect(bash('timeout -s KILL 1 bash ./wait.sh; echo "status=$?"', dir).stdout).toBe('status=137\n');
    expect(fs.existsSync(path.join(dir, RUN_DIR_FILES.cooled))).toBe(false);
  });

  test('the wait is bounded by maxWaitS + the slack: at its deadline the job writes what it has, says so, and goes on', () => {
    const dir = withRecords(['n1']);
    const lines = cooldownWaitLines(60);
    // The deadline is the one line changed (60 + the slack is too long for a unit test); the rest runs as job.sh has it.
    const deadline = `erg_cool_deadline=$((SECONDS + ${60 + COOLDOWN_WAIT_SLACK_S}))`;
    expect(lines).toContain(deadline);
    const result = bash(`${script(2, lines.map((l) => (l === deadline ? 'erg_cool_deadline=$((SECONDS + 1))' : l)))}\necho went-on`, dir);
    expect(result.stdout).toBe('went-on\n');
    expect(result.stderr).toContain('erg: cooldown records from fewer than 2 node(s) after 65 s');
    const cooled = parseCooled(fs.readFileSync(path.join(dir, RUN_DIR_FILES.cooled), 'utf8'));
    expect(cooled.records).toEqual([JSON.parse(record('n1'))]);
    expect(Number(cooled.waitEndNs! - cooled.waitStartNs!) / 1e9).toBeGreaterThan(0);
  });

  test('parseCooled: nulls and no records without a file; lines that are neither the window nor a JSON object are counted, not kept', () => {
    expect(parseCooled(null)).toEqual({ waitStartNs: null, waitEndNs: null, records: [], unreadable: 0 });
    expect(parseCooled(`wait_start_ns=5\n${record('n1')}\n{"node":"n2","wai\n[1]\nnull\n`)).toEqual({
      waitStartNs: 5n, waitEndNs: null, records: [JSON.parse(record('n1'))], unreadable: 3,
    });
  });

  test('maxWaitS that is not a number of seconds never reaches job.sh', () => {
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => cooldownWaitLines(bad)).toThrow(RangeError);
    expect(cooldownWaitLines(1.2)).toContain(`erg_cool_deadline=$((SECONDS + ${2 + COOLDOWN_WAIT_SLACK_S}))`);
  });
});

describe('the agents\' lines in job.sh', () => {
  const launch = { program: "'node' '/w/.erg-agent/a.js'", options: '--interval-ms 500', idleBaselineS: 0 };

  test('start: the agents write into the telemetry folder with the run\'s token, and job.sh waits for every node\'s .ready', () => {
    const start = agentStartLines({ ...launch, gpusPerNode: 2 });
    expect(start).toContain(`erg_telemetry="$ERG_RUN_DIR/${RUN_DIR_FILES.telemetryDir}"`);
    expect(start).toContain(
      `--gpus-per-node=2 ${launch.program} --run-id "$ERG_RUN_ID" --spool-dir "$erg_telemetry" --token-file "$ERG_RUN_DIR/${RUN_DIR_FILES.runToken}" ${launch.options} >"$erg_telemetry/${TELEMETRY_DIR_FILES.agentLog}" 2>&1 &`,
    );
    expect(start).toContain("grep -c '\\.ready$'");
    expect(start).not.toContain(RUN_DIR_FILES.idle);
    expect(agentStartLines(launch)).not.toContain('--gpus-per-node');
  });

  test('one agent per node, however many ranks the workload starts there: node-level meters are never read twice', () => {
    // The agents' step is its own srun: one task on each of the job's nodes, overlapping the
    // workload's steps, whatever --ntasks-per-node the job itself asked for. Its own task count
    // too: without it the step inherits the job's (SLURM_NTASKS), and Slurm 22.05 then ignores
    // --ntasks-per-node=1 and starts an agent per task (multinode.e2e: two tasks on each of two nodes).
    const srun = agentStartLines(launch).split('\n').find((l) => l.startsWith('srun '))!;
    expect(srun).toMatch(/^srun --overlap --ntasks="\$\{SLURM_JOB_NUM_NODES:-1\}" --ntasks-per-node=1 --nodes="\$\{SLURM_JOB_NUM_NODES:-1\}" /);
  });

  test("the workload (a child of job.sh) finds ERG_MARKS_DIR at the agents' folder, erg-mark on PATH and the erg module on PYTHONPATH", () => {
    const dir = runDir();
    const tools = path.join(dir, 'marks tools'); // a space: the caller quotes it, the lines keep it one word
    const start = agentStartLines({ ...launch, markTools: `'${tools}'` });
    const marksLines = start.split('\n').filter((l) => /ERG_MARKS_DIR|PYTHONPATH|PATH=/.test(l));
    const script = [
      'erg_telemetry="$ERG_RUN_DIR/telemetry"', ...marksLines,
      'bash -c \'echo "dir=$ERG_MARKS_DIR"; echo "path=${PATH%%:*}"; echo "py=$PYTHONPATH"\'',
    ].join('\n');
    const withPy = bash(`export ERG_RUN_DIR=${dir}; export PYTHONPATH=/site\n${script}`, dir);
    expect(withPy.stdout).toBe(`dir=${dir}/telemetry\npath=${tools}/bin\npy=${tools}/python:/site\n`);
    // No PYTHONPATH before: no empty entry (which would put the current directory on it).
    expect(bash(`export ERG_RUN_DIR=${dir}\n${script}`, dir).stdout).toContain(`py=${tools}/python\n`);
    // Without writers staged, the folder is still named (a workload may write marks itself).
    expect(agentStartLines(launch)).toContain('export ERG_MARKS_DIR="$erg_telemetry"');
    expect(agentStartLines(launch)).not.toContain('PYTHONPATH');
  });

  test("the site's cap on distinct phase names reaches the workload's mark writers (ERG_MAX_PHASE_NAMES), only where the scheduler gives one", () => {
    const dir = runDir();
    const lines = agentStartLines({ ...launch, maxPhaseNames: 40 }).split('\n').filter((l) => /ERG_MAX_PHASE_NAMES|ERG_MARKS_DIR/.test(l));
    expect(bash(['erg_telemetry="$ERG_RUN_DIR/telemetry"', ...lines, 'bash -c \'echo "max=$ERG_MAX_PHASE_NAMES"\''].join('\n'), dir).stdout).toBe('max=40\n');
    expect(agentStartLines(launch)).not.toContain('ERG_MAX_PHASE_NAMES');
  });

  test('start with an idle baseline ends with its lines', () => {
    expect(agentStartLines({ ...launch, idleBaselineS: 5 }).endsWith(idleBaselineLines(5).join('\n'))).toBe(true);
  });

  test('with a cooldown: the agents read erg.cooldown, and job.sh waits for their records after they are ready and before the idle baseline', () => {
    const start = agentStartLines({ ...launch, idleBaselineS: 5, cooldown: { maxWaitS: 30 } });
    expect(start).toContain(`--token-file "$ERG_RUN_DIR/${RUN_DIR_FILES.runToken}" --cooldown "$ERG_RUN_DIR/${RUN_DIR_FILES.cooldown}" ${launch.options}`);
    const ready = start.indexOf("grep -c '\\.ready$'");
    const wait = start.indexOf(cooldownWaitLines(30).join('\n'));
    const idle = start.indexOf(idleBaselineLines(5).join('\n'));
    expect(ready).toBeGreaterThan(0);
    expect(wait).toBeGreaterThan(ready);
    expect(idle).toBeGreaterThan(wait);
    // Without a cooldown: neither the option nor the wait.
    expect(agentStartLines(launch)).not.toContain('--cooldown');
    expect(agentStartLines(launch)).not.toContain(RUN_DIR_FILES.cooled);
  });

  test('the ready wait counts the .ready files the agents write, one per node, and nothing else', () => {
    const dir = runDir();
    const folder = path.join(dir, RUN_DIR_FILES.telemetryDir);
    fs.mkdirSync(folder);
    fs.writeFileSync(path.join(folder, nodeTelemetryFiles('n1').ready), '{}\n');
    fs.writeFileSync(path.join(folder, nodeTelemetryFiles('n2').ready), '{}\n');
    fs.writeFileSync(path.join(folder, nodeTelemetryFiles('n3').spool), '');
    // srun is not here: a stub that exits at once stands for the agents' step.
    const stub = path.join(dir, 'bin');
    fs.mkdirSync(stub);
    fs.writeFileSync(path.join(stub, 'srun'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const script = (nodes: number) =>
      `export PATH='${stub}':"$PATH" ERG_RUN_DIR='${dir}' ERG_RUN_ID=r1 SLURM_JOB_NUM_NODES=${nodes}\n${agentStartLines(launch)}\nwait\necho "ticks=$erg_i"`;
    const ready = bash(script(2), dir);
    expect(ready.stdout).toBe('ticks=0\n');
    expect(ready.stderr).toBe('');
    // A third node's spool is no sign that it is ready: the wait goes on (cut short here by a timeout).
    fs.writeFileSync(path.join(dir, 'three-nodes.sh'), script(3));
    const waiting = bash('timeout -s KILL 1 bash ./three-nodes.sh; echo "status=$?"', dir);
    expect(waiting.stdout).toBe('status=137\n');
  });

  test('stop: USR2 to the agents\' step, a guard that kills it after the timeout, then wait', () => {
    expect(agentStopLines().split('\n')).toEqual([
      'kill -USR2 "$erg_agent_pid" 2>/dev/null',
      '( sleep 30; kill -KILL "$erg_agent_pid" 2>/dev/null ) & erg_guard=$!',
      'wait "$erg_agent_pid" 2>/dev/null',
      'kill "$erg_guard" 2>/dev/null',
    ]);
  });
});

describe('the spool', () => {
  test('a line\'s head gives its seq back; lines not written so give null', () => {
    expect(spoolLineSeq(`${spoolLineHead('gh-001', 42)},"samples":[]}`)).toBe(42);
    expect(spoolLineSeq(`${spoolLineHead('gh-001', 7)}}`)).toBe(7);
    expect(spoolLineSeq('{"seq":42,"node":"gh-001"}')).toBeNull();
    expect(spoolLineSeq('{"node":"gh-001","seq":-1,')).toBeNull();
  });

  test('.acked: what the agent writes is what the readers read; anything else is nothing settled', () => {
    expect(parseAcked(ackedText(12))).toBe(12);
    for (const text of [null, '', 'x', '-3', '\n']) expect(parseAcked(text)).toBe(-1);
  });

  test('readSpool yields unacknowledged batches in order, passing over acknowledged ones and blank lines', async () => {
    const line = (seq: number) => `${spoolLineHead('n1', seq)},"samples":[]}`;
    expect(await collect([`${line(0)}\n${line(1)}\n\n${line(2)}\n${line(3)}`], { ackedSeq: 1 })).toEqual([
      { kind: 'batch', seq: 2, value: { node: 'n1', seq: 2, samples: [] } },
      { kind: 'batch', seq: 3, value: { node: 'n1', seq: 3, samples: [] } },
    ]);
  });

  test('lines split across chunks are joined; a line that is not JSON is unreadable; a first line read from the middle is passed over', async () => {
    const lines = await collect(['3}\n{"node":"n1",', '"seq":5}\n{"node":', '\n'], { startsMidLine: true });
    expect(lines).toEqual([{ kind: 'batch', seq: 5, value: { node: 'n1', seq: 5 } }, { kind: 'unreadable' }]);
  });

  test('a line longer than MAX_SPOOL_LINE_BYTES is unreadable, not kept, and the next line reads', async () => {
    const big = 'x'.repeat(1024 * 1024);
    const chunks = [...Array.from({ length: MAX_SPOOL_LINE_BYTES / big.length + 1 }, () => big), '\n{"seq":1}\n'];
    expect(await collect(chunks)).toEqual([{ kind: 'unreadable' }, { kind: 'batch', seq: 1, value: { seq: 1 } }]);
  });

  test('a last line without its newline is read too (a spool read while being written)', async () => {
    expect(await collect(['{"seq":0}\n{"seq":1}'])).toEqual([
      { kind: 'batch', seq: 0, value: { seq: 0 } },
      { kind: 'batch', seq: 1, value: { seq: 1 } },
    ]);
  });
});
