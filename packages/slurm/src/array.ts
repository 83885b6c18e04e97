/**
 * Job arrays: many runs that ask Slurm for the same resources, submitted as one array job.
 *
 * Each run keeps its own run directory and its own job.sh, rendered exactly as for a job of its
 * own. The array job is a small dispatcher staged in `<workDir>/<campaign>/.arrays/<submission>/`:
 *   - `array.sh`: the shared `#SBATCH` lines plus `--array=0-<n-1>`; task i reads line i+1 of
 *     `tasks` (a run directory), unpacks that directory's files from `runs.tar.gz`, changes there
 *     and execs that run's job.sh, so the run behaves as it would in a job of its own (its
 *     telemetry, power state, timing, exit code).
 *   - `tasks`: one run directory per line, in task order.
 *   - `runs.tar.gz`: every member's files. Staging writes three files per array instead of a
 *     folder and three or more files per run: file creation is what staging 10,000 runs costs
 *     most (docs/benchmarks.md), and each task creates its own when it starts. A run's folder
 *     therefore appears when its task starts.
 *   - `<i>.out` / `<i>.err`: Slurm's output files of task i (`--output=…/%a.out`), with what
 *     slurmstepd itself writes (a cancel, a time limit); the task links the run directory's
 *     slurm.out / slurm.err to them, so they are where a job of its own has them.
 *
 * The array job is named `erg-a-<submission>` (slurm-job.ts): the submission id is stored with
 * every run of the array before sbatch, so a scheduler that crashed after sbatch finds the array
 * by that name and maps task i back to its run (exactly once, as for single jobs).
 */
import { DEFAULT_RUN_UMASK, RUN_DIR_FILES, umaskCommand } from '@erg/spec';
import { InvalidRenderInputError } from './errors';
import { checkRunDir, directiveLine } from './render';
import { arrayJobName } from './slurm-job';
import { stageArchive, type StageEntry } from './stage';

/** The folder of one array submission, under the campaign's folder. */
export function arrayDirPath(workDir: string, campaignId: string, submissionId: string): string {
  return `${workDir}/${campaignId}/.arrays/${submissionId}`;
}

export const ARRAY_FILES = { script: 'array.sh', tasks: 'tasks', bundle: 'runs.tar.gz' } as const;

export interface ArrayJobInput {
  submissionId: string;
  campaignId: string;
  /** The cluster's work dir: run directories and the array's folder are under it. */
  workDir: string;
  /** Absolute folder of the array's own files (arrayDirPath). */
  arrayDir: string;
  /** The run directories, task 0 first. */
  runDirs: readonly string[];
  /** Every file of those run directories, named relative to workDir (`<campaign>/<run>/job.sh`). */
  runFiles: readonly StageEntry[];
  /** The resource `#SBATCH` lines every run of the array shares (resourceDirectiveLines). */
  resourceLines: readonly string[];
  /** The umask the bundle's modes and array.sh's unpacking are under (@erg/spec's run-dir file modes); default 077. */
  umask?: number;
}

/**
 * The files of one array submission, named relative to its arrayDir: array.sh, tasks and the
 * bundle of its runs' files — three files for up to MaxArraySize runs, whatever their number.
 */
export async function renderArrayJob(input: ArrayJobInput): Promise<StageEntry[]> {
  checkRunDir(input.arrayDir);
  checkRunDir(input.workDir);
  if (input.runDirs.length === 0) throw new InvalidRenderInputError('runDirs', 'is empty: an array needs at least one run');
  for (const dir of input.runDirs) {
    checkRunDir(dir);
    if (!dir.startsWith(`${input.workDir}/`)) throw new InvalidRenderInputError('runDirs', `${JSON.stringify(dir)} is not under the work dir ${input.workDir}`);
  }
  const last = input.runDirs.length - 1;
  const umask = input.umask ?? DEFAULT_RUN_UMASK;
  const bundle = `${input.arrayDir}/${ARRAY_FILES.bundle}`;
  const script = [
    '#!/bin/bash',
    directiveLine('--job-name', arrayJobName(input.submissionId)),
    directiveLine('--comment', `erg:${input.campaignId}:array:${input.submissionId}`),
    directiveLine('--array', `0-${last}`),
    // `%a` (the task index) is Slurm's; DIRECTIVE_VALUE keeps `%` out of user values, and the
    // folder was checked above, so these two lines are written without it.
    `#SBATCH --output=${input.arrayDir}/%a.out`,
    `#SBATCH --error=${input.arrayDir}/%a.err`,
    directiveLine('--chdir', input.arrayDir),
    ...input.resourceLines,
    '#',
    `# Rendered by erg; do not edit. Array task i unpacks the run directory on line i+1 of ${ARRAY_FILES.tasks}`,
    `# from ${ARRAY_FILES.bundle} and runs that run's own ${RUN_DIR_FILES.jobScript}; its ${RUN_DIR_FILES.slurmOut} and ${RUN_DIR_FILES.slurmErr} link to <i>.out and <i>.err here.`,
    '',
    'set -u',
    // The folders tar creates on the way to the run directory, and job.sh sets it again.
    umaskCommand(umask),
    `d=$(sed -n "$((SLURM_ARRAY_TASK_ID + 1))p" ${ARRAY_FILES.tasks})`,
    `[ -n "$d" ] || { echo "erg: no run directory for array task $SLURM_ARRAY_TASK_ID" >&2; exit 98; }`,
    // Only this run's files (tar selects the folder's members); a requeued task unpacks them again.
    `gzip -dc ${bundle} | tar -x --no-same-owner -p -f - -C ${input.workDir} "\${d#${input.workDir}/}" ||`,
    `  { echo "erg: could not unpack $d from ${bundle}" >&2; exit 98; }`,
    'cd "$d" || exit 1',
    `ln -sfn "${input.arrayDir}/$SLURM_ARRAY_TASK_ID.out" ${RUN_DIR_FILES.slurmOut}; ln -sfn "${input.arrayDir}/$SLURM_ARRAY_TASK_ID.err" ${RUN_DIR_FILES.slurmErr}`,
    `exec bash ./${RUN_DIR_FILES.jobScript}`,
    '',
  ].join('\n');
  return [
    { name: ARRAY_FILES.script, content: script, mode: 0o755 },
    { name: ARRAY_FILES.tasks, content: input.runDirs.map((d) => `${d}\n`).join(''), mode: 0o644 },
    // Its own run files keep the modes they would have staged one by one (a run's token is 0600 inside).
    { name: ARRAY_FILES.bundle, content: await stageArchive(input.runFiles, umask), mode: 0o600 },
  ];
}

/** Most task indices one array range may expand to (an erg array never has more than MaxArraySize). */
export const MAX_EXPANDED_TASKS = 1_000_000;

/**
 * Slurm's task list of a pending array (squeue %K, or the `[...]` of `123_[0-9%2]`): ranges
 * `a-b`, steps `a-b:s`, single indices, comma-separated, with an optional `%N` throttle at the
 * end → the task indices. null when the text is not such a list.
 */
export function expandArrayTasks(spec: string): number[] | null {
  const trimmed = spec.trim();
  // A list Slurm cut short (`[0,2,4,…,18,2` or `…,42...%1`, see SLURM_BITSTR_LEN in commands.ts) is no list.
  if (trimmed.startsWith('[') !== trimmed.endsWith(']') || trimmed.includes('...')) return null;
  const text = trimmed.replace(/^\[|\]$/g, '').replace(/%\d+$/, '');
  if (text === '') return null;
  const out: number[] = [];
  for (const part of text.split(',')) {
    const m = /^(\d+)(?:-(\d+)(?::(\d+))?)?$/.exec(part);
    if (!m) return null;
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    const step = m[3] === undefined ? 1 : Number(m[3]);
    if (to < from || step < 1 || out.length + (to - from) / step + 1 > MAX_EXPANDED_TASKS) return null;
    for (let i = from; i <= to; i += step) out.push(i);
  }
  return out;
}
