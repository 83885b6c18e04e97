/**
 * Renders the files of one run: `job.sh` (the sbatch script erg owns), `run.sh` (the campaign's
 * `run` template with this configuration's values) and one file per `files:` entry. Pure.
 *
 * Security (design.md: a parameter value must never run). Values reach the shell on two paths:
 * - job.sh exports every value single-quoted with shellQuote, which is exact for any string;
 * - run.sh and files substitute values raw, so every value must match SAFE_VALUE, a character
 *   set that means nothing to bash in any quoting context. The spec already validates this; the
 *   renderer checks again because the rendered text is what actually runs.
 * `#SBATCH` lines are parsed by sbatch, not the shell, but a newline would inject a directive, so
 * every directive value is checked against DIRECTIVE_VALUE as well.
 */
import {
  canonicalValue,
  DEFAULT_RUN_UMASK,
  FILE_NAME,
  expandSlurmOptions,
  IDENTIFIER,
  isSafeValue,
  renderTemplate,
  RESERVED_FILE_NAMES,
  RESERVED_FILE_PREFIXES,
  RUN_DIR_FILES,
  runNodes,
  SLURM_OPTION_FLAGS,
  TIMED_WORKLOAD_LINES,
  type CampaignSpec,
  type ParamValue,
  type SlurmOptionKey,
  umaskCommand,
} from '@erg/spec';
import { InvalidRenderInputError, UnsafeDirectiveValueError, UnsafeParameterValueError } from './errors';
import { shellQuote } from './shell';
import { jobNameForRun } from './slurm-job';

/** One file to stage into a run's directory. */
export interface RenderedFile {
  /** Path relative to the run directory. */
  name: string;
  /** Text, or bytes (the agent runtime's tarballs). */
  content: string | Buffer;
  /** POSIX mode, e.g. 0o755. */
  mode: number;
}

/** The parts of a campaign spec that shape a run's files. */
export type RunSpec = Pick<CampaignSpec, 'resources' | 'slurm' | 'run' | 'files'> & Partial<Pick<CampaignSpec, 'workloadDir'>>;

/**
 * Shell lines erg itself adds around the workload, e.g. to start the telemetry agent beside it
 * (@erg/spec's agentStartLines and agentStopLines). Trusted erg code — never user input —
 * rendered verbatim at the marked places of job.sh.
 */
export interface AgentHook {
  /** Runs after the exports and before the workload's clock starts (agent start-up is not timed). */
  start: string;
  /** Runs after the workload ended and erg.timing was written, before the job exits. */
  stop: string;
}

/**
 * Shell lines that put the job's nodes in a power state (@erg/spec's powerStartLines and
 * powerStopLines, with the cluster's helper and this configuration's numbers). Trusted erg code,
 * rendered verbatim: the state is set before the agents start, so they record it from their
 * first sample, and restored after they stopped.
 */
export interface PowerHook {
  start: string;
  stop: string;
  /** erg.power-request's content (@erg/spec's powerRequestText), staged beside job.sh for sites that apply the state from a prolog. */
  request: string;
}

export interface RenderInput {
  runId: string;
  campaignId: string;
  /** 1-based repetition of the configuration. */
  repetition: number;
  /** Stable key of the configuration (exported as ERG_CONFIG_KEY; any string). */
  configKey: string;
  parameters: Readonly<Record<string, ParamValue>>;
  spec: RunSpec;
  /** Absolute remote directory of the run; job.sh runs there and writes its outputs there. */
  runDir: string;
  /** Partition when the spec names none (the cluster's default for erg); Slurm's default otherwise. */
  defaultPartition?: string;
  /**
   * The node the run is pinned to (`#SBATCH --nodelist`): its place in the design's node balance
   * (@erg/sweep's nodeForRun); absent: Slurm chooses.
   */
  node?: string;
  /** More variables to export in job.sh (names are identifiers; values any string). */
  extraEnv?: Readonly<Record<string, string>>;
  /** Telemetry agent hook; absent → job.sh only marks where it would go. */
  agent?: AgentHook;
  /** Power state hook; absent: the campaign sets none (the nodes run in the state they are in). */
  power?: PowerHook;
  /** The umask job.sh sets before anything runs (@erg/spec's run-dir file modes); default DEFAULT_RUN_UMASK (077). */
  umask?: number;
}

/**
 * What may appear in an `#SBATCH` value: no whitespace or newline (a second directive), no quotes,
 * `$`, backtick or `;`, no `#` (comment), and no `%` (Slurm expands it in --output/--error paths).
 * Constraint expressions need `& | ( ) [ ] * !`, which sbatch takes literally.
 */
export const DIRECTIVE_VALUE = /^[A-Za-z0-9._,:=+/@&|()[\]*!-]{1,1024}$/;

/** A run directory: absolute, directive-safe, no `.`/`..` segments. */
const RUN_DIR = /^(\/[A-Za-z0-9._,:=+@-]+)+$/;

/** All files of one run, in the order job.sh, run.sh, then `files:` in name order. */
export function renderRunFiles(input: RenderInput): RenderedFile[] {
  const values = templateValues(input);
  const files: RenderedFile[] = [
    { name: RUN_DIR_FILES.jobScript, content: renderJobScript(input), mode: 0o755 },
    { name: RUN_DIR_FILES.runScript, content: renderRunScriptWith(input.spec.run, values), mode: 0o755 },
    ...(input.power ? [{ name: RUN_DIR_FILES.powerRequest, content: input.power.request, mode: 0o644 }] : []),
  ];
  const extra = input.spec.files ?? {};
  for (const name of Object.keys(extra).sort()) {
    checkFileName(name);
    files.push({ name, content: renderTemplate(extra[name] ?? '', values), mode: 0o644 });
  }
  return files;
}

/** run.sh alone: `#!/bin/bash` + the run template with this run's values (all checked against SAFE_VALUE). */
export function renderRunScript(input: Pick<RenderInput, 'runId' | 'campaignId' | 'repetition' | 'parameters' | 'spec'>): string {
  return renderRunScriptWith(input.spec.run, templateValues(input));
}

function renderRunScriptWith(run: string | undefined, values: Record<string, ParamValue>): string {
  if (run === undefined) throw new InvalidRenderInputError('run', 'is missing: a campaign executed on Slurm needs a run script');
  const body = renderTemplate(run, values);
  return `#!/bin/bash\n${body}${body.endsWith('\n') ? '' : '\n'}`;
}

/** The values templates may use: parameters plus run_id, campaign_id, repetition — each SAFE_VALUE-checked. */
function templateValues(input: Pick<RenderInput, 'runId' | 'campaignId' | 'repetition' | 'parameters'>): Record<string, ParamValue> {
  const values: Record<string, ParamValue> = {};
  for (const [name, value] of Object.entries(input.parameters)) {
    checkIdentifier('parameter name', name);
    const text = canonicalValue(value);
    if (!isSafeValue(text)) throw new UnsafeParameterValueError(name, text);
    values[name] = value;
  }
  const builtins: Record<string, ParamValue> = { run_id: input.runId, campaign_id: input.campaignId, repetition: input.repetition };
  for (const [name, value] of Object.entries(builtins)) {
    const text = canonicalValue(value);
    if (!isSafeValue(text)) throw new UnsafeParameterValueError(name, text);
    values[name] = value;
  }
  return values;
}

/**
 * job.sh: directives, exports and the timed workload. Accepts any parameter value (except NUL):
 * exports are single-quoted, so job.sh alone never needs SAFE_VALUE.
 */
export function renderJobScript(input: RenderInput): string {
  checkRunDir(input.runDir);
  if (!Number.isInteger(input.repetition) || input.repetition < 1) {
    throw new InvalidRenderInputError('repetition', `must be a positive integer, got ${input.repetition}`);
  }
  const lines = ['#!/bin/bash', ...directives(input).map(([flag, value]) => directiveLine(flag, value))];
  lines.push(
    '#',
    `# Rendered by erg; do not edit. The workload is ${RUN_DIR_FILES.runScript}; everything it prints goes to`,
    `# ${RUN_DIR_FILES.stdout} / ${RUN_DIR_FILES.stderr}. ${RUN_DIR_FILES.timing} holds the workload's wall-clock window.`,
    '',
    // No `set -e`: a failing workload must still reach the lines that record its end and exit code.
    'set -u',
    // Before anything writes: the logs, the agents' spools and marks, and the workload's own files
    // are the job's user's alone (unless the site set another umask).
    umaskCommand(input.umask ?? DEFAULT_RUN_UMASK),
    '',
  );
  for (const [name, value] of Object.entries(input.extraEnv ?? {})) {
    checkIdentifier('extraEnv name', name);
    lines.push(`export ${name}=${shellQuote(value)}`);
  }
  lines.push(
    `export ERG_RUN_ID=${shellQuote(input.runId)}`,
    `export ERG_CAMPAIGN_ID=${shellQuote(input.campaignId)}`,
    `export ERG_REPETITION=${shellQuote(String(input.repetition))}`,
    `export ERG_RUN_DIR=${shellQuote(input.runDir)}`,
    `export ERG_CONFIG_KEY=${shellQuote(input.configKey)}`,
  );
  if (input.spec.workloadDir !== undefined) lines.push(`export ERG_WORKLOAD_DIR=${shellQuote(input.spec.workloadDir)}`);
  for (const [name, value] of Object.entries(input.parameters)) {
    checkIdentifier('parameter name', name);
    lines.push(`export ERG_PARAM_${name}=${shellQuote(canonicalValue(value))}`);
  }
  lines.push(
    '',
    // --chdir already put us here; cd again so a failed chdir cannot run the workload elsewhere.
    'cd "$ERG_RUN_DIR" || exit 1',
    '',
    ...(input.power ? ['# >>> erg power state', input.power.start, '# <<< erg power state', ''] : []),
    '# >>> erg agent start',
    ...(input.agent ? [input.agent.start] : ['# (no telemetry agent for this run)']),
    '# <<< erg agent start',
    '',
    ...TIMED_WORKLOAD_LINES,
    '',
    '# >>> erg agent stop',
    ...(input.agent ? [input.agent.stop] : ['# (no telemetry agent for this run)']),
    '# <<< erg agent stop',
    '',
    ...(input.power ? ['# >>> erg power restore', input.power.stop, '# <<< erg power restore', ''] : []),
    'exit "$erg_exit_code"',
    '',
  );
  return lines.join('\n');
}

/** The `#SBATCH` flags and values (null: a flag without value) for a run, in a fixed order. */
function directives(input: RenderInput): Array<[string, string | null]> {
  return [
    ['--job-name', jobNameForRun(input.runId)],
    ['--comment', `erg:${input.campaignId}:${input.runId}`],
    ['--output', `${input.runDir}/${RUN_DIR_FILES.slurmOut}`],
    ['--error', `${input.runDir}/${RUN_DIR_FILES.slurmErr}`],
    ['--chdir', input.runDir],
    ...resourceDirectives(input),
  ];
}

/**
 * The `#SBATCH` lines of a run that say what it asks Slurm for (partition, nodes, time, options),
 * without the lines naming the run itself (name, comment, output files, directory). Runs with the
 * same lines can share one array job (array.ts): each task gets exactly what its own job would.
 */
export function resourceDirectiveLines(input: Pick<RenderInput, 'spec' | 'parameters' | 'defaultPartition' | 'node'>): string[] {
  return resourceDirectives(input).map(([flag, value]) => directiveLine(flag, value));
}

function resourceDirectives(input: Pick<RenderInput, 'spec' | 'parameters' | 'defaultPartition' | 'node'>): Array<[string, string | null]> {
  const { resources } = input.spec;
  const out: Array<[string, string | null]> = [];
  const partition = resources.partition ?? input.defaultPartition;
  if (partition !== undefined) out.push(['--partition', partition]);
  out.push(['--nodes', String(runNodes(resources, input.parameters))]);
  if (resources.ntasksPerNode !== undefined) out.push(['--ntasks-per-node', String(resources.ntasksPerNode)]);
  if (resources.cpusPerTask !== undefined) out.push(['--cpus-per-task', String(resources.cpusPerTask)]);
  // --gpus-per-node=0 is refused by some Slurm versions; no GPUs means no GPU request.
  if (resources.gpusPerNode !== undefined && resources.gpusPerNode > 0) out.push(['--gpus-per-node', String(resources.gpusPerNode)]);
  if (resources.mem !== undefined) out.push(['--mem', resources.mem]);
  out.push(['--time', resources.time]);
  if (resources.constraint !== undefined) out.push(['--constraint', resources.constraint]);
  // Node balance: runs pinned to different nodes ask for different lines, so never share an array.
  if (input.node !== undefined) out.push(['--nodelist', input.node]);
  if (resources.exclusive === true) out.push(['--exclusive', null]);
  // Templated options (gpuFreq: "{{clock}}") take this configuration's values; validation checked them.
  const slurm: Readonly<Record<string, unknown>> = input.spec.slurm ? expandSlurmOptions(input.spec.slurm, input.parameters) : {};
  // Flag-table order, not spec order, so the same spec always renders the same script.
  for (const key of Object.keys(SLURM_OPTION_FLAGS) as SlurmOptionKey[]) {
    const value = slurm[key];
    if (value === undefined) continue;
    out.push([SLURM_OPTION_FLAGS[key], String(value)]);
  }
  for (const key of Object.keys(slurm)) {
    if (!Object.hasOwn(SLURM_OPTION_FLAGS, key) && slurm[key] !== undefined) {
      throw new InvalidRenderInputError(`slurm.${key}`, 'is not an allow-listed sbatch option');
    }
  }
  return out;
}

export function directiveLine(flag: string, value: string | null): string {
  if (value === null) return `#SBATCH ${flag}`;
  if (!DIRECTIVE_VALUE.test(value)) throw new UnsafeDirectiveValueError(flag, value);
  return `#SBATCH ${flag}=${value}`;
}

export function checkRunDir(runDir: string): void {
  if (!RUN_DIR.test(runDir) || runDir.split('/').some((s) => s === '.' || s === '..')) {
    throw new InvalidRenderInputError(
      'runDir',
      `${JSON.stringify(runDir)} must be an absolute path of letters, digits and . _ , : = + @ - (no "." or ".." segments)`,
    );
  }
  if (runDir.length > 900) throw new InvalidRenderInputError('runDir', 'is longer than 900 characters');
}

function checkIdentifier(what: string, name: string): void {
  if (!IDENTIFIER.test(name)) throw new InvalidRenderInputError(what, `${JSON.stringify(name)} is not an identifier`);
}

function checkFileName(name: string): void {
  // The spec's own rules (one plain segment, erg's names and prefixes reserved), checked again
  // because a name that escaped them could overwrite job.sh or land outside the run directory.
  if (!FILE_NAME.test(name)) throw new InvalidRenderInputError(`files.${name}`, 'is not an allowed file name');
  const reserved = RESERVED_FILE_NAMES.includes(name) || RESERVED_FILE_PREFIXES.some((p) => name.startsWith(p));
  if (reserved) throw new InvalidRenderInputError(`files.${name}`, 'is a name erg uses in the run directory');
}
