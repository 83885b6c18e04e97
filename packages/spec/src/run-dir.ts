/**
 * The run directory, `<cluster workDir>/<campaign id>/<run id>/`: every name erg uses in it, the
 * job-script lines that write erg's files there, and the readers of those files. The one owner of
 * that contract: the renderer (@erg/slurm) builds job.sh from these lines, the agents write their
 * folder by these names, the scheduler and the API read by them, and the spec refuses the names
 * in a campaign's `files` (a staged file can never overwrite or shadow one of erg's).
 *
 *   job.sh, run.sh, <files>   staged by the scheduler; job.sh runs run.sh (TIMED_WORKLOAD_LINES)
 *   erg.token                 staged: the run's telemetry token, readable by the job's user only
 *   slurm.out, slurm.err      Slurm's own output for the job
 *   stdout.log, stderr.log    the workload's output
 *   erg.timing                the workload's window and exit code          → parseTiming
 *   erg.idle                  the idle baseline's window, when asked for   → parseIdleWindow
 *   erg.cooldown              staged with a cooldown: its thresholds and the nodes' idle references (cooldown-plan.ts)
 *   erg.cooled                the cooldown's wait and every node's record  → parseCooled
 *   telemetry/                the agents' folder (agentStartLines):
 *     agent.log               what srun printed for all the agents
 *     <node>.spool            one telemetry batch per line                  → readSpool
 *     <node>.acked            the highest settled seq                        → parseAcked
 *     <node>.ready, <node>.meta.json, <node>.stats.json
 *     <node>.power.json       the node helper's record of the power state  → parsePowerRecord
 *     <node>.marks            the workload's phase marks (marks.ts), tailed by the node's agent
 *     <node>.cooled.json      the agent's cooldown record, once its node is back near idle (or at maxWaitS)
 *     power.log               what srun and the helpers printed (powerStartLines)
 *
 * It imports only node-info and marks (both dependency-free): the agent bundles this file alone (`@erg/spec/run-dir`), without zod.
 */
import { MARKS_DIR_ENV, MAX_PHASE_NAMES_ENV } from './marks';
import { parsePowerRecord, POWER_HELPER_OPTIONS, POWER_KNOBS, type PowerState } from './node-info';

/** The names erg uses at the top of a run directory; the spec reserves every one of them in `files`. */
export const RUN_DIR_FILES = {
  jobScript: 'job.sh',
  runScript: 'run.sh',
  stdout: 'stdout.log',
  stderr: 'stderr.log',
  slurmOut: 'slurm.out',
  slurmErr: 'slurm.err',
  timing: 'erg.timing',
  timingTmp: 'erg.timing.tmp',
  idle: 'erg.idle',
  /** Staged when the campaign has a cooldown: the thresholds and the nodes' idle references (cooldown-plan.ts), read by every agent. */
  cooldown: 'erg.cooldown',
  /** Written by job.sh after the cooldown's wait: its window and every node's record (cooldownWaitLines → parseCooled). */
  cooled: 'erg.cooled',
  cooledTmp: 'erg.cooled.tmp',
  /** Written by job.sh when the node helper could not apply the power state: the failing records, one per line. */
  powerFailed: 'erg.power-failed',
  /** Staged: the power state asked for, as the helper's options (one `--option value` per line), for sites whose Slurm prolog applies it. */
  powerRequest: 'erg.power-request',
  runToken: 'erg.token',
  /** A folder: TELEMETRY_DIR_FILES and each node's NODE_FILE_SUFFIXES. */
  telemetryDir: 'telemetry',
} as const;

/** Names in the telemetry folder that belong to no one node. */
export const TELEMETRY_DIR_FILES = {
  agentLog: 'agent.log',
  powerLog: 'power.log',
} as const;

/** What one node's agent writes in the telemetry folder: `<node><suffix>`. */
export const NODE_FILE_SUFFIXES = {
  /** Every batch, one JSON line each, appended before it is sent. */
  spool: '.spool',
  /** The highest seq such that every seq ≤ it is settled; rewritten atomically. */
  acked: '.acked',
  /** What the agent found on the node: sources, sensors, versions. */
  meta: '.meta.json',
  /** Exists once the agent sampled: job.sh waits for one per node before the workload. */
  ready: '.ready',
  /** What the agent did, written when it stops. */
  stats: '.stats.json',
  /** The node helper's PowerRecord (one JSON line), when the campaign sets a power state. */
  power: '.power.json',
  /** The agent's cooldown record (NodeCooldown, one JSON line), written once when the campaign has a cooldown: job.sh waits for one per node. */
  cooled: '.cooled.json',
} as const;
export type NodeFile = keyof typeof NODE_FILE_SUFFIXES;

/** The directory of one run on its cluster. */
export function runDirPath(workDir: string, campaignId: string, runId: string): string {
  return `${workDir}/${campaignId}/${runId}`;
}

/** The names of one node's files in the telemetry folder. */
export function nodeTelemetryFiles(node: string): Record<NodeFile, string> {
  const { spool, acked, meta, ready, stats, power, cooled } = NODE_FILE_SUFFIXES;
  return {
    spool: `${node}${spool}`, acked: `${node}${acked}`, meta: `${node}${meta}`, ready: `${node}${ready}`, stats: `${node}${stats}`, power: `${node}${power}`,
    cooled: `${node}${cooled}`,
  };
}

/** A spool's name as the agent writes it: the node's name (a host name) and `.spool`. */
const SPOOL_NAME = /^([A-Za-z0-9._-]+)\.spool$/;

/** The node whose spool `name` is (`gh-001.spool` → `gh-001`); null for any other name. */
export function spoolNode(name: string): string | null {
  return SPOOL_NAME.exec(name)?.[1] ?? null;
}

/** The telemetry token file, as the scheduler stages it: the job's user alone may read it (whatever the umask). */
export function runTokenFile(token: string): { name: string; content: string; mode: number } {
  return { name: RUN_DIR_FILES.runToken, content: `${token}\n`, mode: 0o600 };
}

// ---------------------------------------------------------------------------------------------
// File modes. A run directory holds the workload's code, parameters, outputs and telemetry, on a
// filesystem other users of the cluster share: by default only the job's user may read any of it.
// One umask decides every mode: what erg stages (directories 0777, scripts 0755 and other files
// 0644, less the umask), what the job creates (job.sh and array.sh set it first; its logs, spools,
// marks, and everything the workload writes) and what Slurm creates for the job (the sbatch loop
// runs under it, and Slurm gives a job the umask it was submitted with). A site that wants its
// groups to read run directories sets another (the scheduler's ERG_RUN_UMASK, e.g. 027).

/** The umask erg creates run files and directories with unless the site sets another: directories 0700, files 0600. */
export const DEFAULT_RUN_UMASK = 0o077;

/** A umask erg accepts: it never takes the owner's own bits (the job must read, write and run its files). */
export function isRunUmask(umask: number): boolean {
  return Number.isInteger(umask) && umask >= 0 && umask <= 0o077;
}

/** `mode` as created under `umask` (the bits the umask clears cleared). */
export function maskedMode(mode: number, umask: number): number {
  return mode & ~umask & 0o7777;
}

/** The shell line that sets `umask` (`umask 0077`): for the job's scripts and erg's remote commands. */
export function umaskCommand(umask: number): string {
  if (!isRunUmask(umask)) throw new RangeError(`umask ${umask.toString(8)} takes the owner's own bits; at most 077`);
  return `umask ${umask.toString(8).padStart(4, '0')}`;
}

// ---------------------------------------------------------------------------------------------
// erg.timing: the workload's wall-clock window and exit code, written by job.sh around run.sh.

export interface WorkloadTiming {
  startNs: bigint | null;
  endNs: bigint | null;
  exitCode: number | null;
}

/**
 * job.sh's lines that run the workload: run.sh with its output in the logs, timed by `date +%s%N`
 * immediately before and after, so queue wait and set-up stay outside the window. erg.timing is
 * written beside and then renamed, so a reader never sees half of it.
 */
export const TIMED_WORKLOAD_LINES: readonly string[] = [
  'erg_start_ns=$(date +%s%N)',
  `bash ./${RUN_DIR_FILES.runScript} >${RUN_DIR_FILES.stdout} 2>${RUN_DIR_FILES.stderr}`,
  'erg_exit_code=$?',
  'erg_end_ns=$(date +%s%N)',
  `printf 'start_ns=%s\\nend_ns=%s\\nexit_code=%s\\n' "$erg_start_ns" "$erg_end_ns" "$erg_exit_code" >${RUN_DIR_FILES.timingTmp}`,
  `mv -f ${RUN_DIR_FILES.timingTmp} ${RUN_DIR_FILES.timing}`,
];

/** The largest nanosecond time a 64-bit integer (Postgres' bigint, where windows are stored) holds: in 2262. */
export const MAX_STORED_NS = 2n ** 63n - 1n;

/**
 * A nanosecond Unix time a job wrote into its run directory (`date +%s%N`): null unless it is a
 * whole number a 64-bit integer holds — the job may write anything there, and a value past 2262
 * overflowed the bigint it is stored in (the run's finalization failed every cycle).
 */
export function storableNs(digits: string | undefined): bigint | null {
  if (digits === undefined || !/^\d{1,20}$/.test(digits)) return null;
  const ns = BigInt(digits);
  return ns <= MAX_STORED_NS ? ns : null;
}

/** What TIMED_WORKLOAD_LINES wrote to erg.timing; null for each value missing (a job killed before the end, or a value no bigint holds). */
export function parseTiming(text: string | null): WorkloadTiming {
  const values = new Map<string, string>();
  for (const line of (text ?? '').split('\n')) {
    const m = /^([a-z_]+)=(-?\d+)\s*$/.exec(line);
    if (m) values.set(m[1]!, m[2]!);
  }
  // The job can write anything here: times a bigint cannot store, and exit codes no shell gives, are missing.
  const exit = values.has('exit_code') ? Number(values.get('exit_code')) : null;
  return { startNs: storableNs(values.get('start_ns')), endNs: storableNs(values.get('end_ns')), exitCode: exit !== null && exit >= 0 && exit <= 255 ? exit : null };
}

// ---------------------------------------------------------------------------------------------
// erg.idle: the idle baseline, the nodes running nothing but the agents before the workload.

/** job.sh's lines that measure an idle baseline of `seconds` and write its window to erg.idle (none for 0). */
export function idleBaselineLines(seconds: number): string[] {
  if (seconds <= 0) return [];
  return [
    // The idle baseline: the nodes doing nothing but run the agent, measured before the workload.
    'erg_idle_start_ns=$(date +%s%N)',
    `sleep ${seconds}`,
    'erg_idle_end_ns=$(date +%s%N)',
    `printf 'idle_start_ns=%s\\nidle_end_ns=%s\\n' "$erg_idle_start_ns" "$erg_idle_end_ns" >${RUN_DIR_FILES.idle}`,
  ];
}

/** The window idleBaselineLines wrote to erg.idle; nulls when there was none. */
export function parseIdleWindow(text: string | null): { idleStartNs: bigint | null; idleEndNs: bigint | null } {
  const start = /^idle_start_ns=(\d+)\s*$/m.exec(text ?? '')?.[1];
  const end = /^idle_end_ns=(\d+)\s*$/m.exec(text ?? '')?.[1];
  return { idleStartNs: storableNs(start), idleEndNs: storableNs(end) };
}

// ---------------------------------------------------------------------------------------------
// The cooldown (the spec's `cooldown` block): after the agents are ready and before the idle
// baseline and the workload, job.sh waits until every node's agent has written its record — its
// node is back near idle, or it gave up at maxWaitS — so the wait lies in neither window.

/**
 * Seconds job.sh waits beyond maxWaitS for the nodes' records. Each agent counts maxWaitS from its
 * own first sample, which comes before the job's wait starts; the slack covers an agent whose
 * last evaluation or write comes late on a busy node.
 */
export const COOLDOWN_WAIT_SLACK_S = 5;

/** erg.cooldown as the scheduler stages it: the plan (cooldown-plan.ts's cooldownPlanText), readable by the job's agents. */
export function cooldownPlanFile(content: string): { name: string; content: string; mode: number } {
  return { name: RUN_DIR_FILES.cooldown, content, mode: 0o644 };
}

/**
 * job.sh's lines that wait for every node's `<node>.cooled.json`, at most maxWaitS +
 * COOLDOWN_WAIT_SLACK_S (bash's SECONDS: wall time, whatever each check costs), then write
 * erg.cooled: the wait's window, then every record the agents wrote by then, one JSON line each.
 * The workload runs whether or not every node cooled; the records say which did.
 */
export function cooldownWaitLines(maxWaitS: number): string[] {
  if (!Number.isFinite(maxWaitS) || maxWaitS <= 0 || maxWaitS > 86_400) throw new RangeError(`cooldown maxWaitS ${maxWaitS} is not a number of seconds in (0, 86400]`);
  const cooled = NODE_FILE_SUFFIXES.cooled;
  const waitS = Math.ceil(maxWaitS) + COOLDOWN_WAIT_SLACK_S;
  const records = `"$(ls "$erg_telemetry" 2>/dev/null | grep -c '${cooled.replace(/\./g, '\\.')}$')"`;
  const nodes = '"${SLURM_JOB_NUM_NODES:-1}"';
  return [
    // The cooldown: each node's agent writes its record once the node is back near idle (or at maxWaitS).
    'erg_cool_start_ns=$(date +%s%N)',
    `erg_cool_deadline=$((SECONDS + ${waitS}))`,
    `while [ ${records} -lt ${nodes} ] && [ $SECONDS -lt $erg_cool_deadline ]; do sleep 0.2; done`,
    'erg_cool_end_ns=$(date +%s%N)',
    `{ printf 'wait_start_ns=%s\\nwait_end_ns=%s\\n' "$erg_cool_start_ns" "$erg_cool_end_ns"; cat "$erg_telemetry"/*${cooled} 2>/dev/null; } >${RUN_DIR_FILES.cooledTmp}`,
    `mv -f ${RUN_DIR_FILES.cooledTmp} ${RUN_DIR_FILES.cooled}`,
    `[ ${records} -ge ${nodes} ] || echo "erg: cooldown records from fewer than ${nodes.slice(1, -1)} node(s) after ${waitS} s (see ${RUN_DIR_FILES.telemetryDir}/${TELEMETRY_DIR_FILES.agentLog}); the workload runs all the same" >&2`,
  ];
}

/** What erg.cooled holds: the job's wait (nulls where it left none) and the nodes' records as JSON values, not yet validated. */
export interface CooledFile {
  waitStartNs: bigint | null;
  waitEndNs: bigint | null;
  /** Each line that is a JSON object, in file order: the job's to write, so validate them (NodeCooldown) before use. */
  records: unknown[];
  /** Lines that are neither the window nor JSON (a record cut by a crash, or by the read's limit). */
  unreadable: number;
}

/** Reads what cooldownWaitLines wrote; a missing file gives nulls and no records. */
export function parseCooled(text: string | null): CooledFile {
  const out: CooledFile = { waitStartNs: null, waitEndNs: null, records: [], unreadable: 0 };
  for (const line of (text ?? '').split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '') continue;
    const window = /^wait_(start|end)_ns=(\d+)$/.exec(trimmed);
    if (window) {
      if (window[1] === 'start') out.waitStartNs = storableNs(window[2]);
      else out.waitEndNs = storableNs(window[2]);
      continue;
    }
    try {
      const value: unknown = JSON.parse(trimmed);
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) out.records.push(value);
      else out.unreadable += 1;
    } catch {
      out.unreadable += 1;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The agents: started beside the workload on every node, writing into the telemetry folder.

/** Seconds job.sh waits for every node's agent to take its first sample. */
export const AGENT_READY_TIMEOUT_S = 30;
/** Seconds job.sh gives the agents to drain after the workload before killing them. */
export const AGENT_STOP_TIMEOUT_S = 30;

export interface AgentLaunch {
  /** The agent's program as shell words, quoted by the caller: the interpreter and the bundle. */
  program: string;
  /** The agent's options as shell words, quoted by the caller (`--interval-ms 1000 --api-url '…'`). */
  options: string;
  /** GPUs per node the job holds: the agents' step asks for them too, to see them. */
  gpusPerNode?: number;
  /** Seconds of idle baseline after the agents are ready (0: none). */
  idleBaselineS: number;
  /** The campaign's cooldown: the agents read erg.cooldown, and job.sh waits for their records before the idle baseline. Absent: none. */
  cooldown?: { maxWaitS: number };
  /**
   * The phase-mark writers' folder on the cluster, shell-quoted by the caller: `bin/erg-mark`
   * goes on the workload's PATH and `python/` (the `erg` module) on its PYTHONPATH. Absent: the
   * workload has no writers, and ERG_MARKS_DIR is set all the same (a workload may write marks itself).
   */
  markTools?: string;
  /** The site's cap on a run's distinct phase names (ERG_MAX_PHASE_NAMES), exported to the workload for its `erg` module; absent: not exported (the module's default). */
  maxPhaseNames?: number;
}

/**
 * job.sh's lines before the workload: start the agent on every node of the job as an overlapping
 * step writing into the telemetry folder, wait until each has sampled once, then the cooldown's
 * wait if the campaign has one, then the idle baseline if asked for — the baseline measures
 * nodes already back near idle, and neither wait is in the workload's window. The run's own
 * arguments (its id, folder, token and cooldown plan) are added here.
 */
export function agentStartLines(launch: AgentLaunch): string {
  const gpus = launch.gpusPerNode ? ` --gpus-per-node=${launch.gpusPerNode}` : '';
  const cooldownArg = launch.cooldown ? ` --cooldown "$ERG_RUN_DIR/${RUN_DIR_FILES.cooldown}"` : '';
  const runArgs = `--run-id "$ERG_RUN_ID" --spool-dir "$erg_telemetry" --token-file "$ERG_RUN_DIR/${RUN_DIR_FILES.runToken}"${cooldownArg}`;
  const ready = NODE_FILE_SUFFIXES.ready.replace(/\./g, '\\.');
  const ticks = AGENT_READY_TIMEOUT_S * 10;
  return [
    `erg_telemetry="$ERG_RUN_DIR/${RUN_DIR_FILES.telemetryDir}"`,
    'mkdir -p "$erg_telemetry"',
    // One agent per node: the step's own task count, or it inherits the job's (SLURM_NTASKS) and
    // Slurm 22.05 ignores --ntasks-per-node=1 when they disagree ("can't honor"), an agent per task.
    `srun --overlap --ntasks="\${SLURM_JOB_NUM_NODES:-1}" --ntasks-per-node=1 --nodes="\${SLURM_JOB_NUM_NODES:-1}" --kill-on-bad-exit=0${gpus} ${launch.program} ${runArgs} ${launch.options} >"$erg_telemetry/${TELEMETRY_DIR_FILES.agentLog}" 2>&1 &`,
    'erg_agent_pid=$!',
    'erg_i=0',
    `while [ "$(ls "$erg_telemetry" 2>/dev/null | grep -c '${ready}$')" -lt "\${SLURM_JOB_NUM_NODES:-1}" ] && [ $erg_i -lt ${ticks} ]; do sleep 0.1; erg_i=$((erg_i + 1)); done`,
    `[ $erg_i -lt ${ticks} ] || echo "erg: telemetry agents not ready after ${AGENT_READY_TIMEOUT_S} s (see ${RUN_DIR_FILES.telemetryDir}/${TELEMETRY_DIR_FILES.agentLog})" >&2`,
    ...markWriterLines(launch.markTools, launch.maxPhaseNames),
    ...(launch.cooldown ? cooldownWaitLines(launch.cooldown.maxWaitS) : []),
    ...idleBaselineLines(launch.idleBaselineS),
  ].join('\n');
}

/**
 * job.sh's lines that let the workload mark phases (marks.ts): where `<node>.marks` goes — the
 * telemetry folder, which each node's agent tails — and the writers on PATH and PYTHONPATH.
 * Exported, so they reach every srun task of the workload on every node.
 */
function markWriterLines(markTools: string | undefined, maxPhaseNames: number | undefined): string[] {
  return [
    `export ${MARKS_DIR_ENV}="$erg_telemetry"`,
    // The writers stop at the names the run would keep: marks of later names would be dropped at ingest anyway.
    ...(maxPhaseNames === undefined ? [] : [`export ${MAX_PHASE_NAMES_ENV}=${Math.trunc(maxPhaseNames)}`]),
    ...(markTools === undefined ? [] : [`export PATH=${markTools}/bin:"$PATH"`, `export PYTHONPATH=${markTools}/python"\${PYTHONPATH:+:$PYTHONPATH}"`]),
  ];
}

/**
 * job.sh's lines after the workload: ask the agents to finish (SIGUSR2, which srun forwards to
 * its tasks; SIGTERM would make srun kill them) and wait for them to drain, at most
 * AGENT_STOP_TIMEOUT_S.
 */
export function agentStopLines(): string {
  return [
    'kill -USR2 "$erg_agent_pid" 2>/dev/null',
    `( sleep ${AGENT_STOP_TIMEOUT_S}; kill -KILL "$erg_agent_pid" 2>/dev/null ) & erg_guard=$!`,
    'wait "$erg_agent_pid" 2>/dev/null',
    'kill "$erg_guard" 2>/dev/null',
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// The power state: set on every node by the site's node helper before the agents start, held
// while the job runs and restored after it (deploy/node-helper/erg-power-helper).

/** Seconds job.sh waits for every node's helper to apply the power state. */
export const POWER_APPLY_TIMEOUT_S = 60;
/** job.sh's exit code when the power state could not be applied: the workload did not run. */
export const POWER_NOT_APPLIED_EXIT_CODE = 97;

/** The helper's options for a power state: numbers only, in POWER_KNOBS order. */
export function powerHelperArgs(state: PowerState): string[] {
  const args: string[] = [];
  for (const knob of POWER_KNOBS) {
    const value = state[knob];
    if (value === undefined) continue;
    const text = Array.isArray(value) ? value.join(',') : String(value);
    // Validated integers by now (spec/power.ts); checked again because this becomes a shell line.
    if (!/^\d{1,9}(,\d{1,9})?$/.test(text)) throw new RangeError(`power ${knob}: ${JSON.stringify(text)} is not a whole number`);
    args.push(POWER_HELPER_OPTIONS[knob], text);
  }
  return args;
}

/**
 * erg.power-request: the state as the helper's options, one `--option value` pair per line, staged
 * beside job.sh. Sites that apply the state from a Slurm prolog (deploy/node-helper/slurm-prolog.sh)
 * read it there, before the job starts; the helper's `hold` then finds the prolog's record.
 */
export function powerRequestText(state: PowerState): string {
  const args = powerHelperArgs(state);
  const lines: string[] = [];
  for (let i = 0; i < args.length; i += 2) lines.push(`${args[i]} ${args[i + 1]}`);
  return `${lines.join('\n')}\n`;
}

/**
 * job.sh's lines that set the power state before the agents start: the helper runs in `hold` mode
 * on every node as an overlapping step — it applies the state, prints its PowerRecord to
 * `<node>.power.json` and stays until it is signalled (then, or when the job is killed, it
 * restores what it changed). The workload runs only when every node's record says ok; otherwise
 * the failing records go to erg.power-failed and the job ends with POWER_NOT_APPLIED_EXIT_CODE.
 * `helper` is the helper's path, already shell-quoted by the caller; the options are numbers.
 */
export function powerStartLines(helper: string, state: PowerState): string {
  const nodes = '"${SLURM_JOB_NUM_NODES:-1}"';
  const records = `"$erg_telemetry"/*${NODE_FILE_SUFFIXES.power}`;
  const ok = `'^{"ergPower":1,"ok":true,'`;
  const ticks = POWER_APPLY_TIMEOUT_S * 10;
  // The record's file is named on the node, by its host name: the agent's default node name.
  const hold = `'exec "$0" hold --job "$SLURM_JOB_ID" "$@" >"$ERG_RUN_DIR/${RUN_DIR_FILES.telemetryDir}/$(hostname)${NODE_FILE_SUFFIXES.power}"'`;
  return [
    `erg_telemetry="$ERG_RUN_DIR/${RUN_DIR_FILES.telemetryDir}"`,
    'mkdir -p "$erg_telemetry"',
    `srun --overlap --ntasks=${nodes} --ntasks-per-node=1 --nodes=${nodes} --kill-on-bad-exit=0 bash -c ${hold} ${helper} ${powerHelperArgs(state).join(' ')} >"$erg_telemetry/${TELEMETRY_DIR_FILES.powerLog}" 2>&1 &`,
    'erg_power_pid=$!',
    'erg_i=0',
    `while [ "$(cat ${records} 2>/dev/null | grep -c '^{"ergPower"')" -lt ${nodes} ] && kill -0 "$erg_power_pid" 2>/dev/null && [ $erg_i -lt ${ticks} ]; do sleep 0.1; erg_i=$((erg_i + 1)); done`,
    `if [ "$(cat ${records} 2>/dev/null | grep -c ${ok})" -lt ${nodes} ]; then`,
    `  { cat ${records} 2>/dev/null | grep -v ${ok}; echo "records from $(cat ${records} 2>/dev/null | grep -c '^{"ergPower"') of ${nodes.slice(1, -1)} node(s)"; } >${RUN_DIR_FILES.powerFailed}`,
    `  echo "erg: the power state could not be applied on every node (see ${RUN_DIR_FILES.powerFailed} and ${RUN_DIR_FILES.telemetryDir}/${TELEMETRY_DIR_FILES.powerLog}); the workload did not run" >&2`,
    '  kill -USR2 "$erg_power_pid" 2>/dev/null',
    '  wait "$erg_power_pid" 2>/dev/null',
    `  exit ${POWER_NOT_APPLIED_EXIT_CODE}`,
    'fi',
  ].join('\n');
}

/** job.sh's lines after the agents stopped: signal the helpers to restore the previous state, and wait for them (at most AGENT_STOP_TIMEOUT_S). */
export function powerStopLines(): string {
  const ticks = AGENT_STOP_TIMEOUT_S * 10;
  // A polling wait rather than a background `sleep` guard: nothing is left behind when it ends.
  return [
    'kill -USR2 "$erg_power_pid" 2>/dev/null',
    'erg_i=0',
    `while kill -0 "$erg_power_pid" 2>/dev/null && [ $erg_i -lt ${ticks} ]; do sleep 0.1; erg_i=$((erg_i + 1)); done`,
    'kill -KILL "$erg_power_pid" 2>/dev/null',
    'wait "$erg_power_pid" 2>/dev/null',
  ].join('\n');
}

/** What erg.power-failed says, as a sentence for the run's reason: each failing node's error, then how many nodes answered. */
export function describePowerFailure(text: string): string {
  const parts: string[] = [];
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '') continue;
    const record = parsePowerRecord(trimmed);
    if (record) parts.push(`${record.node}: ${record.error ?? 'not applied'}`);
    else if (/^records from \d+ of \d+ node\(s\)$/.test(trimmed)) parts.push(trimmed);
    if (parts.length >= 8) break;
  }
  return `the power state could not be applied, so the workload did not run — ${parts.length > 0 ? parts.join('; ') : 'the helper left no record'}`;
}

// ---------------------------------------------------------------------------------------------
// The spool: `<node>.spool`, one telemetry batch per line (the API's wire format), each line
// starting `{"node":"<node>","seq":<seq>` so the agent can index its spool by reading line heads.

/** The head of a spool line, as the agent writes it; the batch's other fields follow. */
export function spoolLineHead(node: string, seq: number): string {
  return `{"node":${JSON.stringify(node)},"seq":${seq}`;
}

/** Bytes of a line's head spoolLineSeq needs at most (node names are at most 128 characters). */
export const SPOOL_LINE_HEAD_BYTES = 256;
const SPOOL_LINE_SEQ = /^\{"node":"[^"]*","seq":(\d+)[,}]/;

/** The seq of a spool line from its first bytes; null when they do not start as spoolLineHead writes. */
export function spoolLineSeq(head: string): number | null {
  const m = SPOOL_LINE_SEQ.exec(head);
  return m ? Number(m[1]) : null;
}

/** What `<node>.acked` holds for `seq`. */
export function ackedText(seq: number): string {
  return `${seq}\n`;
}

/** The seq `<node>.acked` holds; -1 (nothing settled) when it is missing, empty or not a seq. */
export function parseAcked(text: string | null): number {
  const n = Number.parseInt((text ?? '').trim(), 10);
  return Number.isInteger(n) && n >= 0 ? n : -1;
}

/** A spooled line is one batch; the agent's are far smaller. Longer lines are skipped, not parsed. */
export const MAX_SPOOL_LINE_BYTES = 4 * 1024 * 1024;

/** One line of a spool: a batch not yet acknowledged (parsed, not validated), or a line that is no batch. */
export type SpoolLine = { kind: 'batch'; seq: unknown; value: unknown } | { kind: 'unreadable' };

/**
 * Reads a spool from its bytes, in file order: every line that is JSON with a seq above `ackedSeq`
 * (most of a spool is acknowledged batches, passed over here), and `unreadable` for a line that
 * is not JSON or is longer than MAX_SPOOL_LINE_BYTES (a crash mid-write cuts one). Blank lines are
 * passed over; so is the first line when the bytes start mid-line (a spool read from its end).
 * The values are the job's to write: validate them as batches before use.
 */
export async function* readSpool(chunks: AsyncIterable<Buffer>, options: { startsMidLine: boolean; ackedSeq: number }): AsyncGenerator<SpoolLine> {
  let first = options.startsMidLine;
  for await (const line of spoolLines(chunks)) {
    const cut = first;
    first = false;
    if (cut) continue;
    if (line === null) {
      yield { kind: 'unreadable' };
      continue;
    }
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      yield { kind: 'unreadable' };
      continue;
    }
    const seq = (value as { seq?: unknown } | null)?.seq;
    if (typeof seq === 'number' && seq <= options.ackedSeq) continue;
    yield { kind: 'batch', seq, value };
  }
}

/** The lines of a byte stream as strings; null for a line longer than MAX_SPOOL_LINE_BYTES (skipped, not kept). */
async function* spoolLines(chunks: AsyncIterable<Buffer>): AsyncGenerator<string | null> {
  let parts: Buffer[] = [];
  let length = 0;
  let tooLong = false;
  for await (const chunk of chunks) {
    let from = 0;
    for (let newline = chunk.indexOf(10, from); newline >= 0; newline = chunk.indexOf(10, from)) {
      const piece = chunk.subarray(from, newline);
      if (tooLong || length + piece.length > MAX_SPOOL_LINE_BYTES) yield null;
      else yield Buffer.concat([...parts, piece]).toString('utf8');
      parts = [];
      length = 0;
      tooLong = false;
      from = newline + 1;
    }
    const rest = chunk.subarray(from);
    if (tooLong || length + rest.length > MAX_SPOOL_LINE_BYTES) {
      tooLong = true;
      parts = [];
    } else if (rest.length > 0) {
      parts.push(Buffer.from(rest));
      length += rest.length;
    }
  }
  if (tooLong) yield null;
  else if (length > 0) yield Buffer.concat(parts).toString('utf8');
}
