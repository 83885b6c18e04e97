/**
 * The remote sbatch loop: one command that submits a whole batch of job scripts over one
 * channel, and its line protocol — the shell program (submitManyCommand) and the parser of what
 * it prints (parseSubmitMany) are one contract, kept here together. SlurmClient.submitMany runs it.
 *
 * Protocol: the script paths go in on stdin, one per line; one line comes out per script,
 * `<path>\t<ok|err|skipped|fenced>\t<job id, error text or fence epoch>`. A script without a
 * line (the channel dropped) is `unknown`: a job may exist.
 */
import { DEFAULT_RUN_UMASK, umaskCommand } from '@erg/spec';
import { InvalidCommandInputError, SlurmParseError } from './errors';
import { fenceCheck, type Fence } from './fence';
import { parseSbatchParsable } from './parse';
import { classifySbatchFailure, CONTROLLER_NOT_ANSWERING, SITE_LIMIT } from './sbatch-failure';
import { shellQuote } from './shell';

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
 *
 * The loop runs under `umask` (@erg/spec's run-dir file modes): Slurm gives a job the umask sbatch
 * was called with (SLURM_UMASK), and slurmstepd creates the job's --output and --error files with it.
 */
export function submitManyCommand(scriptPaths: readonly string[], fence: Fence | null, umask: number = DEFAULT_RUN_UMASK): SubmitManyCommand {
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
    `${umaskCommand(umask)}; ` +
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

/** One line of `submitManyCommand()` output. */
export type SubmitResult =
  | { path: string; status: 'ok'; jobId: string; cluster: string | null }
  /** sbatch refused the script: no job was created. */
  | { path: string; status: 'err'; error: string }
  /**
   * No job was created and none can appear later: sbatch could not reach slurmctld, slurmctld
   * said "not now", or the loop did not send the script because slurmctld had stopped answering
   * an earlier one. Submit it again later.
   */
  | { path: string; status: 'unsent'; error: string }
  /**
   * No job was created: a site limit on queued jobs or array size (sbatch-failure.ts SITE_LIMIT).
   * Submit it again once earlier jobs ended, or with fewer at a time.
   */
  | { path: string; status: 'limited'; error: string }
  /**
   * The loop stopped before this script: the cluster's fence holds another epoch (a newer lease
   * took over). No job was created for it or for the scripts after it (those come back `unknown`);
   * their runs belong to the newer lease now.
   */
  | { path: string; status: 'fenced'; fenceEpoch: string }
  /**
   * erg cannot tell whether a job was created (no line for the script because the channel
   * dropped, sbatch gave up waiting for slurmctld's answer, or sbatch said success with output
   * that is not a job id). Look the run up by job name before submitting it again.
   */
  | { path: string; status: 'unknown'; error: string };

function sbatchFailed(path: string, error: string): SubmitResult {
  switch (classifySbatchFailure(error)) {
    case 'refused':
      return { path, status: 'err', error };
    case 'unsent':
      return { path, status: 'unsent', error };
    case 'limited':
      return { path, status: 'limited', error };
    case 'in-doubt':
      return { path, status: 'unknown', error: `sbatch got no answer from slurmctld, which may still create the job: ${error}` };
  }
}

/**
 * Output of `submitManyCommand()` → one result per line. When `expectedPaths` is given, every
 * path without a line is reported as `unknown`, in the order of `expectedPaths`.
 */
export function parseSubmitMany(stdout: string, expectedPaths?: readonly string[]): SubmitResult[] {
  const byPath = new Map<string, SubmitResult>();
  const results: SubmitResult[] = [];
  for (const line of stdout.split('\n')) {
    if (line === '') continue;
    const [path, status, ...rest] = line.split('\t');
    const text = rest.join('\t').trim();
    if (path === undefined || (status !== 'ok' && status !== 'err' && status !== 'fenced' && status !== 'skipped')) {
      throw new SlurmParseError('submit loop', line, 'expected "<path>\\t<ok|err|fenced|skipped>\\t<text>"');
    }
    let result: SubmitResult;
    if (status === 'fenced') {
      result = { path, status: 'fenced', fenceEpoch: text };
    } else if (status === 'skipped') {
      result = { path, status: 'unsent', error: 'not sent: an earlier sbatch of the same loop found slurmctld not answering, or a site limit reached' };
    } else if (status === 'err') {
      result = sbatchFailed(path, text || 'sbatch failed without a message');
    } else {
      try {
        const { jobId, cluster } = parseSbatchParsable(text);
        result = { path, status: 'ok', jobId, cluster };
      } catch {
        result = { path, status: 'unknown', error: `sbatch succeeded but printed ${JSON.stringify(text)}` };
      }
    }
    byPath.set(path, result);
    results.push(result);
  }
  if (!expectedPaths) return results;
  return expectedPaths.map(
    (path) => byPath.get(path) ?? { path, status: 'unknown', error: 'no result from the submit loop (connection lost?)' },
  );
}
