/**
 * Builders for the remote commands erg runs on a login node. Each returns one shell command line
 * (plus, for submissions, what to feed on stdin); every variable part is validated and quoted with
 * shellQuote. The output formats here and the parsers in parse.ts are one contract: change them
 * together.
 *
 * All Slurm queries run under `env TZ=UTC SLURM_TIME_FORMAT=standard SLURM_BITSTR_LEN=0`, so timestamps come back as
 * `YYYY-MM-DDTHH:MM:SS` in UTC whatever the login node's time zone or the user's environment, and
 * `sacct -S` reads our UTC `since` the same way. `env` (rather than `VAR=x cmd`) also works when
 * the login shell is not POSIX.
 */
import { InvalidCommandInputError } from './errors';
import { fenceCheck, type Fence } from './fence';
import { CONTROLLER_NOT_ANSWERING, SITE_LIMIT } from './sbatch-failure';
import { shellQuote } from './shell';

// SLURM_BITSTR_LEN=0: array task lists in full. By default squeue cuts %i at 31 and %K / sacct's
// JobID at 64 characters (`…,42...%1`) — the task list of an array whose tasks were cancelled
// one by one would be misread (test/fixtures/versions/22.05, the fragmented array).
const SLURM_ENV = 'env TZ=UTC SLURM_TIME_FORMAT=standard SLURM_BITSTR_LEN=0';

/** Field separator of squeue/sacct output; job names are the only free text and come last. */
export const FIELD_SEPARATOR = '|';

/**
 * squeue `-o` fields, in order. `%A` is the unique job id (an array task's own id), `%i` the
 * display id (`123_4`), `%F`/`%K` the array job id and task index (`N/A` for plain jobs),
 * `%T` the long state name, `%r` the reason, `%V`/`%S`/`%e` submit/start/end time, `%N` the node
 * list and `%j` the job name — last, and without a width, because squeue does not truncate fields
 * that have no width and a name may contain the separator.
 */
export const SQUEUE_FIELDS = ['%A', '%i', '%F', '%K', '%T', '%r', '%V', '%S', '%e', '%N', '%j'] as const;

/**
 * sacct `-o` fields, in order (all exist in Slurm 22.05). `Comment` is left out on purpose: it is
 * only stored when AccountingStoreFlags=job_comment is set, which erg cannot assume.
 */
export const SACCT_FIELDS = [
  'JobIDRaw',
  'JobID',
  'State',
  'ExitCode',
  'Reason',
  'Submit',
  'Start',
  'End',
  'ElapsedRaw',
  'NodeList',
  // Joules, where an acct_gather_energy plugin measures the nodes; empty without one (22.05, 24.11).
  'ConsumedEnergyRaw',
  'JobName',
] as const;

const USER_PATTERN = /^[A-Za-z0-9._][A-Za-z0-9._-]{0,63}$/;
const JOB_ID_PATTERN = /^[0-9]+(_[0-9]+)?$/;

function userSelector(user: string | undefined): string {
  if (user === undefined) return '--me';
  if (!USER_PATTERN.test(user)) throw new InvalidCommandInputError('user', `${JSON.stringify(user)} is not a user name`);
  return `--user=${shellQuote(user)}`;
}

/**
 * One squeue call over ALL of the user's jobs. Controller load must not grow with the number of
 * runs erg tracks, so erg never asks per job; it filters `erg-` names locally. `--states=all`
 * keeps jobs that finished in the last MinJobAge seconds, so a job does not vanish from view
 * between leaving the queue and reaching sacct.
 */
export function squeueCommand(options: { user?: string } = {}): string {
  const format = SQUEUE_FIELDS.join(FIELD_SEPARATOR);
  return `${SLURM_ENV} squeue ${userSelector(options.user)} --noheader --states=all --format=${shellQuote(format)}`;
}

/** `Date` → `YYYY-MM-DDTHH:MM:SS` in UTC, the form sacct reads under TZ=UTC. */
export function slurmUtcTimestamp(date: Date): string {
  if (Number.isNaN(date.getTime())) throw new InvalidCommandInputError('since', 'is not a valid date');
  return date.toISOString().slice(0, 19);
}

/**
 * Every job state sacct knows. Naming them all changes sacct's selection: without `--state`,
 * `--starttime` selects jobs by *eligible* time, which leaves out jobs that were cancelled while
 * held or waiting for `--begin` (never eligible); with the states listed it selects jobs that were
 * in any state during the window, so those are found too (checked on Slurm 22.05).
 */
export const SACCT_STATES = ['BF', 'CA', 'CD', 'DL', 'F', 'NF', 'OOM', 'PD', 'PR', 'R', 'RQ', 'RS', 'RV', 'S', 'TO'] as const;

/**
 * One sacct call over the user's jobs that were active since `since`: `-X` for allocations only
 * (no job steps), `-P` for `|`-separated untruncated fields, `-n` for no header.
 */
export function sacctCommand(options: { since: Date; user?: string }): string {
  const user = options.user === undefined ? '' : ` ${userSelector(options.user)}`;
  const since = slurmUtcTimestamp(options.since);
  return (
    `${SLURM_ENV} sacct -X -n -P${user} --starttime=${shellQuote(since)} --endtime=now ` +
    `--state=${SACCT_STATES.join(',')} --format=${shellQuote(SACCT_FIELDS.join(','))}`
  );
}

/** scancel for the given job ids (`123` or array task `123_4`). */
export function scancelCommand(jobIds: readonly string[]): string {
  if (jobIds.length === 0) throw new InvalidCommandInputError('jobIds', 'is empty');
  for (const id of jobIds) {
    if (!JOB_ID_PATTERN.test(id)) throw new InvalidCommandInputError('jobIds', `contains ${JSON.stringify(id)}, not a job id`);
  }
  return `scancel ${jobIds.map(shellQuote).join(' ')}`;
}

/** What to run to submit a batch of job scripts over one channel. */
export interface SubmitManyCommand {
  command: string;
  /** The script paths, one per line, fed to the command's stdin. */
  stdin: string;
}

/**
 * One remote command that submits many job scripts in a loop and prints one line per script:
 * `<path>\t<ok|err>\t<job id or error text>`. Paths travel on stdin rather than in the command
 * line, so a batch of a thousand runs is not limited by the SSH request size or ARG_MAX, and no
 * path ever needs quoting. sbatch's stdin is /dev/null so it cannot eat the rest of the list.
 * Each result line is written with one printf, so a dropped channel loses whole lines only.
 *
 * Once a sbatch fails because slurmctld is not answering or a site limit is reached
 * (sbatch-failure.ts), the scripts after it are not sent: each gets `<path>\tskipped\t` and can
 * be submitted again later.
 *
 * With a fence (fence.ts), each sbatch runs only while the cluster's fence still holds this
 * loop's epoch; when it does not, the loop prints `<path>\tfenced\t<epoch found>` and stops, and
 * the paths after it get no line. Without one (tools and tests only) the loop is unfenced.
 */
export function submitManyCommand(scriptPaths: readonly string[], fence: Fence | null): SubmitManyCommand {
  if (scriptPaths.length === 0) throw new InvalidCommandInputError('scriptPaths', 'is empty');
  for (const p of scriptPaths) {
    // Tabs and newlines would break the line protocol; a relative path would depend on the login
    // shell's working directory.
    if (!p.startsWith('/') || /[\t\n\r\0]/.test(p)) {
      throw new InvalidCommandInputError('scriptPaths', `contains ${JSON.stringify(p)}: need an absolute path without tabs or newlines`);
    }
  }
  const fenced = fence ? fenceCheck(fence) : { open: '', before: '', after: '' };
  // After these the rest of the loop is not sent: it would wait out the outage, or be refused by the same limit.
  const notAnswering = [...CONTROLLER_NOT_ANSWERING, ...SITE_LIMIT].map((text) => `*${shellQuote(text)}*`).join('|');
  // One line, no newlines inside the quotes: csh/tcsh login shells reject multi-line quoted strings.
  const script =
    fenced.open +
    'e=$(mktemp) || exit 97; d=; t=$(printf \'\\t\'); n=$(printf \'\\nx\'); n=${n%x}; ' +
    'while IFS= read -r p; do ' +
    `if [ -n "$d" ]; then printf '%s\\tskipped\\t\\n' "$p"; continue; fi; ` +
    fenced.before +
    'if o=$(sbatch --parsable "$p" </dev/null 2>"$e"); then s=ok; else s=err; o=$(cat "$e"); ' +
    `case "$o" in ${notAnswering}) d=1;; esac; fi; ` +
    // Tabs and newlines (multi-line errors) become spaces; a job id has none, so the usual line
    // costs no extra processes.
    `case "$o" in *"$t"*|*"$n"*) o=$(printf '%s' "$o" | tr '\\t\\n' '  ');; esac; ` +
    `printf '%s\\t%s\\t%s\\n' "$p" "$s" "$o"; ` +
    fenced.after +
    'done; rm -f "$e"';
  // Run under sh explicitly: the loop is POSIX sh, whatever the user's login shell is.
  return { command: `sh -c ${shellQuote(script)}`, stdin: scriptPaths.map((p) => `${p}\n`).join('') };
}
