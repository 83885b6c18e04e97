/**
 * Builders for the remote commands erg runs on a login node. Each returns one shell command line;
 * every variable part is validated and quoted with shellQuote. The output formats here and the
 * parsers in parse.ts are one contract: change them together. The sbatch loop that submits a
 * batch of job scripts, with its own line protocol and parser, is submit-loop.ts.
 *
 * All Slurm queries run under `env TZ=UTC SLURM_TIME_FORMAT=standard SLURM_BITSTR_LEN=0`, so timestamps come back as
 * `YYYY-MM-DDTHH:MM:SS` in UTC whatever the login node's time zone or the user's environment, and
 * `sacct -S` reads our UTC `since` the same way. `env` (rather than `VAR=x cmd`) also works when
 * the login shell is not POSIX.
 */
import { InvalidCommandInputError } from './errors';
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
