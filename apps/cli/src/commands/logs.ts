// erg logs RUN [--stderr] [--follow]
import type { Command } from 'commander';
import { isTerminalRunState } from '@erg/spec';
import type { RunLogs } from '@erg/client';
import type { CommandContext } from '../context';
import { CliError, EXIT, type ExitCode } from '../errors';
import { withExamples, type Act } from './register';
import { parseId, parseSeconds } from './args';

/** How many leading characters of a new answer are looked up in the previous one. */
const HEAD = 64;

/**
 * Where `current` starts inside `previous`: the smallest p such that previous.slice(p) is a prefix
 * of current (the largest overlap), or null when they do not overlap.
 */
function overlapStart(previous: string, current: string): number | null {
  const head = current.slice(0, HEAD);
  if (head === '') return null;
  for (let p = previous.indexOf(head); p >= 0; p = previous.indexOf(head, p + 1)) {
    if (current.startsWith(previous.slice(p))) return p;
  }
  // An overlap shorter than the head does not contain it: try the last few positions directly.
  for (let p = Math.max(0, previous.length - head.length + 1); p < previous.length; p++) {
    if (current.startsWith(previous.slice(p))) return p;
  }
  return null;
}

/**
 * The part of `current` not yet printed, given that `previous` was. The API returns the tail of
 * each log, so once a log outgrows the tail its start moves: the new text then begins where the
 * end of `previous` overlaps the start of `current`. When they do not overlap (more than a whole
 * tail was written between two polls), everything is new and `skipped` says that output was missed.
 * A log that repeats itself exactly may be matched too early and print less; never twice.
 */
export function newOutput(previous: string, current: string): { text: string; skipped: boolean } {
  if (current.startsWith(previous)) return { text: current.slice(previous.length), skipped: false };
  const p = overlapStart(previous, current);
  if (p !== null) return { text: current.slice(previous.length - p), skipped: false };
  return { text: current, skipped: previous !== '' };
}

interface LogsOptions {
  stderr?: boolean;
  follow?: boolean;
  interval: number;
}

async function logs(ctx: CommandContext, id: string, opts: LogsOptions): Promise<ExitCode> {
  const api = ctx.connect();
  const stream = opts.stderr ? 'stderr' : 'stdout';
  const fetchLogs = () => api.call((c) => c.GET('/v1/runs/{id}/logs', { params: { path: { id } } }));
  if (!opts.follow) {
    const body = await fetchLogs();
    ctx.stdout.write(body[stream]);
    if (body.truncated) ctx.stderr.write(`note: ${stream} is longer than shown; this is its last part\n`);
    return EXIT.OK;
  }
  const controller = new AbortController();
  const stop = ctx.runtime.onInterrupt(() => controller.abort());
  let printed = '';
  try {
    for (;;) {
      // The state first: logs read after the run ended are complete, so the loop may stop then.
      const run = await api.call((c) => c.GET('/v1/runs/{id}', { params: { path: { id } } }));
      const finished = isTerminalRunState(run.state);
      let body: RunLogs | null = null;
      try {
        body = await fetchLogs();
      } catch (err) {
        // 503: the cluster cannot be reached right now; keep following unless the run is over.
        if (!(err instanceof CliError && err.api?.status === 503) || finished) throw err;
      }
      if (body) {
        const { text, skipped } = newOutput(printed, body[stream]);
        if (skipped) ctx.stderr.write('note: some output was written faster than it could be followed and is not shown\n');
        ctx.stdout.write(text);
        printed = body[stream];
      }
      if (finished) {
        ctx.stderr.write(`run ${run.state}${run.exitCode === null ? '' : ` with exit code ${run.exitCode}`}\n`);
        return EXIT.OK;
      }
      await ctx.runtime.sleep(opts.interval * 1000, controller.signal);
    }
  } catch (err) {
    if (controller.signal.aborted) return EXIT.INTERRUPTED;
    throw err;
  } finally {
    stop();
  }
}

export function registerLogs(program: Command, act: Act): void {
  withExamples(
    program
      .command('logs')
      .summary("print a run's output")
      .description("a run's standard output (or error), read live from the cluster or as stored when it finished")
      .argument('<run>', 'run id (erg runs CAMPAIGN lists them)', parseId('run'))
      .option('--stderr', 'show the standard error instead of the standard output')
      .option('-f, --follow', 'keep printing new output until the run finishes')
      .option('--interval <seconds>', 'with --follow: seconds between polls', parseSeconds, 2),
    'erg logs 6f1c2a9e-0b7d-4c1e-9a55-3f2d8e4b7c10',
    'erg logs 6f1c2a9e-0b7d-4c1e-9a55-3f2d8e4b7c10 --stderr --follow',
  ).action(act((ctx, cmd) => logs(ctx, cmd.processedArgs[0] as string, cmd.opts<LogsOptions>())));
}
